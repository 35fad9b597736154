package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// signals: risk and availability signals round-trip with their provenance, one row
// per identity (the last write, within one write and across writes), an offer out of
// stock is kept as a row, filters select by series and time, and an invalid signal
// fails the write.
func (s *suite) signals(t *testing.T) {
	st := s.fresh(t)
	sg, ok := st.(store.Signals)
	if !ok {
		t.Fatalf("%T keeps no signals", st)
	}
	if got, err := sg.Signals(ctx(t), store.SignalQuery{}); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v %v", got, err)
	}
	at := func(h int) time.Time { return T0.Add(time.Duration(h) * time.Hour) }
	band := func(h int, region string, idx float64, label string) schemas.Signal {
		return schemas.Signal{ObservedAt: at(h).Add(90 * time.Second), EffectiveAt: at(h), Provider: "aws",
			SKU: "p5.48xlarge", Region: region, GPU: "H100-SXM-80GB", Kind: schemas.SignalInterruption, Value: idx,
			Label: label, Source: "aws-spot-advisor",
			SourceURL: "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json",
			RunID:     "run-1", Attrs: map[string]string{"savings_pct": "52", "os": "Linux"}}
	}
	stock := func(h int, n float64, label string) schemas.Signal {
		return schemas.Signal{ObservedAt: at(h), EffectiveAt: at(h), Provider: "runpod", SKU: "NVIDIA H100 80GB HBM3",
			Region: "secure", GPU: "H100-SXM-80GB", Kind: schemas.SignalStock, Value: n, Label: label, Source: "runpod",
			RunID: "run-2"}
	}
	// A time with nanoseconds in another zone is stored as its whole UTC second.
	pst := time.FixedZone("PST", -8*3600)
	early := band(-48, "us-east-1", 3, "15-20%")
	early.EffectiveAt = early.EffectiveAt.In(pst).Add(400 * time.Millisecond)
	early.ObservedAt = early.ObservedAt.In(pst)
	first := []schemas.Signal{
		early,
		band(-24, "us-east-1", 2, "10-15%"), // overwritten in this same write
		band(-24, "us-east-1", 4, ">20%"),
		band(-24, "us-west-2", 1, "5-10%"),
		stock(-3, 8, "High"),
		stock(-2, 0, `None "sold out"; 'x'`), // out of stock is a fact
	}
	if err := sg.WriteSignals(ctx(t), first); err != nil {
		t.Fatal(err)
	}
	// The same identity written again, later: the last write wins.
	again := stock(-3, 4, "Low")
	again.RunID = "run-3"
	if err := sg.WriteSignals(ctx(t), []schemas.Signal{again}); err != nil {
		t.Fatal(err)
	}
	bad := band(0, "eu-west-1", -1, "?")
	if err := sg.WriteSignals(ctx(t), []schemas.Signal{band(0, "eu-west-1", 0, "<5%"), bad}); err == nil {
		t.Error("a negative value was stored")
	}
	unknown := stock(0, 1, "High")
	unknown.Kind = "mood"
	if err := sg.WriteSignals(ctx(t), []schemas.Signal{unknown}); err == nil {
		t.Error("an unknown kind was stored")
	}

	wantEarly := early
	wantEarly.EffectiveAt, wantEarly.ObservedAt = at(-48), at(-48).Add(90*time.Second)
	all := []schemas.Signal{wantEarly, first[2], first[3], again, first[5]}
	check := func(what string, q store.SignalQuery, want ...schemas.Signal) {
		t.Helper()
		got, err := sg.Signals(ctx(t), q)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
		}
	}
	check("all", store.SignalQuery{}, all...)
	check("interruption", store.SignalQuery{Kind: schemas.SignalInterruption}, all[:3]...)
	check("us-east-1", store.SignalQuery{Provider: "aws", Region: "us-east-1"}, all[:2]...)
	check("stock of the GPU", store.SignalQuery{GPU: "H100-SXM-80GB", Kind: schemas.SignalStock}, all[3:]...)
	check("last day", store.SignalQuery{Since: at(-24), Until: at(-2)}, all[1], all[2], all[3])
	check("sku", store.SignalQuery{SKU: "p5.48xlarge", Since: at(-47)}, all[1:3]...)
	check("hostile filter", store.SignalQuery{Provider: `aws' OR '1'='1`})
}

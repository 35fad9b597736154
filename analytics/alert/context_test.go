package alert

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

func point(t *testing.T, ps []Point, label string) Point {
	t.Helper()
	for _, p := range ps {
		if p.Label == label {
			return p
		}
	}
	t.Fatalf("no point %q in %+v", label, ps)
	return Point{}
}

// Every kind says what it is about and which figures it compares, with when each
// held.
func TestInstancesCarrySeriesAndComparedFigures(t *testing.T) {
	d1, d8 := t0.Truncate(24*time.Hour).Add(-7*24*time.Hour), t0.Truncate(24*time.Hour)
	days := analytics.Spreads([]analytics.DayPrice{
		dayPrice(d1, "aws", schemas.TierHyperscaler, 4.0), dayPrice(d1, "lambda", schemas.TierSpecialist, 2.5),
		dayPrice(d8, "aws", schemas.TierHyperscaler, 4.5), dayPrice(d8, "lambda", schemas.TierSpecialist, 2.5),
	})
	sp := EvalSpreadShift(Rule{Name: "r", Kind: SpreadShift, GPU: "H100-SXM-80GB", ThresholdPct: 10}, days)[0]
	if sp.Series == nil || *sp.Series != (SeriesRef{GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand}) {
		t.Errorf("spread series %+v", sp.Series)
	}
	for label, want := range map[string]struct {
		at time.Time
		v  float64
	}{"first": {d1, 1.6}, "first_hyperscaler": {d1, 4.0}, "first_specialist": {d1, 2.5},
		"last": {d8, 1.8}, "last_hyperscaler": {d8, 4.5}, "last_specialist": {d8, 2.5}} {
		if p := point(t, sp.Compared, label); !p.At.Equal(want.at) || !near(p.Value, want.v) {
			t.Errorf("spread %s: %+v, want %v at %v", label, p, want.v, want.at)
		}
	}

	// Spot: zone a carried in at 2.0 (bar h(−2)), last close 2.2 (bar h(3)).
	since := t0.Add(-24 * time.Hour)
	h := func(n int) time.Time { return since.Add(time.Duration(n) * time.Hour) }
	bars := []store.Bar{
		spotBar("a", h(-2), 2.0, 2.0, h(-2)), spotBar("a", h(1), 2.2, 2.2, h(1)), spotBar("a", h(2), 2.4, 2.4, h(2)), spotBar("a", h(3), 2.2, 2.2, h(3)),
		spotBar("b", h(5), 3.0, 2.85, h(5)),
	}
	for _, in := range EvalSpotMove(Rule{Name: "s", Kind: SpotMove, ThresholdPct: 8, By: "series"}, bars, since, t0) {
		before, after := point(t, in.Compared, "before"), point(t, in.Compared, "after")
		switch in.Series.Zone {
		case "a":
			if !before.At.Equal(h(-2)) || before.Value != 2.0 || !after.At.Equal(h(3)) || after.Value != 2.2 || before.Unit != "usd_gpu_hour" {
				t.Errorf("zone a compared %+v", in.Compared)
			}
		case "b": // no carried-in bar: the first bar's open
			if !before.At.Equal(h(5)) || before.Value != 3.0 || !after.At.Equal(h(5)) || after.Value != 2.85 {
				t.Errorf("zone b compared %+v", in.Compared)
			}
		default:
			t.Errorf("series %+v", in.Series)
		}
		if in.Series.SKU != "p5.48xlarge" || in.Series.Region != "us-east-1" || in.Series.Provider != "aws" || in.Series.Pricing != schemas.Spot {
			t.Errorf("spot series %+v", in.Series)
		}
	}
	off := EvalSpotMove(Rule{Name: "o", Kind: SpotMove, ThresholdPct: 1}, bars, since, t0)[0]
	if before, after := point(t, off.Compared, "before"), point(t, off.Compared, "after"); !near(before.Value, 2.5) || !before.At.Equal(h(-2)) ||
		!near(after.Value, (2.2+2.85)/2) || !after.At.Equal(h(5)) || *off.Series != (SeriesRef{GPU: "H100-SXM-80GB", Provider: "aws", Pricing: schemas.Spot}) {
		t.Errorf("offering: %+v %+v", off.Series, off.Compared)
	}

	eff := t0.Add(-3 * time.Hour)
	latest := []schemas.Observation{{Provider: "gmi", SKU: "x", Region: "us-west", GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand,
		PriceUSDGPUHour: 1.99, EffectiveAt: eff}}
	pb := EvalPriceBelow(Rule{Name: "p", Kind: PriceBelow, GPU: "H100-SXM-80GB", BelowUSDGPUHour: 2}, latest)[0]
	if c := point(t, pb.Compared, "cheapest"); c.Value != 1.99 || !c.At.Equal(eff) ||
		*pb.Series != (SeriesRef{GPU: "H100-SXM-80GB", Provider: "gmi", Pricing: schemas.OnDemand, Region: "us-west", SKU: "x"}) {
		t.Errorf("price_below %+v %+v", pb.Series, pb.Compared)
	}

	f := schemas.Run{Status: schemas.RunFailed, StartedAt: t0}
	sf := EvalSourceFailed(Rule{Name: "down", Kind: SourceFailed, Runs: 2}, map[string][]schemas.Run{"aws": {f, f}})[0]
	if len(sf.Compared) != 2 || sf.Compared[0].Label != "failed_run" || !sf.Compared[0].At.Equal(t0) || sf.Series.Source != "aws" {
		t.Errorf("source_failed %+v %+v", sf.Series, sf.Compared)
	}
}

func TestViewURL(t *testing.T) {
	in := Instance{Kind: PriceBelow, Series: &SeriesRef{GPU: "H100-SXM-80GB", Provider: "gmi", Pricing: "on_demand", Region: "us west", SKU: "x"}}
	if got := ViewURL("https://gpuprice.example.com/", in); got != "https://gpuprice.example.com/series?gpu=H100-SXM-80GB&pricing=on_demand&provider=gmi&region=us+west&sku=x" {
		t.Errorf("series URL %q", got)
	}
	if got := ViewURL("https://gpuprice.example.com/app", Instance{Kind: SpreadShift, Series: &SeriesRef{GPU: "B200", Pricing: "spot"}}); got != "https://gpuprice.example.com/app/series?gpu=B200&pricing=spot" {
		t.Errorf("spread URL %q", got)
	}
	if got := ViewURL("http://h:8080", Instance{Kind: SourceFailed, Series: &SeriesRef{Source: "aws"}}); got != "http://h:8080/sources?source=aws" {
		t.Errorf("source URL %q", got)
	}
	if got := ViewURL("", in); got != "" {
		t.Errorf("no public URL: %q", got)
	}
}

func TestPayloadsCarrySeriesComparedThresholdAndLink(t *testing.T) {
	link := "https://gpuprice.example.com/series?gpu=H100-SXM-80GB&pricing=spot&provider=aws&region=us-east-1"
	ev := []Event{{Status: StatusFiring, Rule: "swing", Kind: SpotMove, Summary: "H100-SXM-80GB aws spot: spot price moved +20.00 %",
		Value: 20, Threshold: 15, Unit: "pct", Labels: map[string]string{"alertname": "swing"}, StartsAt: t0,
		Series: &SeriesRef{GPU: "H100-SXM-80GB", Provider: "aws", Pricing: "spot", Region: "us-east-1", Zone: "us-east-1a"},
		Compared: []Point{{Label: "before", At: t0.Add(-2 * time.Hour), Value: 3, Unit: "usd_gpu_hour"},
			{Label: "after", At: t0.Add(-time.Hour), Value: 3.6, Unit: "usd_gpu_hour"}},
		URL: link}}
	want := ":rotating_light: FIRING *swing* H100-SXM-80GB aws spot: spot price moved +20.00 %\n" +
		">compared: before $3.0000/GPU-h at 2025-03-10T10:00Z; after $3.6000/GPU-h at 2025-03-10T11:00Z; threshold ±15 %\n" +
		">series: gpu=H100-SXM-80GB provider=aws pricing=spot region=us-east-1 zone=us-east-1a <" + link + "|view in gpuprice>"
	if got := SlackText(ev); got != want {
		t.Errorf("slack:\n%s\nwant:\n%s", got, want)
	}
	am := AMAlerts(ev, t0, time.Hour)[0]
	var compared []Point
	if err := json.Unmarshal([]byte(am.Annotations["compared_json"]), &compared); err != nil || len(compared) != 2 || compared[1].Value != 3.6 {
		t.Errorf("compared_json %q: %v", am.Annotations["compared_json"], err)
	}
	if am.GeneratorURL != link || am.Annotations["url"] != link || am.Annotations["threshold"] != "15" ||
		am.Annotations["series"] != "gpu=H100-SXM-80GB provider=aws pricing=spot region=us-east-1 zone=us-east-1a" ||
		!strings.Contains(am.Annotations["compared"], "before $3.0000/GPU-h at 2025-03-10T10:00Z") {
		t.Errorf("alertmanager %+v", am)
	}
	b, _ := json.Marshal(ev[0])
	for _, key := range []string{`"series":{"gpu":"H100-SXM-80GB"`, `"compared":[{"label":"before","at":"2025-03-10T10:00:00Z","value":3`, `"threshold":15`, `"url":"https://`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("webhook event lacks %s: %s", key, b)
		}
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || back.URL != link || back.Series.Zone != "us-east-1a" || len(back.Compared) != 2 {
		t.Errorf("webhook event read back: %+v %v", back, err)
	}
}

// recordingReader serves fixed prices and runs and notes what it was asked.
type recordingReader struct {
	filters []store.Filter
	runs    []schemas.Run
	limits  []int
}

func (r *recordingReader) Bars(context.Context, store.BarQuery) ([]store.Bar, error) { return nil, nil }
func (r *recordingReader) Latest(_ context.Context, f store.Filter) ([]schemas.Observation, error) {
	r.filters = append(r.filters, f)
	return nil, nil
}
func (r *recordingReader) Runs(_ context.Context, _ string, limit int) ([]schemas.Run, error) {
	r.limits = append(r.limits, limit)
	if limit > 0 && limit < len(r.runs) {
		return r.runs[:limit], nil
	}
	return r.runs, nil
}

// Evaluating as of a past time reads the prices in force then and the runs
// started by then.
func TestEvaluateAsOf(t *testing.T) {
	var runs []schemas.Run // newest first: three ok runs after t0, three failed before
	for i := 0; i < 3; i++ {
		runs = append(runs, schemas.Run{Source: "aws", Status: schemas.RunOK, StartedAt: t0.Add(time.Duration(3-i) * time.Hour)})
	}
	for i := 0; i < 3; i++ {
		runs = append(runs, schemas.Run{Source: "aws", Status: schemas.RunFailed, StartedAt: t0.Add(-time.Duration(i) * time.Hour)})
	}
	rd := &recordingReader{runs: runs}
	rules := []Rule{{Name: "p", Kind: PriceBelow, GPU: "H100-SXM-80GB", BelowUSDGPUHour: 2}, {Name: "down", Kind: SourceFailed, Source: "aws", Runs: 3}}
	res := Evaluate(context.Background(), rd, rules, nil, t0)
	if len(rd.filters) != 1 || !rd.filters[0].Until.Equal(t0.Add(time.Second)) {
		t.Errorf("price_below read %+v, want prices effective by %v", rd.filters, t0)
	}
	if in := res[1].Instances; len(in) != 1 || !in[0].Firing || in[0].Value != 3 || len(rd.limits) < 2 {
		t.Errorf("source_failed as of t0: %+v (read limits %v)", in, rd.limits)
	}
	now := Evaluate(context.Background(), rd, rules[1:], nil, t0.Add(4*time.Hour))
	if in := now[0].Instances; len(in) != 1 || in[0].Firing || in[0].Value != 0 {
		t.Errorf("source_failed now: %+v", in)
	}
}

// A run under way (its record says started) has no outcome yet: the failures before
// it still count, so a firing source_failed does not resolve while the next run is
// in progress.
func TestSourceFailedSkipsARunUnderWay(t *testing.T) {
	runs := []schemas.Run{{Source: "aws", Status: schemas.RunStarted, StartedAt: t0}}
	for i := 1; i <= 3; i++ {
		runs = append(runs, schemas.Run{Source: "aws", Status: schemas.RunFailed, StartedAt: t0.Add(-time.Duration(i) * time.Hour)})
	}
	rd := &recordingReader{runs: runs}
	res := Evaluate(context.Background(), rd, []Rule{{Name: "down", Kind: SourceFailed, Source: "aws", Runs: 3}}, nil, t0)
	if in := res[0].Instances; len(in) != 1 || !in[0].Firing || in[0].Value != 3 {
		t.Errorf("source_failed with a run under way: %+v", in)
	}
}

package vast

import (
	"context"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// signalsOf runs the registered Info.Signals over rows, keeping one signal per
// (sku, kind): the on-demand and spot rows of an offer state the same.
func signalsOf(t *testing.T, rows []schemas.Observation) map[string]schemas.Signal {
	t.Helper()
	info, _, _ := scrapers.Lookup(Name)
	if info.Signals == nil {
		t.Fatal("vast registers no Info.Signals")
	}
	out := map[string]schemas.Signal{}
	for _, o := range rows {
		for _, s := range info.Signals(o) {
			k := s.SKU + "|" + s.Kind
			if prev, ok := out[k]; ok && (prev.Value != s.Value || prev.Region != s.Region) {
				t.Errorf("%s: the rows of one offer state %v and %v", k, prev.Value, s.Value)
			}
			out[k] = s
		}
	}
	return out
}

// The recorded mixed_gpus answer: 14 offers, all rentable and not rented (the
// default query asks for those). Each offer's stock is its num_gpus and its
// reliability its reliability2, counted by hand from testdata/mixed_gpus/input.json.
func TestOfferSignalsMixedGPUs(t *testing.T) {
	rows, err := parseRows(scrapertest.ReadFile(t, "testdata/mixed_gpus/input.json"))
	if err != nil {
		t.Fatal(err)
	}
	sigs := signalsOf(t, rows)
	wantStock := map[string]float64{
		"vast:148199:1x": 1, "vast:59380:1x": 1, // H100 SXM
		"vast:31855:1x": 1, "vast:31855:2x": 2, "vast:31855:8x": 8, // RTX 4090 slices of one machine
		"vast:41402:1x": 1, "vast:61190:1x": 1, // RTX 4090 (61190: dph_base 0, still rentable)
		"vast:22390:8x": 8, "vast:22390:1x": 1, // A100 SXM4
		"vast:17221:1x": 1, "vast:52004:1x": 1, "vast:47310:4x": 4, "vast:45110:8x": 8, "vast:60012:1x": 1,
	}
	wantRel := map[string]float64{
		"vast:148199:1x": 0.9089707, "vast:59380:1x": 0.9987007, "vast:31855:8x": 0.9974, "vast:41402:1x": 0.9691,
		"vast:22390:8x": 0.9981, "vast:17221:1x": 0.9912, "vast:52004:1x": 0.9855, "vast:47310:4x": 0.9993,
		"vast:45110:8x": 0.9996, "vast:60012:1x": 0.9402, "vast:61190:1x": 0.71,
	}
	var stock, total float64
	for _, s := range sigs {
		if s.Kind == schemas.SignalStock {
			stock++
			total += s.Value
		}
	}
	if stock != 14 || total != 39 {
		t.Errorf("%v stock signals holding %v GPUs, want 14 offers holding 39", stock, total)
	}
	for sku, want := range wantStock {
		s, ok := sigs[sku+"|"+schemas.SignalStock]
		if !ok || s.Value != want || s.Attrs["unit"] != UnitGPUs || s.Label != "" || s.Provider != "vast" {
			t.Errorf("%s stock = %+v, want %v gpus", sku, s, want)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", sku, err)
		}
	}
	for sku, want := range wantRel {
		if s := sigs[sku+"|"+schemas.SignalReliability]; s.Value != want {
			t.Errorf("%s reliability = %v, want %v", sku, s.Value, want)
		}
	}
	h := sigs["vast:148199:1x|"+schemas.SignalStock]
	if h.Region != "US" || h.Attrs["gpu_name"] != "H100 SXM" || h.Attrs["gpu_memory_gb"] != "79.65" ||
		h.Attrs["machine_id"] != "148199" || h.Attrs["offer_id"] != "48285735" ||
		!h.EffectiveAt.Equal(scrapertest.ObservedAt) {
		t.Errorf("H100 stock signal = %+v", h)
	}
	if r := sigs["vast:60012:1x|"+schemas.SignalStock]; r.Region != "" {
		t.Errorf("offer without geolocation: region %q", r.Region)
	}
}

// An offer rented or not rentable has a stock of 0 (a fact of its history, not a
// missing row); one that does not say has none; a GPU name whose offers are all
// taken has a depth of 0.
func TestOfferSignalsTaken(t *testing.T) {
	res, depth, err := parseAnswer(strings.NewReader(`{"offers":[
		{"id":1,"machine_id":71,"gpu_name":"RTX 4090","num_gpus":2,"gpu_ram":24564,"dph_total":0.6,"reliability2":0.99,"rentable":true,"rented":true},
		{"id":2,"machine_id":72,"gpu_name":"RTX 4090","num_gpus":4,"gpu_ram":24564,"dph_total":1.2,"rentable":false,"rented":false},
		{"id":3,"machine_id":73,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":0.3},
		{"id":4,"machine_id":74,"gpu_name":"L40S","num_gpus":1,"gpu_ram":46068,"dph_total":0.9,"rentable":true,"rented":false},
		{"id":5,"gpu_name":"L40S","num_gpus":1,"gpu_ram":46068,"dph_total":0.9,"rentable":true,"rented":false}]}`), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	sigs := signalsOf(t, res.Rows)
	for sku, want := range map[string]float64{"vast:71:2x": 0, "vast:72:4x": 0, "vast:74:1x": 1} {
		if s, ok := sigs[sku+"|"+schemas.SignalStock]; !ok || s.Value != want {
			t.Errorf("%s stock = %+v, want %v", sku, s, want)
		}
	}
	if _, ok := sigs["vast:73:1x|"+schemas.SignalStock]; ok {
		t.Error("an offer stating neither rentable nor rented has a stock signal")
	}
	if _, ok := sigs["vast:72:4x|"+schemas.SignalReliability]; ok {
		t.Error("an offer without reliability2 has a reliability signal")
	}
	// RTX 4090: none of its three offers can be rented now. L40S: two, one of them
	// without a machine id (rejected as a price row, still on the market).
	if len(depth) != 2 || depth["RTX 4090"] != 0 || depth["L40S"] != 2 {
		t.Errorf("depth = %v, want RTX 4090 0 and L40S 2", depth)
	}
}

func TestDepthSignals(t *testing.T) {
	for _, c := range []struct {
		file string
		want map[string]float64
	}{
		// Hand-counted from the fixtures (offers per gpu_name, all rentable, not rented).
		{"testdata/mixed_gpus/input.json", map[string]float64{"H100 SXM": 3, "RTX 4090": 5, "A100 SXM4": 2,
			"A100 PCIE": 1, "RTX 3090": 1, "L40S": 1, "RTX 5090": 1}},
		{"testdata/reference_h100_sxm/input.json", map[string]float64{"H100 SXM": 2}},
		// The two offers without a machine id are H100 SXM too.
		{"testdata/no_machine_id/input.json", map[string]float64{"H100 SXM": 2, "RTX 4090": 1}},
		{"testdata/empty/input.json", map[string]float64{}},
	} {
		t.Run(c.file, func(t *testing.T) {
			_, depth, err := parseAnswer(strings.NewReader(string(scrapertest.ReadFile(t, c.file))), scrapertest.ObservedAt)
			if err != nil {
				t.Fatal(err)
			}
			sigs := depthSignals(depth, scrapertest.ObservedAt, "https://console.vast.ai/api/v0/bundles/?q=x")
			if len(sigs) != len(c.want) {
				t.Errorf("%d depth signals, want %d: %+v", len(sigs), len(c.want), sigs)
			}
			for i, s := range sigs {
				name := strings.TrimPrefix(s.SKU, DepthSKUPrefix)
				if want, ok := c.want[name]; !ok || s.Value != want || s.Kind != schemas.SignalDepth ||
					s.Region != "" || s.Attrs["gpu_name"] != name || s.Provider != "vast" {
					t.Errorf("depth signal %+v, want %s = %v", s, name, want)
				}
				if i > 0 && sigs[i-1].SKU >= s.SKU {
					t.Errorf("depth signals not sorted: %s before %s", sigs[i-1].SKU, s.SKU)
				}
				if err := s.Validate(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// Hostile GPU names (issue 29) reach the depth series cleaned as ingest cleans the
// rows' names: no control or bidi character in a SKU.
func TestDepthSignalsHostile(t *testing.T) {
	_, depth, err := parseAnswer(strings.NewReader(string(scrapertest.ReadFile(t, "testdata/hostile/input.json"))), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, s := range depthSignals(depth, scrapertest.ObservedAt, "") {
		if textsafe.Clean(s.SKU, textsafe.MaxKey) != s.SKU {
			t.Errorf("depth SKU %q is not clean", s.SKU)
		}
		n += s.Value
	}
	if n != 25 {
		t.Errorf("depth sums to %v, want the 25 offers", n)
	}
}

// Collect sends the depth of the answer through scrapers.EmitSignals, with the
// request URL and the fetch time.
func TestCollectDepth(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/mixed_gpus/input.json"}}})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Rows) != 27 || len(sink.Signals) != 7 {
		t.Fatalf("rows %d, signals %d; want 27 and 7 depth signals", len(sink.Rows), len(sink.Signals))
	}
	for _, s := range sink.Signals {
		if s.Kind != schemas.SignalDepth || !strings.HasPrefix(s.SourceURL, srv.URL+apiPath+"?q=") ||
			!s.EffectiveAt.Equal(scrapertest.ObservedAt) {
			t.Errorf("signal %+v", s)
		}
	}
	if s := sink.Signals[2]; s.SKU != "depth:H100 SXM" || s.Value != 3 {
		t.Errorf("third depth signal (sorted) = %s %v, want depth:H100 SXM 3", s.SKU, s.Value)
	}
	// A stock signal read from an emitted row carries that row's source URL.
	if sigs := signalsOf(t, sink.Rows); !strings.HasPrefix(sigs["vast:45110:8x|stock"].SourceURL, srv.URL) {
		t.Errorf("stock signal source URL %q", sigs["vast:45110:8x|stock"].SourceURL)
	}
}

package vast

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

const apiPath = "/api/v0/bundles/"

func TestParseOffers(t *testing.T) {
	scrapertest.GoldenCases(t, "testdata/*/input.json", func(_ string, data []byte) (scrapers.Result, error) {
		return parseOffers(bytes.NewReader(data), scrapertest.ObservedAt)
	})
}

// parseRows is parseOffers' rows.
func parseRows(data []byte) ([]schemas.Observation, error) {
	res, err := parseOffers(bytes.NewReader(data), scrapertest.ObservedAt)
	return res.Rows, err
}

func TestParseOffersRules(t *testing.T) {
	data, err := os.ReadFile("testdata/reference_h100_sxm/input.json")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseRows(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("rows = %d, want on-demand and spot for each of 2 offers", len(rows))
	}
	od, sp := rows[0], rows[1]
	if od.SKU != "vast:148199:1x" || od.Pricing != schemas.OnDemand || od.PriceNative != 1.3867407407407408 ||
		od.Region != "US" || od.GPUName != "H100 SXM" || od.GPUCount != 1 || od.GPUMemoryGB != 79.65 ||
		od.Unit != schemas.UnitHour || od.Currency != "USD" {
		t.Errorf("on-demand row = %+v", od)
	}
	if sp.SKU != od.SKU || sp.Pricing != schemas.Spot || sp.PriceNative != 0.39999999999999997 {
		t.Errorf("spot row = %+v", sp)
	}
	if od.Attrs["reliability2"] != "0.9089707" || od.Attrs["verification"] != "unverified" ||
		od.Attrs["machine_id"] != "148199" || od.Attrs["host_id"] != "635532" || od.Attrs["geolocation"] != ", US" {
		t.Errorf("attrs = %v", od.Attrs)
	}
	if rows[2].Region != "US" || rows[2].Attrs["geolocation"] != "Washington, US" {
		t.Errorf("second offer region = %q", rows[2].Region)
	}

	data, err = os.ReadFile("testdata/mixed_gpus/input.json")
	if err != nil {
		t.Fatal(err)
	}
	rows, err = parseRows(data)
	if err != nil {
		t.Fatal(err)
	}
	var zero, noBid, slices int
	skus := map[string]bool{}
	for _, o := range rows {
		skus[o.SeriesKey()] = true
		if o.PriceNative == 0 {
			zero++
		}
		if strings.HasPrefix(o.SKU, "vast:31855:") {
			slices++
		}
		if o.SKU == "vast:60012:1x" && o.Pricing == schemas.Spot {
			t.Errorf("spot row for an offer without min_bid: %+v", o)
		}
		if o.SKU == "vast:60012:1x" {
			noBid++
			if o.Region != "" {
				t.Errorf("region of an offer without geolocation = %q", o.Region)
			}
		}
	}
	if zero != 2 || noBid != 1 || slices != 6 {
		t.Errorf("zero-price rows %d (want 2: the offer at dph_base 0, on demand and its spot bid of 0), rows of the offer without min_bid %d (want 1), rows of the 3 slices %d (want 6)", zero, noBid, slices)
	}
	if len(skus) != len(rows) {
		t.Errorf("%d rows share %d series: series must be distinct", len(rows), len(skus))
	}
}

// TestNVLinkInterconnect: each offer's bw_nvlink is kept in Attrs, and an offer of
// more than one GPU on a machine that measures NVLink bandwidth is nvlink-only; the
// others leave the interconnect to ingest (the provider's ethernet for several GPUs,
// unknown for one). On mixed_gpus: 8× H100 SXM and 8× A100 SXM4 at 478.1 are
// nvlink-only; 8× and 2× RTX 4090 and 4× L40S at 0 are not; the single H100 SXM at
// 478.1 has no peer GPU and is not.
func TestNVLinkInterconnect(t *testing.T) {
	rows, err := parseRows(scrapertest.ReadFile(t, "testdata/mixed_gpus/input.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ bw, interconnect string }{
		"vast:45110:8x":  {"478.116088867", schemas.InterconnectNVLinkOnly},
		"vast:22390:8x":  {"478.116088867", schemas.InterconnectNVLinkOnly},
		"vast:22390:1x":  {"478.116088867", ""},
		"vast:148199:1x": {"478.116088867", ""},
		"vast:31855:8x":  {"0", ""},
		"vast:31855:2x":  {"0", ""},
		"vast:47310:4x":  {"0", ""},
		"vast:31855:1x":  {"0", ""},
	}
	seen := map[string]int{}
	for _, o := range rows {
		w, ok := want[o.SKU]
		if !ok {
			if o.Interconnect != "" {
				t.Errorf("%s %s: interconnect %q", o.SKU, o.Pricing, o.Interconnect)
			}
			continue
		}
		seen[o.SKU]++
		if o.Attrs["bw_nvlink"] != w.bw || o.Interconnect != w.interconnect {
			t.Errorf("%s %s: bw_nvlink %q, interconnect %q; want %q, %q", o.SKU, o.Pricing, o.Attrs["bw_nvlink"],
				o.Interconnect, w.bw, w.interconnect)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("offers seen %v, want every one of %d", seen, len(want))
	}
	// An offer without the field states no NVLink: ingest's default.
	n := int64(1)
	if got := interconnect(offer{MachineID: &n, NumGPUs: 8}); got != "" {
		t.Errorf("8 GPUs without bw_nvlink: %q", got)
	}
}

func TestCountry(t *testing.T) {
	s := func(v string) *string { return &v }
	for in, want := range map[*string]string{nil: "", s(""): "", s("Texas, US"): "US", s(", US"): "US", s("US"): "US", s("Quebec, Canada, CA "): "CA"} {
		if got := country(in); got != want {
			t.Errorf("country(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestRegistered(t *testing.T) {
	info, f, ok := scrapers.Lookup(Name)
	if !ok || f == nil {
		t.Fatal("vast is not registered")
	}
	if info.Provider != "vast" || info.Schedule != "*/10 * * * *" {
		t.Errorf("info = %+v", info)
	}
	src, err := f(scrapertest.Config(t, Name, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	if e := src.(scrapers.Expecter).Expect(); e.MinRows < 100 {
		t.Errorf("expectation = %+v", e)
	}
}

func TestOptions(t *testing.T) {
	if _, err := New(scrapertest.Config(t, Name, "", map[string]any{"querry": map[string]any{}})); err == nil {
		t.Error("unknown option accepted")
	}
	if _, err := New(scrapertest.Config(t, Name, "", map[string]any{"query": map[string]any{}})); err == nil {
		t.Error("empty query accepted")
	}
	if _, err := New(scrapertest.Config(t, Name, "", map[string]any{"query": "gpu_name=RTX_4090"})); err == nil {
		t.Error("non-object query accepted")
	}
}

func TestCollect(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/mixed_gpus/input.json"}}})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	var q map[string]any
	if err := json.Unmarshal([]byte(srv.Reqs[0].URL.Query().Get("q")), &q); err != nil {
		t.Fatalf("q parameter: %v", err)
	}
	if q["type"] != "on-demand" || q["limit"] != float64(DefaultLimit) {
		t.Errorf("query = %v", q)
	}
	if len(sink.Rows) != 27 {
		t.Errorf("rows = %d, want 27 (14 offers, one without min_bid)", len(sink.Rows))
	}
	for _, o := range sink.Rows {
		if !strings.HasPrefix(o.SourceURL, srv.URL+apiPath+"?q=") {
			t.Errorf("source URL %q", o.SourceURL)
		}
	}
	if e := src.(scrapers.Expecter).Expect(); e.MinRows != 500 {
		t.Errorf("expectation = %+v", e)
	}
}

func TestCollectQueryOverride(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/empty/input.json"}}})
	want := map[string]any{"gpu_name": map[string]any{"eq": "RTX 4090"}, "type": "bid"}
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, map[string]any{"query": want}))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if got := srv.Reqs[0].URL.Query().Get("q"); got != `{"gpu_name":{"eq":"RTX 4090"},"type":"bid"}` {
		t.Errorf("q = %s", got)
	}
	if len(sink.Rows) != 0 {
		t.Errorf("rows = %d from an empty offer list", len(sink.Rows))
	}
	if e := src.(scrapers.Expecter).Expect(); e.MinRows != 1 {
		t.Errorf("expectation with a query = %+v", e)
	}
}

func TestCollectRetriesThenSucceeds(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {
		{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}},
		{File: "testdata/reference_h100_sxm/input.json"},
	}})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if srv.Hits[apiPath] != 2 || len(sink.Rows) != 4 {
		t.Errorf("hits %d, rows %d; want 2 and 4", srv.Hits[apiPath], len(sink.Rows))
	}
}

func TestCollectFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		route scrapertest.Route
		is    error
		msg   string
	}{
		{"500 forever", scrapertest.Route{Status: http.StatusInternalServerError}, fetch.ErrStatus, "HTTP 500"},
		{"429 forever", scrapertest.Route{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}}, fetch.ErrStatus, "HTTP 429"},
		{"malformed", scrapertest.Route{File: "testdata/malformed/input.json"}, nil, "decoding response"},
		{"error body", scrapertest.Route{File: "testdata/error_body/input.json"}, nil, "no offers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {c.route}})
			src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
			if err != nil {
				t.Fatal(err)
			}
			var sink scrapertest.Sink
			err = src.Collect(context.Background(), &sink)
			if err == nil || !strings.HasPrefix(err.Error(), "vast: ") || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err = %v, want one containing %q", err, c.msg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("err = %v, want errors.Is %v", err, c.is)
			}
			if len(sink.Rows) != 0 {
				t.Errorf("rows emitted on failure: %d", len(sink.Rows))
			}
		})
	}
}

func FuzzParseOffers(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/input.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := parseRows(data)
		if err == nil && rows == nil {
			t.Error("nil rows without an error")
		}
	})
}

// An offer without a machine id is rejected with the reason, never collapsed into
// a "vast:0" series with the others.
func TestOfferWithoutMachineIDRejected(t *testing.T) {
	res, err := parseOffers(strings.NewReader(`{"offers":[
		{"id":1,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":0.4},
		{"id":2,"machine_id":0,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":0.5},
		{"id":3,"machine_id":77,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":0.6}]}`), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].SKU != "vast:77:1x" || len(res.Rejects) != 2 ||
		!strings.Contains(res.Rejects[0].Reason, "offer 1 has no machine_id") || !strings.Contains(res.Rejects[1].Reason, "offer 2") {
		t.Errorf("rows %+v rejects %+v", res.Rows, res.Rejects)
	}
}

func TestOfferWithNonNumericPriceRejectedAlone(t *testing.T) {
	res, err := parseOffers(strings.NewReader(`{"offers":[
		{"id":1,"machine_id":76,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":"N/A"},
		{"id":3,"machine_id":77,"gpu_name":"RTX 4090","num_gpus":1,"gpu_ram":24564,"dph_total":0.6}]}`), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0].SKU != "vast:77:1x" || len(res.Rejects) != 1 ||
		!strings.Contains(res.Rejects[0].Reason, "offer not readable") || !strings.Contains(res.Rejects[0].Raw, `"N/A"`) {
		t.Errorf("rows %+v rejects %+v", res.Rows, res.Rejects)
	}
}

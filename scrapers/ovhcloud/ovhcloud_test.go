package ovhcloud

import (
	"bytes"
	"context"
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

const apiPath = "/1.0/order/catalog/public/cloud"

// subsidiaryOf is the subsidiary a fixture is the catalog of.
func subsidiaryOf(path string) string {
	if strings.Contains(path, "_us") {
		return "US"
	}
	return "FR"
}

func TestParseCatalog(t *testing.T) {
	scrapertest.GoldenCases(t, "testdata/*/input.json", func(path string, data []byte) (result, error) {
		return parseCatalog(bytes.NewReader(data), subsidiaryOf(path), scrapertest.ObservedAt)
	})
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustParse(t *testing.T, path string) result {
	t.Helper()
	res, err := parseCatalog(bytes.NewReader(readFile(t, path)), subsidiaryOf(path), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func rowsOf(rows []schemas.Observation, sku, pricing string) []schemas.Observation {
	var out []schemas.Observation
	for _, o := range rows {
		if o.SKU == sku && o.Pricing == pricing {
			out = append(out, o)
		}
	}
	return out
}

func one(t *testing.T, rows []schemas.Observation, sku, pricing string) schemas.Observation {
	t.Helper()
	rs := rowsOf(rows, sku, pricing)
	if len(rs) != 1 {
		t.Fatalf("%s %s: %d rows, want 1", sku, pricing, len(rs))
	}
	return rs[0]
}

func TestParseCatalogRules(t *testing.T) {
	res := mustParse(t, "testdata/catalog_fr/input.json")
	if res.Skipped[skipNotGPU] != 4 || res.Skipped[skipWindows] != 1 || res.Skipped[skipMonthlyStub] != 1 || len(res.Rejects) != 0 {
		t.Errorf("skipped %v, rejected %v; want 4 not_gpu (project, b2-7, snapshot, ai-training), 1 windows, 1 monthly stub", res.Skipped, res.Rejects)
	}
	h := one(t, res.Rows, "h100-380", schemas.OnDemand)
	if h.PriceNative != 2.80 || h.Unit != schemas.UnitHour || h.Currency != "EUR" || h.GPUName != "H100" || h.GPUCount != 1 || h.GPUMemoryGB != 80 || h.Region != "" {
		t.Errorf("h100-380 hourly = %+v", h)
	}
	m := one(t, res.Rows, "h100-380", schemas.CommitmentPricing(1))
	if m.PriceNative != 1940 || m.Unit != schemas.UnitMonth || m.Attrs["planCode"] != "h100-380.monthly.postpaid" {
		t.Errorf("h100-380 monthly = %+v", m)
	}
	if h200 := one(t, res.Rows, "h200-1920", schemas.OnDemand); h200.PriceNative != 42 || h200.GPUCount != 8 || h200.GPUMemoryGB != 141 {
		t.Errorf("h200-1920 = %+v", h200)
	}
	l4 := rowsOf(res.Rows, "l4-90", schemas.OnDemand)
	if len(l4) != 3 || l4[0].Region != "GRA11" || l4[2].Region != "WAW1" {
		t.Errorf("l4-90 hourly rows = %+v, want one per listed region", l4)
	}
	if le := one(t, res.Rows, "t1-le-45", schemas.OnDemand); le.Attrs["legacy"] != "true" || le.Attrs["tags"] != "active,legacy" {
		t.Errorf("legacy flavour attrs = %v", le.Attrs)
	}
	if soon := one(t, res.Rows, "a10-45", schemas.OnDemand); soon.Attrs["tags"] != "coming_soon" || soon.PriceNative != 0.76 {
		t.Errorf("coming soon flavour = %+v", soon)
	}
	for _, o := range res.Rows {
		if strings.HasPrefix(o.SKU, "win-") || strings.HasPrefix(o.SKU, "ai-") || o.SKU == "b2-7" {
			t.Errorf("row %s should have been left out", o.SKU)
		}
		if o.Attrs["price_raw"] == "" || o.SourceKind != schemas.SourceAPI {
			t.Errorf("row %s lacks the raw price or source kind", o.SKU)
		}
	}

	res = mustParse(t, "testdata/odd_plans/input.json")
	if sp := one(t, res.Rows, "h100-380", schemas.CommitmentPricing(12)); sp.PriceNative != 1.96 || sp.Unit != schemas.UnitHour {
		t.Errorf("savings plan = %+v", sp)
	}
	if z := one(t, res.Rows, "l40s-90", schemas.OnDemand); z.PriceNative != 0 {
		t.Errorf("zero price = %+v, want emitted as 0", z)
	}
	if u := one(t, res.Rows, "h100-380", "ovhcloud:hourly.prepaid"); schemas.ValidPricing(u.Pricing) {
		t.Errorf("unknown billing mode = %+v, want a pricing ingest rejects", u)
	}
	if l4 := one(t, res.Rows, "l4-180", schemas.OnDemand); l4.PriceNative != 2 {
		t.Errorf("installation fee not set aside: %+v", l4)
	}
	if t2 := one(t, res.Rows, "t2-180", schemas.OnDemand); t2.GPUName != "" || t2.GPUCount != 0 {
		t.Errorf("GPU family without blobs = %+v", t2)
	}
	reasons := map[string]bool{}
	for _, r := range res.Rejects {
		for _, want := range []string{"a100-180.consumption: no usable pricing", "h100-760.consumption: price", "t2-90.consumption: 2 pricings", "h200-3840.consumption: json"} {
			if strings.Contains(r.Reason, want) {
				reasons[want] = true
			}
		}
	}
	if len(res.Rejects) != 4 || len(reasons) != 4 {
		t.Errorf("rejected %+v, want no pricing, formattedPrice mismatch, two pricings and an undecodable record", res.Rejects)
	}

	res = mustParse(t, "testdata/catalog_us/input.json")
	if us := one(t, res.Rows, "l40s-90", schemas.OnDemand); us.Currency != "USD" || us.Unit != schemas.UnitHour || us.Region != "US-EAST-VA-1" || us.PriceNative != 1.8 {
		t.Errorf("US hourly with intervalUnit none = %+v", us)
	}
}

func TestShownPrice(t *testing.T) {
	for s, want := range map[string]float64{
		"2.80 €": 2.80, "$1.56 USD": 1.56, "1 940,00 €": 1940, "1,940.00 EUR": 1940, "1.940,00 €": 1940,
		"0,76\u00a0€": 0.76, "1,940 €": 1940, "42 €": 42,
	} {
		if got, ok := shownPrice(s); !ok || got != want {
			t.Errorf("shownPrice(%q) = %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "€", "free"} {
		if _, ok := shownPrice(s); ok {
			t.Errorf("shownPrice(%q) read a number", s)
		}
	}
}

func TestParseCatalogSubsidiaryMismatch(t *testing.T) {
	_, err := parseCatalog(bytes.NewReader(readFile(t, "testdata/catalog_us/input.json")), "FR", scrapertest.ObservedAt)
	if err == nil || !strings.Contains(err.Error(), "asked for the FR catalog, got the US one") {
		t.Errorf("err = %v", err)
	}
}

func TestRegistered(t *testing.T) {
	info, f, ok := scrapers.Lookup(Name)
	if !ok || f == nil {
		t.Fatal("ovhcloud is not registered")
	}
	if info.Provider != "ovhcloud" || info.Credentials != "" || info.Schedule == "" {
		t.Errorf("info = %+v", info)
	}
	for _, p := range info.Pricing {
		if !schemas.ValidPricing(p) {
			t.Errorf("pricing %q is not valid", p)
		}
	}
	if _, known := schemas.DefaultProviders()[info.Provider]; !known {
		t.Errorf("provider %q is not in the provider catalog", info.Provider)
	}
	src, err := f(scrapertest.Config(t, Name, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	exp, ok := src.(scrapers.Expecter)
	if !ok || exp.Expect().MinRows == 0 || len(exp.Expect().SKUs) == 0 {
		t.Errorf("source does not declare a useful expectation")
	}
	// The expectation must hold on the FR fixture.
	res := mustParse(t, "testdata/catalog_fr/input.json")
	for _, sku := range exp.Expect().SKUs {
		if len(rowsOf(res.Rows, sku, schemas.OnDemand)) == 0 {
			t.Errorf("expected SKU %s not in the FR fixture", sku)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		ok   bool
	}{
		{nil, true},
		{map[string]any{"subsidiary": "DE"}, true},
		{map[string]any{"subsidiary": "ASIA"}, true},
		{map[string]any{"subsidiary": "fr"}, false},
		{map[string]any{"subsidiary": "FRANCE"}, false},
		{map[string]any{"currency": "EUR"}, false},
	} {
		_, err := New(scrapertest.Config(t, Name, "", c.opts))
		if (err == nil) != c.ok {
			t.Errorf("New(%v) error = %v, want ok=%v", c.opts, err, c.ok)
		}
	}
}

type rejectSink struct {
	scrapertest.Sink
	rejected []string
}

func (s *rejectSink) Reject(raw, reason string) { s.rejected = append(s.rejected, reason) }

func TestCollect(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/catalog_fr/input.json"}}})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(srv.Reqs) != 1 || srv.Reqs[0].URL.Query().Get("ovhSubsidiary") != "FR" {
		t.Fatalf("requests = %v", srv.Reqs)
	}
	want := srv.URL + apiPath + "?ovhSubsidiary=FR"
	for _, o := range sink.Rows {
		if o.SourceURL != want {
			t.Errorf("source url %q, want %q", o.SourceURL, want)
		}
	}
	rows := sink.Sorted()
	for i := range rows {
		rows[i].SourceURL = strings.Replace(rows[i].SourceURL, srv.URL, "http://mirror", 1)
	}
	scrapertest.Golden(t, "testdata/collect_expected.json", rows)
}

func TestCollectRejects(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/odd_plans/input.json"}}})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath+"?extra=1", nil))
	if err != nil {
		t.Fatal(err)
	}
	sink := &rejectSink{}
	if err := src.Collect(context.Background(), sink); err != nil {
		t.Fatal(err)
	}
	if q := srv.Reqs[0].URL.Query(); q.Get("extra") != "1" || q.Get("ovhSubsidiary") != "FR" {
		t.Errorf("query = %v, want the endpoint's own parameters kept", q)
	}
	if len(sink.rejected) != 4 || len(sink.Rows) == 0 {
		t.Errorf("rows %d, rejected %v", len(sink.Rows), sink.rejected)
	}
}

func TestCollectRetry(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {
		{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}},
		{File: "testdata/catalog_fr/input.json"},
	}})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if srv.Hits[apiPath] != 2 || len(sink.Rows) == 0 {
		t.Errorf("hits = %d, rows = %d", srv.Hits[apiPath], len(sink.Rows))
	}
}

func TestCollectFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  map[string]any
		route scrapertest.Route
		is    error
		msg   string
	}{
		{"500 forever", nil, scrapertest.Route{Status: http.StatusInternalServerError, Body: "oops"}, fetch.ErrStatus, "HTTP 500"},
		{"400", nil, scrapertest.Route{Status: http.StatusBadRequest, File: "testdata/changed_layout/input.json"}, fetch.ErrStatus, "HTTP 400"},
		{"malformed JSON", nil, scrapertest.Route{File: "testdata/malformed/input.json"}, nil, "decoding catalog"},
		{"changed layout", nil, scrapertest.Route{File: "testdata/changed_layout/input.json"}, ErrLayout, "no addons"},
		{"no locale", nil, scrapertest.Route{File: "testdata/no_locale/input.json"}, ErrLayout, "currencyCode"},
		{"other subsidiary", map[string]any{"subsidiary": "DE"}, scrapertest.Route{File: "testdata/catalog_fr/input.json"}, nil, "asked for the DE catalog"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {c.route}})
			src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, c.opts))
			if err != nil {
				t.Fatal(err)
			}
			var sink scrapertest.Sink
			err = src.Collect(context.Background(), &sink)
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "ovhcloud: ") {
				t.Fatalf("err = %v, want one containing %q", err, c.msg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("err = %v, want errors.Is %v", err, c.is)
			}
			if len(sink.Rows) != 0 {
				t.Errorf("%d rows emitted", len(sink.Rows))
			}
		})
	}
	t.Run("no GPU flavour", func(t *testing.T) {
		srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/no_gpu/input.json"}}})
		src, _ := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
		var sink scrapertest.Sink
		if err := src.Collect(context.Background(), &sink); err != nil || len(sink.Rows) != 0 {
			t.Errorf("err %v, rows %d: an empty catalog is no error (the coverage guard reports it)", err, len(sink.Rows))
		}
	})
}

func FuzzParseCatalog(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/input.json")
	for _, p := range files {
		f.Add(readFile(f, p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parseCatalog(bytes.NewReader(data), "FR", scrapertest.ObservedAt)
		if err != nil {
			return
		}
		if res.Rows == nil {
			t.Error("nil rows without an error")
		}
		for _, o := range res.Rows {
			if o.SKU == "" || o.Currency == "" || o.Pricing == "" {
				t.Errorf("row %+v", o)
			}
		}
		_, _ = shownPrice(string(data))
	})
}

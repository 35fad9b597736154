package oci

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

const apiPath = "/pls/apex/cetools/api/v1/products/"

func TestParsePage(t *testing.T) {
	scrapertest.GoldenCases(t, "testdata/*/input.json", func(_ string, data []byte) (page, error) {
		return parsePage(bytes.NewReader(data), "USD", scrapertest.ObservedAt)
	})
}

func parseFile(t *testing.T, path, currency string) page {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parsePage(bytes.NewReader(data), currency, scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func find(rows []schemas.Observation, sku, pricing string) (schemas.Observation, bool) {
	for _, o := range rows {
		if o.SKU == sku && o.Pricing == pricing {
			return o, true
		}
	}
	return schemas.Observation{}, false
}

func TestRecordedItems(t *testing.T) {
	p := parseFile(t, "testdata/full/input.json", "USD")
	if p.Items != 7 || len(p.Rows) != 14 || p.NextLink != "" || p.NextOffset != -1 {
		t.Fatalf("items %d rows %d next %q/%d; want 7 items, 14 rows, no next page", p.Items, len(p.Rows), p.NextLink, p.NextOffset)
	}
	// The price list prices one GPU-hour; a row whose SKU names an N-GPU shape has
	// gpu_count N, so that ingest stores price_usd_hour = N × the per-GPU price
	// (BM.GPU.H100.8: 8 GPUs at $80/h, not one machine at $10).
	for _, c := range []struct {
		sku   string
		price float64
		part  string
		gpus  float64
	}{
		{"BM.GPU2.2", 1.275, "B88517", 2},
		{"VM.GPU2.1", 1.275, "B88518", 1},
		{"BM.GPU3.8", 2.95, "B89734", 8},
		{"BM.GPU4.8", 3.05, "B92740", 8},
		{"BM.GPU.A100-v2.8", 4, "B95907", 8},
		{"BM.GPU.A10.4", 2, "B95909", 4},
		{"BM.GPU.H100.8", 10, "B98415", 8},
	} {
		od, ok := find(p.Rows, c.sku, schemas.OnDemand)
		if !ok || od.PriceNative != c.price || od.Unit != schemas.UnitGPUHour || od.GPUCount != c.gpus || od.Region != "" ||
			od.SourceKind != schemas.SourceAPI || od.Attrs["partNumber"] != c.part || od.Currency != "USD" {
			t.Errorf("%s on-demand: %v %+v", c.sku, ok, od)
		}
		sp, ok := find(p.Rows, c.sku, schemas.Spot)
		if !ok || sp.PriceNative != c.price/2 || sp.SourceKind != schemas.SourceDerived || sp.Attrs["rule"] != PreemptibleRule ||
			sp.Unit != schemas.UnitGPUHour {
			t.Errorf("%s spot: %v %+v", c.sku, ok, sp)
		}
		if _, scraped := od.Attrs["rule"]; scraped {
			t.Errorf("%s on-demand row carries the derivation rule", c.sku)
		}
	}
}

func TestOddItems(t *testing.T) {
	p := parseFile(t, "testdata/odd_items/input.json", "USD")
	if len(p.Rejects) != 2 {
		t.Fatalf("rejected = %v, want the string item and the numeric partNumber", p.Rejects)
	}
	for _, o := range p.Rows {
		if o.Pricing == schemas.Spot && (o.SKU != "BM.GPU.A100-v2.8" && o.SKU != "BM.GPU3.8" && o.SKU != "B999002") {
			t.Errorf("spot derived from a row without a price: %+v", o)
		}
	}
	check := func(sku string, price float64, text string) {
		t.Helper()
		o, ok := find(p.Rows, sku, schemas.OnDemand)
		if !ok || o.PriceNative != price || o.Attrs["price_text"] != text {
			t.Errorf("%s: %v %+v, want price %v text %q", sku, ok, o, price, text)
		}
	}
	check("BM.GPU.A10.4", 0, "no USD prices")
	check("BM.GPU.H100.8", 0, "no PAY_AS_YOU_GO price")
	check("BM.GPU4.8", 0, "")
	check("BM.GPU.A100-v2.8", 4, "")
	check("BM.GPU3.8", 3.1, "")
	check("BM.GPU2.2", 0, "no PAY_AS_YOU_GO price")
	if o, _ := find(p.Rows, "BM.GPU.A100-v2.8", schemas.OnDemand); o.Attrs["range_min"] != "1" {
		t.Errorf("free first range: range_min = %q, want 1", o.Attrs["range_min"])
	}
	if o, _ := find(p.Rows, "B999002", schemas.OnDemand); o.Unit != "GPU Per Month" || o.GPUName != "L40S - Monthly" {
		t.Errorf("unknown part: %+v", o)
	}
	// In EUR the A10 part has its price.
	eur := parseFile(t, "testdata/odd_items/input.json", "EUR")
	if o, _ := find(eur.Rows, "BM.GPU.A10.4", schemas.OnDemand); o.PriceNative != 1.83 || o.Currency != "EUR" {
		t.Errorf("EUR A10 = %+v", o)
	}
}

func TestShapeOf(t *testing.T) {
	for _, c := range []struct{ name, sku, gpu string }{
		{"Oracle Cloud Infrastructure - Compute - GPU - H100", "BM.GPU.H100.8", "NVIDIA H100"},
		{"Compute  - GPU - A10", "BM.GPU.A10.4", "NVIDIA A10"},
		{"Compute - GPU - A100 - v2", "BM.GPU.A100-v2.8", "NVIDIA A100 80GB"},
		{"Compute - Virtual Machine GPU Standard - X7", "VM.GPU2.1", "NVIDIA Tesla P100"},
		{"Compute - GPU - MI300X", "BM.GPU.MI300X.8", "AMD Instinct MI300X"},
		{"Compute - GPU - X9000", "", "X9000"},
		{"Something else", "", "Something else"},
		{"", "", ""},
	} {
		s := shapeOf(c.name)
		if s.SKU != c.sku || s.GPUName != c.gpu {
			t.Errorf("shapeOf(%q) = %+v, want %s / %s", c.name, s, c.sku, c.gpu)
		}
	}
}

func TestRegistered(t *testing.T) {
	info, f, ok := scrapers.Lookup(Name)
	if !ok || f == nil {
		t.Fatal("oci is not registered")
	}
	if info.Provider != "oci" || info.Credentials != "" || info.Schedule == "" {
		t.Errorf("info = %+v", info)
	}
	for _, p := range info.Pricing {
		if !schemas.ValidPricing(p) {
			t.Errorf("pricing %q is not valid", p)
		}
	}
	src, err := f(scrapertest.Config(t, Name, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	exp, ok := src.(scrapers.Expecter)
	if !ok || exp.Expect().MinRows == 0 || len(exp.Expect().SKUs) == 0 {
		t.Errorf("source does not declare a useful expectation")
	}
	// the guard's SKUs are ones the parser produces
	rows := parseFile(t, "testdata/full/input.json", "USD").Rows
	for _, sku := range exp.Expect().SKUs {
		if _, ok := find(rows, sku, schemas.OnDemand); !ok {
			t.Errorf("expected SKU %s is not produced from the recorded list", sku)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		ok   bool
	}{
		{nil, true},
		{map[string]any{"currency": "EUR"}, true},
		{map[string]any{"currency": "eur"}, false},
		{map[string]any{"region": "us-ashburn-1"}, false},
	} {
		_, err := New(scrapertest.Config(t, Name, "", c.opts))
		if (err == nil) != c.ok {
			t.Errorf("New(%v) error = %v, want ok=%v", c.opts, err, c.ok)
		}
	}
}

func newSource(t *testing.T, srv *scrapertest.Server, opts map[string]any) scrapers.Source {
	t.Helper()
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, opts))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestCollectPaging(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath + "?currencyCode=USD":          {{File: "testdata/page1/input.json"}},
		apiPath + "?currencyCode=USD&offset=5": {{File: "testdata/page2/input.json"}},
	})
	var sink scrapertest.Sink
	if err := newSource(t, srv, nil).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(srv.Reqs) != 2 || srv.Reqs[1].URL.Query().Get("offset") != "5" {
		t.Fatalf("requests = %d, want 2 following the next link", len(srv.Reqs))
	}
	rows := sink.Sorted()
	if len(rows) != 2*11 {
		t.Errorf("rows = %d, want 22 (11 GPU parts, on-demand and spot)", len(rows))
	}
	for i := range rows {
		rows[i].SourceURL = strings.Replace(rows[i].SourceURL, srv.URL, "http://mirror", 1)
	}
	scrapertest.Golden(t, "testdata/collect_expected.json", rows)
}

func TestCollectOffsetPaging(t *testing.T) {
	// hasMore without a next link: the offset advances by count.
	first := `{"items":[{"partNumber":"B98415","displayName":"Compute - GPU - H100","metricName":"GPU Per Hour","serviceCategory":"Compute - GPU","currencyCodeLocalizations":[{"currencyCode":"EUR","prices":[{"model":"PAY_AS_YOU_GO","value":9.16}]}]}],"hasMore":true,"limit":1,"offset":0,"count":1}`
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath + "?currencyCode=EUR":          {{Body: first}},
		apiPath + "?currencyCode=EUR&offset=1": {{File: "testdata/empty/input.json"}},
	})
	var sink scrapertest.Sink
	if err := newSource(t, srv, map[string]any{"currency": "EUR"}).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(srv.Reqs) != 2 || len(sink.Rows) != 2 {
		t.Fatalf("requests %d rows %d, want 2 and 2", len(srv.Reqs), len(sink.Rows))
	}
	if o, _ := find(sink.Rows, "BM.GPU.H100.8", schemas.Spot); o.PriceNative != 4.58 || o.Currency != "EUR" {
		t.Errorf("EUR spot = %+v", o)
	}
}

func TestCollectEmpty(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/empty/input.json"}}})
	var sink scrapertest.Sink
	if err := newSource(t, srv, nil).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Rows) != 0 || len(srv.Reqs) != 1 {
		t.Errorf("rows %d requests %d", len(sink.Rows), len(srv.Reqs))
	}
}

func TestCollectRetriesThenSucceeds(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath: {
			{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}},
			{File: "testdata/full/input.json"},
		},
	})
	var sink scrapertest.Sink
	if err := newSource(t, srv, nil).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if srv.Hits[apiPath] != 2 || len(sink.Rows) != 14 {
		t.Errorf("hits = %d, rows = %d; want 2 hits and 14 rows", srv.Hits[apiPath], len(sink.Rows))
	}
}

func TestCollectFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		route scrapertest.Route
		is    error
		msg   string
	}{
		{"500 forever", scrapertest.Route{Status: http.StatusInternalServerError, Body: "oops"}, fetch.ErrStatus, "HTTP 500"},
		{"404", scrapertest.Route{Status: http.StatusNotFound}, fetch.ErrStatus, "HTTP 404"},
		{"malformed JSON", scrapertest.Route{File: "testdata/malformed/input.json"}, nil, "decoding response"},
		{"changed layout", scrapertest.Route{File: "testdata/changed_layout/input.json"}, nil, "no items array"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {c.route}})
			var sink scrapertest.Sink
			err := newSource(t, srv, nil).Collect(context.Background(), &sink)
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "oci: ") {
				t.Fatalf("err = %v, want one containing %q", err, c.msg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("err = %v, want errors.Is %v", err, c.is)
			}
		})
	}
}

func TestCollectRepeatedLink(t *testing.T) {
	loop := `{"items":[],"hasMore":true,"links":[{"rel":"next","href":"https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"}]}`
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{Body: loop}}})
	err := newSource(t, srv, nil).Collect(context.Background(), &scrapertest.Sink{})
	if err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Fatalf("err = %v, want a repeated-link error", err)
	}
}

type rejectSink struct {
	scrapertest.Sink
	rejected []string
}

func (r *rejectSink) Reject(raw, reason string) { r.rejected = append(r.rejected, reason) }

func TestCollectRejects(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/odd_items/input.json"}}})
	var sink rejectSink
	if err := newSource(t, srv, nil).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.rejected) != 2 || len(sink.Rows) != 7+3 {
		t.Errorf("rejected %v rows %d; want 2 rejected, 10 rows", sink.rejected, len(sink.Rows))
	}
}

func FuzzParsePage(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/input.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePage(bytes.NewReader(data), "USD", scrapertest.ObservedAt)
		if err != nil {
			return
		}
		if p.Rows == nil {
			t.Error("nil rows without an error")
		}
		for _, o := range p.Rows {
			if o.Pricing == schemas.Spot && (o.SourceKind != schemas.SourceDerived || o.Attrs["rule"] != PreemptibleRule) {
				t.Errorf("spot row not marked derived: %+v", o)
			}
		}
	})
}

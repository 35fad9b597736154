package gcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

const (
	apiPath  = "/v1/services/" + ComputeServiceID + "/skus"
	pagePath = "/compute/gpus-pricing"
	testKey  = "AIzaSyTEST-not-a-real-key-0123456789"
)

// golden is what a parser case records: the page and the machine rows its components
// parsed is what a parser case records: the API page and the machine types derived
// from its components, or the pricing page's rows and not-offered cells.
type parsed struct {
	Page       *page                 `json:"page,omitempty"`
	Machines   []schemas.Observation `json:"machines,omitempty"`
	Rows       []schemas.Observation `json:"rows,omitempty"`
	NotOffered int                   `json:"not_offered,omitempty"`
}

func TestParse(t *testing.T) {
	scrapertest.GoldenCases(t, "testdata/*/input.*", func(path string, data []byte) (parsed, error) {
		var g parsed
		if strings.HasSuffix(path, ".html") {
			res, err := parsePricingPage(bytes.NewReader(data), scrapertest.ObservedAt)
			g.Rows, g.NotOffered = res.Rows, res.Skipped[skipNotOffered]
			return g, err
		}
		p, err := parseSkus(bytes.NewReader(data), scrapertest.ObservedAt)
		if err != nil {
			return g, err
		}
		g.Page = &p
		g.Machines, _ = deriveMachines(p.Components, scrapertest.ObservedAt)
		return g, nil
	})
}

func parseFile(t *testing.T, path string) page {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parseSkus(bytes.NewReader(data), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func find(rows []schemas.Observation, sku, region, pricing string) (schemas.Observation, bool) {
	for _, o := range rows {
		if o.SKU == sku && o.Region == region && o.Pricing == pricing {
			return o, true
		}
	}
	return schemas.Observation{}, false
}

// TestRecordedPageAndDerivation checks the real recorded page: the A100 SKU in its three
// regions, and the a2-highgpu-1g price summed from the real A100, A2 core and A2 RAM
// SKUs: 2.933908 + 12 × 0.031611 + 85 × 0.004237 = 3.673385, GCP's published price.
func TestRecordedPageAndDerivation(t *testing.T) {
	p := parseFile(t, "testdata/page1/input.json")
	if p.SKUs != 7 || len(p.Rows) != 3 || p.Skipped[skipNotGPU] != 4 {
		t.Fatalf("skus %d rows %d skipped %v; want 7 SKUs, 3 rows, 4 not GPU", p.SKUs, len(p.Rows), p.Skipped)
	}
	for _, o := range p.Rows {
		if o.SKU != "nvidia-tesla-a100" || o.PriceNative != 2.933908 || o.Unit != schemas.UnitGPUHour ||
			o.Pricing != schemas.OnDemand || o.GPUName != "Nvidia Tesla A100" || o.GPUMemoryGB != 40 ||
			o.Attrs["skuId"] != "039F-D0DA-4055" || o.Currency != "USD" || o.EffectiveAt.Format("2006-01-02") != "2023-03-24" {
			t.Errorf("row %+v", o)
		}
		// The accelerator SKU prices the GPU alone, not the VM it attaches to.
		if o.PriceScope != schemas.ScopeGPUOnly {
			t.Errorf("accelerator row scope %q, want gpu_only", o.PriceScope)
		}
	}
	machines, _ := deriveMachines(p.Components, scrapertest.ObservedAt)
	o, ok := find(machines, "a2-highgpu-1g", "us-central1", schemas.OnDemand)
	if !ok {
		t.Fatal("no a2-highgpu-1g in us-central1")
	}
	if schemas.ScopeOf(o.PriceScope) != schemas.ScopeInstance {
		t.Errorf("machine row scope %q, want instance", o.PriceScope)
	}
	if o.PriceNative != 3.673385 || o.Unit != schemas.UnitHour || o.GPUCount != 1 || o.SourceKind != schemas.SourceAPI ||
		o.Attrs["derived_from"] != "039F-D0DA-4055,2922-40C5-B19F,2390-DCAF-DA38" {
		t.Errorf("a2-highgpu-1g = %+v", o)
	}
	if o, _ := find(machines, "a2-megagpu-16g", "us-west1", schemas.OnDemand); o.PriceNative != 16*2.933908+96*0.031611+1360*0.004237 {
		t.Errorf("a2-megagpu-16g = %v", o.PriceNative)
	}
	// The A100 40GB machines in three regions; no A100 80GB SKU on this page.
	if len(machines) != 5*3 {
		t.Errorf("machines = %d, want 15 (5 A100 40GB types × 3 regions)", len(machines))
	}
}

func TestCatalogRules(t *testing.T) {
	p1 := parseFile(t, "testdata/page1/input.json")
	p2 := parseFile(t, "testdata/page2/input.json")
	if p2.Skipped[skipDWS] != 2 || p2.Skipped[skipReserved] != 1 || p2.Skipped[skipNotGPU] != 1 {
		t.Errorf("page 2 skipped = %v, want 2 dws, 1 reserved, 1 not GPU", p2.Skipped)
	}
	rows := append(append([]schemas.Observation{}, p1.Rows...), p2.Rows...)
	for _, o := range rows {
		if strings.Contains(o.Attrs["description"], "DWS") || strings.Contains(o.Attrs["description"], "Flex-start") {
			t.Errorf("DWS row emitted: %v", o.Attrs["description"])
		}
	}
	for _, c := range []struct {
		sku, region, pricing string
		price                float64
	}{
		{"nvidia-tesla-a100", "us-east1", schemas.Spot, 1.100375},
		{"nvidia-tesla-a100", "us-west1", schemas.Reserved1Y, 1.848362},
		{"nvidia-tesla-a100", "us-central1", schemas.Reserved3Y, 1.026869},
		{"nvidia-h100-80gb", "us-east4", schemas.OnDemand, 9.79655057},
		{"nvidia-h100-80gb", "us-central1", schemas.Spot, 2.253},
		{"nvidia-h100-mega-80gb", "us-central1", schemas.OnDemand, 10.2},
		{"nvidia-tesla-t4", "europe-west1", schemas.Spot, 0.154},
		{"nvidia-l4", "europe-west4", schemas.OnDemand, 0.644},
	} {
		o, ok := find(rows, c.sku, c.region, c.pricing)
		if !ok || o.PriceNative != c.price || o.Unit != schemas.UnitGPUHour || o.GPUCount != 1 {
			t.Errorf("%s %s %s: found %v, row %+v; want price %v", c.sku, c.region, c.pricing, ok, o, c.price)
		}
	}

	machines, incomplete := deriveMachines(append(p1.Components, p2.Components...), scrapertest.ObservedAt)
	count := map[string]int{}
	for _, o := range machines {
		count[o.Pricing]++
		if ids := strings.Split(o.Attrs["derived_from"], ","); len(ids) != 3 {
			t.Errorf("%s derived_from %q", o.SKU, o.Attrs["derived_from"])
		}
		if strings.HasPrefix(o.SKU, "a3-megagpu") || (strings.HasPrefix(o.SKU, "a2-") && o.Pricing == schemas.Reserved3Y) {
			t.Errorf("%s %s priced without all its components", o.SKU, o.Pricing)
		}
	}
	// on-demand: 5 A2 × 3 regions + 4 A3 × 2 regions + 8 G2 × 1 region; spot: 5 A2 × 3;
	// 1y: 5 A2 × 3; no 3y (no A2 3-year core/RAM), no A3 spot (no A3 spot core/RAM).
	if count[schemas.OnDemand] != 15+8+8 || count[schemas.Spot] != 15 || count[schemas.Reserved1Y] != 15 || count[schemas.Reserved3Y] != 0 {
		t.Errorf("machine rows by pricing = %v", count)
	}
	if incomplete == 0 {
		t.Error("incomplete machine combinations not counted")
	}
	o, _ := find(machines, "a3-highgpu-8g", "us-east4", schemas.OnDemand)
	if want := 8*9.79655057 + 208*0.02275 + 1872*0.003049; o.PriceNative < want-1e-9 || o.PriceNative > want+1e-9 || o.GPUCount != 8 {
		t.Errorf("a3-highgpu-8g = %+v, want %v", o, want)
	}
	o, _ = find(machines, "g2-standard-48", "europe-west4", schemas.OnDemand)
	if want := 4*0.644 + 48*0.02446 + 192*0.002865; o.PriceNative < want-1e-9 || o.PriceNative > want+1e-9 || o.GPUName != "Nvidia L4" {
		t.Errorf("g2-standard-48 = %+v, want %v", o, want)
	}
}

func TestOddSkus(t *testing.T) {
	p := parseFile(t, "testdata/odd_skus/input.json")
	if len(p.Rejects) != 2 {
		t.Fatalf("rejected = %v, want the non-object SKU and the bad units", p.Rejects)
	}
	for _, r := range p.Rejects {
		if !strings.HasPrefix(r.Reason, "gcp: sku") || r.Raw == "" {
			t.Errorf("rejected %+v", r)
		}
	}
	var tier, zero, noPricing, usage, unit, slug, rtx, old, global bool
	for _, o := range p.Rows {
		switch {
		case o.SKU == "nvidia-tesla-t4":
			tier = o.PriceNative == 0.35 && o.Attrs["tier_start_usage_amount"] == "744"
		case o.SKU == "nvidia-tesla-p4":
			zero = o.PriceNative == 0 && o.Pricing == schemas.OnDemand
		case o.SKU == "nvidia-tesla-v100":
			noPricing = o.PriceNative == 0 && o.Attrs["price_text"] == "no pricingInfo"
		case o.SKU == "nvidia-tesla-p100":
			usage = o.Pricing == "gcp_usage:Commit5Yr"
		case o.SKU == "nvidia-l4":
			unit = o.Unit == "mo"
		case o.SKU == "nvidia-x300":
			slug = o.GPUName == "Nvidia X300" && o.GPUMemoryGB == 0
		case o.SKU == "nvidia-rtx-pro-6000":
			rtx = o.GPUName == "RTX 6000 96GB" && o.GPUMemoryGB == 96
		case o.SKU == "nvidia-tesla-k80":
			old = o.Pricing == schemas.Spot
		case o.SKU == "nvidia-a100-80gb":
			global = o.Region == ""
		}
	}
	if !tier || !zero || !noPricing || !usage || !unit || !slug || !rtx || !old || !global {
		t.Errorf("free tier %v, zero price %v, no pricing %v, unknown usage %v, verbatim unit %v, slug %v, RTX %v, old preemptible %v, global %v: want all true",
			tier, zero, noPricing, usage, unit, slug, rtx, old, global)
	}
}

func TestDescriptions(t *testing.T) {
	for _, c := range []struct{ desc, gpu, accel string }{
		{"Nvidia Tesla A100 GPU running in Americas", "Nvidia Tesla A100", "nvidia-tesla-a100"},
		{"Nvidia Tesla A100 80GB GPU attached to Spot Preemptible VMs running in EMEA", "Nvidia Tesla A100 80GB", "nvidia-a100-80gb"},
		{"Commitment v1: Nvidia H100 80GB GPU in Americas for 3 Year", "Nvidia H100 80GB", "nvidia-h100-80gb"},
		{"Spot Preemptible Nvidia L4 GPU running in Belgium", "Nvidia L4", "nvidia-l4"},
		{"Nvidia H100 80GB Mega GPU running in Americas", "Nvidia H100 80GB Mega", "nvidia-h100-mega-80gb"},
		{"Nvidia H200 141GB GPU running in Americas", "Nvidia H200 141GB", "nvidia-h200-141gb"},
		{"Nvidia Tesla T4 GPU attached to Spot Preemptible VMs running in Sydney", "Nvidia Tesla T4", "nvidia-tesla-t4"},
		{"RTX 6000 96GB attached to Spot Preemptible VMs running in Iowa", "RTX 6000 96GB", "nvidia-rtx-pro-6000"},
		{"Nvidia B200 GPU running in Americas", "Nvidia B200", "nvidia-b200"},
	} {
		if g := gpuNameOf(c.desc); g != c.gpu {
			t.Errorf("gpuNameOf(%q) = %q, want %q", c.desc, g, c.gpu)
		}
		if a := acceleratorOf(gpuNameOf(c.desc)).Type; a != c.accel {
			t.Errorf("accelerator of %q = %q, want %q", c.desc, a, c.accel)
		}
	}
	for _, c := range []struct{ desc, family string }{
		{"A2 Instance Core running in Americas", "A2"},
		{"Spot Preemptible A2 Instance Ram running in Americas", "A2"},
		{"Commitment v1: A3 Cpu in Americas for 1 Year", "A3"},
		{"Commitment v1: G2 Ram in Belgium for 3 Year", "G2"},
		{"T2D AMD Instance Core running in Singapore", "T2D AMD"},
	} {
		if f := familyOf(c.desc); f != c.family {
			t.Errorf("familyOf(%q) = %q, want %q", c.desc, f, c.family)
		}
	}
	// every machine's GPU is a known accelerator, so its memory is filled in
	for _, m := range machines {
		if accelMem(m.Accel) == 0 {
			t.Errorf("machine %s: accelerator %s has no memory", m.Name, m.Accel)
		}
	}
}

func TestPricingPageRules(t *testing.T) {
	data, err := os.ReadFile("testdata/pricing_page/input.html")
	if err != nil {
		t.Fatal(err)
	}
	res, err := parsePricingPage(bytes.NewReader(data), scrapertest.ObservedAt)
	rows, notOffered := res.Rows, res.Skipped[skipNotOffered]
	if err != nil {
		t.Fatal(err)
	}
	// H100: 3 regions × 4 − 1 not available; L4 2 × 4; T4 3 × 4 − 1; B200: 1 (contact sales)
	if len(rows) != 11+8+11+1 || notOffered != 1+1+3 {
		t.Fatalf("rows = %d, not offered = %d; want 31 and 5", len(rows), notOffered)
	}
	for _, c := range []struct {
		sku, region, pricing string
		price                float64
	}{
		{"nvidia-h100-80gb", "us-east4", schemas.Reserved1Y, 6.3679},
		{"nvidia-h100-80gb", "europe-west4", schemas.OnDemand, 10.7762},
		{"nvidia-l4", "us-central1", schemas.Spot, 0.224},
		{"nvidia-tesla-t4", "australia-southeast1", schemas.Reserved3Y, 0.198},
	} {
		o, ok := find(rows, c.sku, c.region, c.pricing)
		if !ok || o.PriceNative != c.price || o.Unit != schemas.UnitGPUHour || o.SourceKind != schemas.SourceScrape {
			t.Errorf("%s %s %s: %v %+v, want %v", c.sku, c.region, c.pricing, ok, o, c.price)
		}
	}
	if o, ok := find(rows, "nvidia-b200", "us-central1", schemas.OnDemand); !ok || o.PriceNative != 0 || o.Attrs["price_text"] != `not offered (the page shows "Contact sales")` {
		t.Errorf("B200 contact sales row = %+v", o)
	}
	for _, bad := range []string{"testdata/page_layout_changed/input.html", "testdata/page_empty/input.html"} {
		data, err := os.ReadFile(bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parsePricingPage(bytes.NewReader(data), scrapertest.ObservedAt); !errors.Is(err, ErrLayout) {
			t.Errorf("%s: err = %v, want ErrLayout", bad, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	info, f, ok := scrapers.Lookup(Name)
	if !ok || f == nil {
		t.Fatal("gcp is not registered")
	}
	if info.Provider != "gcp" || !strings.Contains(info.Credentials, EnvAPIKey) || info.Schedule == "" {
		t.Errorf("info = %+v", info)
	}
	for _, p := range info.Pricing {
		if !schemas.ValidPricing(p) {
			t.Errorf("pricing %q is not valid", p)
		}
	}
	for _, key := range []string{"", testKey} {
		t.Setenv(EnvAPIKey, key)
		src, err := f(scrapertest.Config(t, Name, "", nil))
		if err != nil {
			t.Fatal(err)
		}
		exp, ok := src.(scrapers.Expecter)
		if !ok || exp.Expect().MinRows == 0 || len(exp.Expect().SKUs) == 0 {
			t.Errorf("key %v: source does not declare a useful expectation", key != "")
		}
		if strings.Contains(fmt.Sprint(src), testKey) || strings.Contains(fmt.Sprintf("%+v", src), testKey) {
			t.Errorf("source prints its key: %v", src)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		key      string
		endpoint string
		opts     map[string]any
		mode     string
	}{
		{"", "", nil, ModePage},
		{testKey, "", nil, ModeAPI},
		{testKey, "", map[string]any{"mode": "page"}, ModePage},
		{"", "", map[string]any{"mode": "api"}, ""},
		{testKey, "", map[string]any{"currency": "EUR", "page_size": 100, "pricing_page": "https://example.com/p"}, ModeAPI},
		{testKey, "", map[string]any{"currency": "eur"}, ""},
		{testKey, "", map[string]any{"page_size": 5001}, ""},
		{testKey, "", map[string]any{"pricing_page": "/relative"}, ""},
		{testKey, "", map[string]any{"mode": "scrape"}, ""},
		{testKey, "", map[string]any{"regions": []string{"us-central1"}}, ""},
		{testKey, "https://cloudbilling.googleapis.com/v1/services/x/skus?key=" + testKey, nil, ""},
	} {
		s, err := newSource(scrapertest.Config(t, Name, c.endpoint, c.opts), c.key)
		switch {
		case c.mode == "" && err == nil:
			t.Errorf("newSource(%v, key %v) accepted, want an error", c.opts, c.key != "")
		case c.mode != "" && err != nil:
			t.Errorf("newSource(%v, key %v): %v", c.opts, c.key != "", err)
		case err != nil && strings.Contains(err.Error(), testKey):
			t.Errorf("error shows the key: %v", err)
		case err == nil && s.mode != c.mode:
			t.Errorf("newSource(%v, key %v) mode %q, want %q", c.opts, c.key != "", s.mode, c.mode)
		}
	}
}

// apiSource builds an API-mode source against srv.
func apiSource(t *testing.T, srv *scrapertest.Server, opts map[string]any) *Source {
	t.Helper()
	s, err := newSource(scrapertest.Config(t, Name, srv.URL+apiPath, opts), testKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// route is the replay-server key of the page with this token.
func route(token string) string {
	s := &Source{opts: Options{Currency: "USD", PageSize: MaxPageSize}, cfg: scrapers.Config{Endpoint: apiPath}}
	return s.pageURL(token)
}

func nextToken(t *testing.T, file string) string {
	t.Helper()
	p := parseFile(t, file)
	if p.Next == "" {
		t.Fatalf("%s has no nextPageToken", file)
	}
	return p.Next
}

func TestCollectPaging(t *testing.T) {
	tok1, tok2 := nextToken(t, "testdata/page1/input.json"), nextToken(t, "testdata/page2/input.json")
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		route(""):   {{File: "testdata/page1/input.json"}},
		route(tok1): {{File: "testdata/page2/input.json"}},
		route(tok2): {{File: "testdata/empty/input.json"}},
	})
	src := apiSource(t, srv, nil)
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(srv.Reqs) != 3 {
		t.Fatalf("requests = %d, want 3", len(srv.Reqs))
	}
	for i, want := range []string{"", tok1, tok2} {
		r := srv.Reqs[i]
		q := r.URL.Query()
		if q.Get("pageToken") != want || q.Get("pageSize") != "5000" || q.Get("currencyCode") != "USD" || q.Has("key") {
			t.Errorf("request %d query = %v", i+1, q)
		}
		if r.Header.Get("X-Goog-Api-Key") != testKey {
			t.Errorf("request %d does not send the key header", i+1)
		}
	}
	rows := sink.Sorted()
	var derived int
	for i := range rows {
		if strings.Contains(rows[i].SourceURL, testKey) || strings.Contains(rows[i].SourceURL, "key=") {
			t.Errorf("source URL carries the key: %s", rows[i].SourceURL)
		}
		rows[i].SourceURL = strings.Replace(rows[i].SourceURL, srv.URL, "http://mirror", 1)
		if rows[i].Attrs["derived_from"] != "" {
			derived++
		}
	}
	if derived != 31+15+15 {
		t.Errorf("machine rows = %d, want 61", derived)
	}
	scrapertest.Golden(t, "testdata/collect_expected.json", rows)
}

func TestCollectRetriesThenSucceeds(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath: {
			{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"},
				Body: `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`},
			{File: "testdata/page1/input.json"},
		},
		route(nextToken(t, "testdata/page1/input.json")): {{File: "testdata/empty/input.json"}},
	})
	var sink scrapertest.Sink
	if err := apiSource(t, srv, nil).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if srv.Hits[route("")]+srv.Hits[apiPath] != 2 || len(sink.Rows) != 3+15 {
		t.Errorf("hits = %v, rows = %d; want 2 hits on page 1 and 18 rows", srv.Hits, len(sink.Rows))
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
		{"bad key", scrapertest.Route{Status: http.StatusBadRequest, File: "testdata/changed_layout/input.json"}, fetch.ErrStatus, "HTTP 400"},
		{"malformed JSON", scrapertest.Route{File: "testdata/malformed/input.json"}, nil, "decoding response"},
		{"changed layout", scrapertest.Route{File: "testdata/changed_layout/input.json"}, nil, "no skus array"},
		{"not an object", scrapertest.Route{Body: `[]`}, nil, "decoding response"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {c.route}})
			var sink scrapertest.Sink
			err := apiSource(t, srv, nil).Collect(context.Background(), &sink)
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "gcp: ") {
				t.Fatalf("err = %v, want one containing %q", err, c.msg)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error shows the key: %v", err)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("err = %v, want errors.Is %v", err, c.is)
			}
			if len(sink.Rows) != 0 {
				t.Errorf("rows emitted: %d", len(sink.Rows))
			}
		})
	}
}

func TestCollectFailsMidway(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		route(""): {{File: "testdata/page1/input.json"}},
		route(nextToken(t, "testdata/page1/input.json")): {{Status: http.StatusServiceUnavailable}},
	})
	var sink scrapertest.Sink
	err := apiSource(t, srv, nil).Collect(context.Background(), &sink)
	if err == nil || !strings.Contains(err.Error(), "page 2") {
		t.Fatalf("err = %v, want a page 2 error", err)
	}
	if len(sink.Rows) != 3 {
		t.Errorf("rows = %d, want page 1's 3 GPU rows (no machine rows from a partial catalog)", len(sink.Rows))
	}
}

func TestCollectRepeatedToken(t *testing.T) {
	loop := `{"skus":[],"nextPageToken":"again"}`
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{Body: loop}}})
	err := apiSource(t, srv, nil).Collect(context.Background(), &scrapertest.Sink{})
	if err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Fatalf("err = %v, want a repeated-token error", err)
	}
}

// rejectSink is a sink that also quarantines.
type rejectSink struct {
	scrapertest.Sink
	rejected []string
}

func (r *rejectSink) Reject(raw, reason string) { r.rejected = append(r.rejected, reason) }

func TestCollectRejects(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{File: "testdata/odd_skus/input.json"}}})
	var sink rejectSink
	if err := apiSource(t, srv, map[string]any{"currency": "USD", "page_size": 50}).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.rejected) != 2 || len(sink.Rows) != 11 {
		t.Errorf("rejected %v, rows %d; want 2 rejected and 11 rows", sink.rejected, len(sink.Rows))
	}
	if q := srv.Reqs[0].URL.Query(); q.Get("pageSize") != "50" {
		t.Errorf("pageSize = %q", q.Get("pageSize"))
	}
}

func pageSource(t *testing.T, srv *scrapertest.Server) *Source {
	t.Helper()
	s, err := newSource(scrapertest.Config(t, Name, "", map[string]any{"pricing_page": srv.URL + pagePath}), "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCollectPricingPage(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		pagePath: {
			{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}},
			{File: "testdata/pricing_page/input.html"},
		},
	})
	var sink scrapertest.Sink
	if err := pageSource(t, srv).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Rows) != 31 || srv.Hits[pagePath] != 2 {
		t.Fatalf("rows = %d, page hits = %d; want 31 and 2", len(sink.Rows), srv.Hits[pagePath])
	}
	for _, o := range sink.Rows {
		if o.SourceURL != srv.URL+pagePath {
			t.Errorf("source URL %q", o.SourceURL)
		}
	}
	for _, c := range []struct {
		name  string
		route scrapertest.Route
		is    error
	}{
		{"500 forever", scrapertest.Route{Status: http.StatusInternalServerError}, fetch.ErrStatus},
		{"layout changed", scrapertest.Route{File: "testdata/page_layout_changed/input.html"}, ErrLayout},
		{"empty", scrapertest.Route{File: "testdata/page_empty/input.html"}, ErrLayout},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{pagePath: {c.route}})
			err := pageSource(t, srv).Collect(context.Background(), &scrapertest.Sink{})
			if !errors.Is(err, c.is) || !strings.HasPrefix(err.Error(), "gcp: ") {
				t.Errorf("err = %v, want %v", err, c.is)
			}
		})
	}
}

func FuzzParseSkus(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/input.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseSkus(bytes.NewReader(data), scrapertest.ObservedAt)
		if err != nil {
			return
		}
		if p.Rows == nil {
			t.Error("nil rows without an error")
		}
		rows, _ := deriveMachines(p.Components, scrapertest.ObservedAt)
		for _, o := range rows {
			if o.Attrs["derived_from"] == "" {
				t.Errorf("machine row without derived_from: %+v", o)
			}
		}
	})
}

func FuzzParsePricingPage(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/input.html")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parsePricingPage(bytes.NewReader(data), scrapertest.ObservedAt)
		rows := res.Rows
		if err == nil && len(rows) == 0 {
			t.Error("no rows without an error")
		}
		for _, o := range rows {
			if !schemas.ValidPricing(o.Pricing) {
				t.Errorf("pricing %q", o.Pricing)
			}
		}
	})
}

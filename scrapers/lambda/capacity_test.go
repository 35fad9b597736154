package lambda

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

const (
	capacityPath = "/api/v1/instance-types"
	testKey      = "secret_lambda-test-key_7f3a9c1e"
)

// want is a stock signal hand-read from testdata/instance_types.json against the
// page of testdata/full_page: its SKU, regions with capacity, and the page row it
// prices (price_sku, "" for none).
type want struct {
	value    float64
	label    string
	priceSKU string
}

var wantCapacity = map[string]want{
	// Two API types match the page's 8x H100 SXM 80 GB row: neither takes its SKU.
	"gpu_8x_h100_sxm5":       {2, "us-east-1,us-west-1", "gpu_8x_h100_sxm_80gb"},
	"gpu_8x_h100_sxm5gdr":    {0, "", "gpu_8x_h100_sxm_80gb"},
	"gpu_1x_h100_sxm_80gb":   {1, "us-east-1", "gpu_1x_h100_sxm_80gb"},
	"gpu_1x_h100_pcie_80gb":  {0, "", "gpu_1x_h100_pcie_80gb"},
	"gpu_8x_a100_sxm_80gb":   {1, "us-midwest-1", "gpu_8x_a100_sxm_80gb"},
	"gpu_8x_a100_sxm_40gb":   {0, "", "gpu_8x_a100_sxm_40gb"},
	"gpu_1x_a100_pcie_40gb":  {3, "us-east-1,us-south-1,us-west-1", "gpu_1x_a100_pcie_40gb"},
	"gpu_1x_a100_sxm_40gb":   {1, "us-east-1", "gpu_1x_a100_sxm_40gb"},
	"gpu_1x_a10_24gb":        {2, "us-east-1,us-west-1", "gpu_1x_a10_24gb"}, // us-east-1 listed twice
	"gpu_8x_v100_16gb":       {1, "us-south-1", "gpu_8x_v100_16gb"},
	"gpu_1x_rtx_6000_24gb":   {0, "", "gpu_1x_rtx_6000_24gb"},
	"gpu_4x_a6000_48gb":      {1, "us-west-1", "gpu_4x_a6000_48gb"},
	"gpu_1x_gh200_96gb":      {2, "us-east-3,us-west-3", "gpu_1x_gh200_96gb"},
	"gpu_8x_b200_sxm6_180gb": {1, "us-south-1", "gpu_8x_b200_sxm6_180gb"},
	// Not on the page (no 8x A6000 plan): the API's name.
	"gpu_8x_a6000": {0, "", ""},
}

func pageRows(t *testing.T) []schemas.Observation {
	t.Helper()
	rows, err := parseFile(t, "testdata/full_page/input.html")
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestParseInstanceTypes(t *testing.T) {
	caps, skipped, err := parseInstanceTypes(bytes.NewReader(scrapertest.ReadFile(t, "testdata/instance_types.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != 15 || skipped["no GPU"] != 1 {
		t.Fatalf("%d instance types, skipped %v; want 15 and the CPU type", len(caps), skipped)
	}
	byName := map[string]capacity{}
	for _, c := range caps {
		byName[c.name] = c
	}
	if c := byName["gpu_8x_h100_sxm5"]; c.gpus != 8 || c.gpuName != "H100" || c.form != "SXM5" || c.memGB != 80 ||
		strings.Join(c.regions, ",") != "us-east-1,us-west-1" {
		t.Errorf("8x H100 = %+v", c)
	}
	if c := byName["gpu_8x_v100"]; c.gpuName != "Tesla V100" || c.form != "" || c.memGB != 16 {
		t.Errorf("8x V100 = %+v", c)
	}
	for _, bad := range []string{`{"error":{"code":"global/invalid-api-key","message":"API key was invalid, expired, or deleted."}}`, `{}`, `{"data":`} {
		if _, _, err := parseInstanceTypes(strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "lambda: capacity: ") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
	caps, skipped, err = parseInstanceTypes(strings.NewReader(`{"data":{"gpu_1x_a10":{"instance_type":"x"},` +
		`"gpu_2x_a10":{"instance_type":{"name":"gpu_2x_a10","gpu_description":"A10 (24 GB PCIe)","specs":{}},"regions_with_capacity_available":[]}}}`))
	if err != nil || len(caps) != 1 || caps[0].gpus != 2 || skipped["unreadable entry"] != 1 {
		t.Errorf("caps %+v skipped %v err %v; want the 2x A10 (count from its name) and one unreadable entry", caps, skipped, err)
	}
}

func TestCapacitySignals(t *testing.T) {
	caps, _, err := parseInstanceTypes(bytes.NewReader(scrapertest.ReadFile(t, "testdata/instance_types.json")))
	if err != nil {
		t.Fatal(err)
	}
	rows := pageRows(t)
	sigs := capacitySignals(caps, rows, scrapertest.ObservedAt, CapacityURL)
	if len(sigs) != len(wantCapacity) {
		t.Errorf("%d signals, want %d", len(sigs), len(wantCapacity))
	}
	bySKU := map[string]schemas.Signal{}
	for _, s := range sigs {
		bySKU[s.SKU] = s
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
		if s.Kind != schemas.SignalStock || s.Region != "" || s.Attrs["unit"] != UnitRegions || s.Provider != "lambda" ||
			s.SourceURL != CapacityURL || !s.EffectiveAt.Equal(scrapertest.ObservedAt) || s.Attrs["gpu_name"] == "" {
			t.Errorf("signal %+v", s)
		}
	}
	for sku, w := range wantCapacity {
		s, ok := bySKU[sku]
		if !ok || s.Value != w.value || s.Label != w.label || s.Attrs["price_sku"] != w.priceSKU {
			t.Errorf("%s = %+v, want %+v", sku, s, w)
		}
	}
	// A matched type names its GPU as its page row does, so that ingest gives both
	// the same canonical GPU.
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rows {
		s, ok := bySKU[o.SKU]
		if !ok {
			continue
		}
		row := cat.Canonicalize(schemas.Hint{Provider: "lambda", Name: o.GPUName, SKU: o.SKU, MemoryGB: o.GPUMemoryGB})
		sig := cat.Canonicalize(schemas.Hint{Provider: "lambda", Name: s.Attrs["gpu_name"], SKU: s.SKU,
			MemoryGB: o.GPUMemoryGB})
		if row != sig || s.Attrs["gpu_name"] != o.GPUName || s.Attrs["gpu_memory_gb"] != schemas.FormatNum(o.GPUMemoryGB) {
			t.Errorf("%s: row GPU %s, signal GPU %s (%v)", o.SKU, row, sig, s.Attrs)
		}
	}
	if g := bySKU["gpu_1x_h100_sxm_80gb"]; g.Attrs["instance_type"] != "gpu_1x_h100_sxm5" || g.Attrs["gpu_count"] != "1" {
		t.Errorf("1x H100 attrs = %v", g.Attrs)
	}
	if a := bySKU["gpu_8x_a6000"]; a.Attrs["gpu_name"] != "RTX A6000" || a.Attrs["gpu_memory_gb"] != "48" {
		t.Errorf("unmatched 8x A6000 attrs = %v", a.Attrs)
	}
	// Without the page's rows no type is matched: each keeps its API name.
	for _, s := range capacitySignals(caps, nil, scrapertest.ObservedAt, CapacityURL) {
		if s.SKU != s.Attrs["instance_type"] || s.Attrs["price_sku"] != "" {
			t.Errorf("unmatched signal %+v", s)
		}
	}
}

func TestMatchRowKeepsFormFactorsApart(t *testing.T) {
	rows := []schemas.Observation{{SKU: "gpu_1x_h100_sxm_80gb", GPUName: "NVIDIA H100 SXM", GPUCount: 1, GPUMemoryGB: 80}}
	if o := matchRow(capacity{name: "gpu_1x_h100_pcie", gpus: 1, gpuName: "H100", form: "PCIe", memGB: 80}, rows); o != nil {
		t.Errorf("an H100 PCIe type matched the page's H100 SXM row %s", o.SKU)
	}
	if o := matchRow(capacity{name: "gpu_2x_h100_sxm5", gpus: 2, gpuName: "H100", form: "SXM5", memGB: 80}, rows); o != nil {
		t.Errorf("a 2x type matched a 1x row %s", o.SKU)
	}
}

// capacityServer serves the pricing page and the instance types, the latter only to
// a request with the key as a Bearer token (Lambda's 401 answer otherwise); status,
// when set, answers every capacity request instead.
type capacityServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
	hits  int
}

func newCapacityServer(t *testing.T, status int, body string) *capacityServer {
	t.Helper()
	cs := &capacityServer{}
	page := scrapertest.ReadFile(t, "testdata/full_page/input.html")
	types := scrapertest.ReadFile(t, "testdata/instance_types.json")
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case pagePath:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
		case capacityPath:
			cs.mu.Lock()
			cs.hits++
			cs.auths = append(cs.auths, r.Header.Get("Authorization"))
			cs.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			switch {
			case status != 0:
				w.WriteHeader(status)
				_, _ = w.Write([]byte(body))
			case r.Header.Get("Authorization") != "Bearer "+testKey:
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"error":{"code":"global/invalid-api-key","message":"API key was invalid, expired, or deleted.","suggestion":"Check your API key or create a new one, then try again."}}`))
			default:
				_, _ = w.Write(types)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(cs.Close)
	return cs
}

// newCapacitySource builds the source against srv with key in LAMBDA_API_KEY and
// its logs in logs.
func newCapacitySource(t *testing.T, srv *capacityServer, key string, logs *bytes.Buffer) *Source {
	t.Helper()
	t.Setenv(EnvAPIKey, key)
	cfg := scrapertest.Config(t, Name, srv.URL+pagePath, nil)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*Source)
	s.capacityURL = srv.URL + capacityPath
	return s
}

func TestCollectCapacity(t *testing.T) {
	srv := newCapacityServer(t, 0, "")
	var logs bytes.Buffer
	src := newCapacitySource(t, srv, testKey, &logs)
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Rows) != 22 || len(sink.Signals) != len(wantCapacity) {
		t.Fatalf("rows %d, signals %d; want 22 and %d", len(sink.Rows), len(sink.Signals), len(wantCapacity))
	}
	if len(srv.auths) != 1 || srv.auths[0] != "Bearer "+testKey {
		t.Errorf("capacity requests' Authorization = %q, want one Bearer with the key", srv.auths)
	}
	for _, s := range sink.Signals {
		w := wantCapacity[s.SKU]
		if s.Value != w.value || s.Label != w.label || s.SourceURL != srv.URL+capacityPath {
			t.Errorf("%s = %+v, want %+v", s.SKU, s, w)
		}
		if strings.Contains(s.SourceURL, testKey) || strings.Contains(strings.Join(mapValues(s.Attrs), " "), testKey) {
			t.Errorf("the key is in signal %+v", s)
		}
	}
	if strings.Contains(logs.String(), testKey) {
		t.Errorf("the key is in the logs:\n%s", logs.String())
	}
	if strings.Contains(src.String(), testKey) || !strings.Contains(src.String(), EnvAPIKey) {
		t.Errorf("String() = %q", src.String())
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// A refused, failing or unreadable capacity answer is a warning: the page's rows
// are all emitted and the run is the page's (no error), the key never logged.
func TestCollectCapacityFailureKeepsPrices(t *testing.T) {
	for _, c := range []struct {
		name   string
		key    string
		status int
		body   string
		tries  int
	}{
		{"wrong key (401)", "wrong-key_0123456789", 0, "", 1},
		{"500 forever", testKey, http.StatusInternalServerError, "oops", 3},
		{"forbidden (403)", testKey, http.StatusForbidden, `{"error":{"code":"global/account-inactive","message":"Your account is inactive."}}`, 1},
		{"malformed", testKey, http.StatusOK, `{"data": {`, 1},
		{"error body", testKey, http.StatusOK, `{"error":{"code":"global/invalid-parameters","message":"Invalid request data."}}`, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newCapacityServer(t, c.status, c.body)
			var logs bytes.Buffer
			src := newCapacitySource(t, srv, c.key, &logs)
			var sink scrapertest.Sink
			if err := src.Collect(context.Background(), &sink); err != nil {
				t.Fatalf("err = %v: a capacity failure must not fail the run", err)
			}
			if len(sink.Rows) != 22 || len(sink.Signals) != 0 || srv.hits != c.tries {
				t.Errorf("rows %d, signals %d, capacity requests %d; want 22, 0, %d", len(sink.Rows), len(sink.Signals), srv.hits, c.tries)
			}
			out := logs.String()
			if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "capacity not read") {
				t.Errorf("no warning logged:\n%s", out)
			}
			if strings.Contains(out, c.key) {
				t.Errorf("the key is in the logs:\n%s", out)
			}
		})
	}
}

// Without a key, or for a caller collecting rows only, the capacity is not asked.
func TestCollectWithoutCapacity(t *testing.T) {
	srv := newCapacityServer(t, 0, "")
	var logs bytes.Buffer
	src := newCapacitySource(t, srv, "", &logs)
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil || len(sink.Rows) != 22 || srv.hits != 0 {
		t.Errorf("no key: err %v, rows %d, capacity requests %d", err, len(sink.Rows), srv.hits)
	}
	src = newCapacitySource(t, srv, testKey, &logs)
	var rows int
	if err := src.Collect(context.Background(), scrapers.EmitterFunc(func(schemas.Observation) { rows++ })); err != nil ||
		rows != 22 || srv.hits != 0 {
		t.Errorf("rows-only emitter: err %v, rows %d, capacity requests %d", err, rows, srv.hits)
	}
}

// A page that cannot be read fails the run as before; the capacity is not asked
// (its signals are named after the page's rows).
func TestCollectPageFailureAsksNoCapacity(t *testing.T) {
	t.Setenv(EnvAPIKey, testKey)
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		pagePath:     {{Status: http.StatusInternalServerError}},
		capacityPath: {{File: "testdata/instance_types.json"}},
	})
	src, err := New(scrapertest.Config(t, Name, srv.URL+pagePath, nil))
	if err != nil {
		t.Fatal(err)
	}
	src.(*Source).capacityURL = srv.URL + capacityPath
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err == nil || !strings.HasPrefix(err.Error(), "lambda: ") {
		t.Errorf("err = %v, want the page's failure", err)
	}
	if srv.Hits[capacityPath] != 0 || len(sink.Signals) != 0 {
		t.Errorf("capacity requests %d, signals %d; want none", srv.Hits[capacityPath], len(sink.Signals))
	}
}

// The page tests shared by the page sources run without a key (the environment's
// is not used).
func TestMain(m *testing.M) {
	os.Unsetenv(EnvAPIKey)
	os.Exit(m.Run())
}

package crusoe

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil/pagetest"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

const (
	capacityPath = "/v1alpha5/capacities"
	testKeyID    = "crusoe-test-access-key-4b1e"
	// testSecret is 32 bytes (0x00 … 0x1f) in raw URL-safe base64, as Crusoe issues them.
	testSecret = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
)

// want is a stock signal hand-read from testdata/capacities.json against the cards
// of testdata/full_page: quantity, the card it prices ("" for none), GPU name.
type want struct {
	value    float64
	priceSKU string
	gpuName  string
}

var wantCapacity = map[string]want{
	"crusoe:a100-80gb-sxm-ib.8x|us-east1-a":         {2, "crusoe:a100-sxm-80gb", "NVIDIA A100 SXM"},
	"crusoe:a100-80gb.1x|us-northcentral1-a":        {12, "crusoe:a100-pcie-80gb", "NVIDIA A100 PCIe"},
	"crusoe:a100-80gb.8x|us-northcentral1-a":        {1, "crusoe:a100-pcie-80gb", "NVIDIA A100 PCIe"},
	"crusoe:a100.1x|us-northcentral1-a":             {4, "", "A100"}, // 40 GB: not on the page
	"crusoe:a40.1x|us-northcentral1-a":              {7, "crusoe:a40-pcie-48gb", "NVIDIA A40 PCIe"},
	"crusoe:h100-80gb-sxm-ib.8x|us-east1-a":         {3, "crusoe:h100-hgx-80gb", "NVIDIA H100 HGX"},
	"crusoe:h100-80gb-sxm-ib.8x|us-southcentral1-a": {0, "crusoe:h100-hgx-80gb", "NVIDIA H100 HGX"},
	"crusoe:h200-141gb-sxm-ib.8x|us-east1-a":        {1, "crusoe:h200-hgx-141gb", "NVIDIA H200 HGX"},
	"crusoe:l40s-48gb.10x|us-east1-a":               {2, "crusoe:l40s-pcie-48gb", "NVIDIA L40S PCIe"},
	"crusoe:l40s-48gb.1x|us-east1-a":                {25, "crusoe:l40s-pcie-48gb", "NVIDIA L40S PCIe"}, // 20 + 5: listed twice
	"crusoe:mi300x-192gb-ib.8x|us-east1-a":          {0, "crusoe:mi300x-oam-192gb", "AMD MI300X OAM"},
}

func pageRows(t *testing.T) []schemas.Observation {
	t.Helper()
	res, err := pagetest.ParseFile(t, parsePage, "testdata/full_page/input.html")
	if err != nil {
		t.Fatal(err)
	}
	return res.Rows
}

func TestParseType(t *testing.T) {
	for in, w := range map[string]instanceType{
		"h100-80gb-sxm-ib.8x": {model: "h100", memGB: 80, sxm: true, count: 8},
		"a100.1x":             {model: "a100", count: 1},
		"l40s-48gb.10x":       {model: "l40s", memGB: 48, count: 10},
		"mi300x-192gb-ib.8x":  {model: "mi300x", memGB: 192, count: 8},
		"c1a.8x":              {model: "c1a", count: 8},
	} {
		if got, ok := parseType(in); !ok || got != w {
			t.Errorf("parseType(%q) = %+v, %v; want %+v", in, got, ok, w)
		}
	}
	for _, bad := range []string{"", "h100", "h100.x", "H100 80GB"} {
		if _, ok := parseType(bad); ok {
			t.Errorf("parseType(%q) accepted", bad)
		}
	}
}

func TestParseCapacities(t *testing.T) {
	caps, skipped, err := parseCapacities(bytes.NewReader(scrapertest.ReadFile(t, "testdata/capacities.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != 11 || skipped["CPU instance type"] != 1 {
		t.Errorf("%d capacities, skipped %v; want 11 and the c1a.8x", len(caps), skipped)
	}
	for _, bad := range []string{`{"code":"bad_credentials","message":"invalid signature"}`, `{"items":`, `[]`} {
		if _, _, err := parseCapacities(strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "crusoe: capacity: ") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
	caps, skipped, err = parseCapacities(strings.NewReader(`{"items":[{"type":"a40.1x","location":"us-east1-a"},` +
		`{"type":"a40.1x","quantity":"many"},{"type":"a40.2x","location":"us-east1-a","quantity":3,"quota_type":"a40"}]}`))
	if err != nil || len(caps) != 1 || caps[0].quantity != 3 || caps[0].quotaType != "a40" || skipped["unreadable item"] != 2 {
		t.Errorf("caps %+v skipped %v err %v", caps, skipped, err)
	}
}

func TestCapacitySignals(t *testing.T) {
	caps, _, err := parseCapacities(bytes.NewReader(scrapertest.ReadFile(t, "testdata/capacities.json")))
	if err != nil {
		t.Fatal(err)
	}
	rows := pageRows(t)
	sigs := capacitySignals(caps, rows, scrapertest.ObservedAt, CapacityURL)
	checkSignals(t, sigs, CapacityURL)
	// A matched type names its GPU as ingest reads its card's rows (name and form
	// factor, memory): both get the same canonical GPU.
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	bySKU := map[string]schemas.Observation{}
	for _, o := range rows {
		bySKU[o.SKU] = o
	}
	for _, s := range sigs {
		o, ok := bySKU[s.Attrs["price_sku"]]
		if !ok {
			continue
		}
		row := cat.Canonicalize(schemas.Hint{Provider: "crusoe", Name: o.GPUName + " " + o.Attrs["form_factor"],
			SKU: o.SKU, MemoryGB: o.GPUMemoryGB})
		sig := cat.Canonicalize(schemas.Hint{Provider: "crusoe", Name: s.Attrs["gpu_name"], SKU: s.SKU,
			MemoryGB: o.GPUMemoryGB})
		if row != sig || row == schemas.UnknownGPU || s.Attrs["gpu_memory_gb"] != schemas.FormatNum(o.GPUMemoryGB) {
			t.Errorf("%s %s: row GPU %s, signal GPU %s (%v)", s.SKU, s.Region, row, sig, s.Attrs)
		}
	}
	// Without the page's rows nothing is matched; the series are the same.
	for _, s := range capacitySignals(caps, nil, scrapertest.ObservedAt, CapacityURL) {
		if _, ok := wantCapacity[s.SKU+"|"+s.Region]; !ok || s.Attrs["price_sku"] != "" {
			t.Errorf("unmatched signal %+v", s)
		}
	}
}

func checkSignals(t *testing.T, sigs []schemas.Signal, sourceURL string) {
	t.Helper()
	if len(sigs) != len(wantCapacity) {
		t.Errorf("%d signals, want %d", len(sigs), len(wantCapacity))
	}
	for _, s := range sigs {
		k := s.SKU + "|" + s.Region
		w, ok := wantCapacity[k]
		if !ok || s.Value != w.value || s.Attrs["price_sku"] != w.priceSKU || s.Attrs["gpu_name"] != w.gpuName {
			t.Errorf("%s = %+v, want %+v", k, s, w)
		}
		if s.Kind != schemas.SignalStock || s.Attrs["unit"] != UnitInstances || s.Provider != "crusoe" ||
			s.SourceURL != sourceURL || !s.EffectiveAt.Equal(scrapertest.ObservedAt) || s.Label != "" ||
			s.Attrs["instance_type"] != strings.TrimPrefix(s.SKU, "crusoe:") {
			t.Errorf("signal %+v", s)
		}
		if err := s.Validate(); err != nil {
			t.Error(err)
		}
	}
	if s := sigs[0]; s.SKU != "crusoe:a100-80gb-sxm-ib.8x" || s.Attrs["gpu_count"] != "8" {
		t.Errorf("first signal (sorted) %+v", s)
	}
}

// The signature of a known request, computed apart from this package from Crusoe's
// documented algorithm (Python's hmac and base64.urlsafe_b64encode, padding
// stripped, as in Crusoe's documentation).
func TestSignKnownAnswer(t *testing.T) {
	for _, c := range []struct{ query, sig string }{
		{"", "x63uQYmGf_ibNourxYfiaNIi3QH9h6N_813319jlMgI"},
		// Parameters in any order are signed sorted.
		{"product_name=h100-80gb-sxm-ib.8x&location=us-east1-a", "kFbHRkGjVR9ZF7OFGL46rpyZ6Xu3J8c-yQ0ZkO7wPl8"},
	} {
		for _, secret := range []string{testSecret, testSecret + "="} { // padded or not
			got, err := sign("GET", capacityPath, c.query, "2026-11-01T12:00:00Z", testKeyID, secret)
			if err != nil || got != "Bearer 1.0:"+testKeyID+":"+c.sig {
				t.Errorf("sign(%q) = %q, %v", c.query, got, err)
			}
		}
	}
	if _, err := sign("GET", capacityPath, "", "2026-11-01T12:00:00Z", testKeyID, "not base64!"); err == nil ||
		strings.Contains(err.Error(), "not base64!") {
		t.Errorf("a bad secret: err = %v", err)
	}
}

// capacityServer serves the pricing page and the capacities; the capacities only to
// a request signed as Crusoe documents (checked here, apart from sign), Crusoe's
// 401 otherwise; status, when set, answers every capacity request instead.
type capacityServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits int
	bad  []string // why requests were refused
}

// verify checks r's signature by the documented algorithm: the payload is the path,
// the query parameters sorted, the verb and the X-Crusoe-Timestamp value, each on a
// line; the key is the secret decoded from raw URL-safe base64; the Authorization is
// "Bearer 1.0:<key id>:<raw URL-safe base64 HMAC-SHA256>".
func verify(r *http.Request) string {
	ts := r.Header.Get("X-Crusoe-Timestamp")
	at, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return "timestamp " + ts + " is not RFC 3339"
	}
	if d := time.Since(at); d > 5*time.Minute || d < -5*time.Minute {
		return "timestamp " + ts + " is not now"
	}
	parts := strings.SplitN(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), ":", 3)
	if len(parts) != 3 || parts[0] != "1.0" || parts[1] != testKeyID {
		return "authorization is not Bearer 1.0:<key id>:<signature>"
	}
	var params []string
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			params = append(params, k+"="+v)
		}
	}
	sort.Strings(params)
	key, _ := base64.RawURLEncoding.DecodeString(testSecret)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(r.URL.Path + "\n" + strings.Join(params, "&") + "\n" + r.Method + "\n" + ts + "\n"))
	if want := base64.RawURLEncoding.EncodeToString(mac.Sum(nil)); !hmac.Equal([]byte(parts[2]), []byte(want)) {
		return "signature does not match"
	}
	return ""
}

func newCapacityServer(t *testing.T, status int, body string) *capacityServer {
	t.Helper()
	cs := &capacityServer{}
	page := scrapertest.ReadFile(t, "testdata/full_page/input.html")
	answer := scrapertest.ReadFile(t, "testdata/capacities.json")
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case pagePath:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
		case capacityPath:
			why := verify(r)
			cs.mu.Lock()
			cs.hits++
			if why != "" {
				cs.bad = append(cs.bad, why)
			}
			cs.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			switch {
			case status != 0:
				w.WriteHeader(status)
				_, _ = w.Write([]byte(body))
			case why != "":
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"code":"bad_credentials","message":"` + why + `"}`))
			default:
				_, _ = w.Write(answer)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(cs.Close)
	return cs
}

func newCapacitySource(t *testing.T, srv *capacityServer, keyID, secret string, logs *bytes.Buffer) *Source {
	t.Helper()
	t.Setenv(EnvAccessKeyID, keyID)
	t.Setenv(EnvSecretKey, secret)
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
	src := newCapacitySource(t, srv, testKeyID, testSecret, &logs)
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if srv.hits != 1 || len(srv.bad) != 0 {
		t.Fatalf("capacity requests %d, refused %q", srv.hits, srv.bad)
	}
	if len(sink.Rows) != 27 {
		t.Errorf("rows = %d, want 27", len(sink.Rows))
	}
	checkSignals(t, sink.Signals, srv.URL+capacityPath)
	out := logs.String()
	for _, secret := range []string{testSecret, testKeyID} {
		if strings.Contains(out, secret) || strings.Contains(src.String(), secret) {
			t.Errorf("a key is in the logs or String():\n%s\n%s", out, src.String())
		}
		for _, s := range sink.Signals {
			if strings.Contains(s.SourceURL, secret) {
				t.Errorf("a key is in the source URL %q", s.SourceURL)
			}
		}
	}
}

// A refused, failing or unreadable capacity answer, or an incomplete key pair, is a
// warning: every page row is emitted and the run is the page's (no error); no key
// is logged.
func TestCollectCapacityFailureKeepsPrices(t *testing.T) {
	wrongSecret := base64.RawURLEncoding.EncodeToString([]byte("another secret of 32 bytes......"))
	for _, c := range []struct {
		name          string
		keyID, secret string
		status        int
		body          string
		tries         int
	}{
		{"wrong secret (401)", testKeyID, wrongSecret, 0, "", 1},
		{"500 forever", testKeyID, testSecret, http.StatusInternalServerError, "oops", 3},
		{"malformed", testKeyID, testSecret, http.StatusOK, `{"items": [`, 1},
		{"no items", testKeyID, testSecret, http.StatusOK, `{"code":"internal_error"}`, 1},
		{"secret not base64", testKeyID, "not*base64*at-all", 0, "", 0},
		{"no secret", testKeyID, "", 0, "", 0},
		{"no key id", "", testSecret, 0, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := newCapacityServer(t, c.status, c.body)
			var logs bytes.Buffer
			src := newCapacitySource(t, srv, c.keyID, c.secret, &logs)
			var sink scrapertest.Sink
			if err := src.Collect(context.Background(), &sink); err != nil {
				t.Fatalf("err = %v: a capacity failure must not fail the run", err)
			}
			if len(sink.Rows) != 27 || len(sink.Signals) != 0 || srv.hits != c.tries {
				t.Errorf("rows %d, signals %d, capacity requests %d; want 27, 0, %d", len(sink.Rows), len(sink.Signals), srv.hits, c.tries)
			}
			out := logs.String()
			if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "capacity not read") {
				t.Errorf("no warning logged:\n%s", out)
			}
			for _, secret := range []string{c.secret, c.keyID} {
				if secret != "" && strings.Contains(out, secret) {
					t.Errorf("a key is in the logs:\n%s", out)
				}
			}
		})
	}
}

// Without keys, or for a caller collecting rows only, or when the page fails, the
// capacities are not asked.
func TestCollectWithoutCapacity(t *testing.T) {
	srv := newCapacityServer(t, 0, "")
	var logs bytes.Buffer
	src := newCapacitySource(t, srv, "", "", &logs)
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil || len(sink.Rows) != 27 || srv.hits != 0 {
		t.Errorf("no keys: err %v, rows %d, capacity requests %d", err, len(sink.Rows), srv.hits)
	}
	src = newCapacitySource(t, srv, testKeyID, testSecret, &logs)
	var rows int
	if err := src.Collect(context.Background(), scrapers.EmitterFunc(func(schemas.Observation) { rows++ })); err != nil ||
		rows != 27 || srv.hits != 0 {
		t.Errorf("rows-only emitter: err %v, rows %d, capacity requests %d", err, rows, srv.hits)
	}

	t.Setenv(EnvAccessKeyID, testKeyID)
	t.Setenv(EnvSecretKey, testSecret)
	failing := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		pagePath:     {{Status: http.StatusInternalServerError}},
		capacityPath: {{File: "testdata/capacities.json"}},
	})
	s, err := New(scrapertest.Config(t, Name, failing.URL+pagePath, nil))
	if err != nil {
		t.Fatal(err)
	}
	s.(*Source).capacityURL = failing.URL + capacityPath
	if err := s.Collect(context.Background(), &sink); err == nil || failing.Hits[capacityPath] != 0 {
		t.Errorf("page failing: err %v, capacity requests %d; want the page's error and none", err, failing.Hits[capacityPath])
	}
}

// The page tests shared by the page sources run without keys (the environment's
// are not used).
func TestMain(m *testing.M) {
	os.Unsetenv(EnvAccessKeyID)
	os.Unsetenv(EnvSecretKey)
	os.Exit(m.Run())
}

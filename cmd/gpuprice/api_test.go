package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/gpuprice/gpuprice/analytics/api"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// apiConfig is writeConfig plus alert rules (logged, never sent) so that alerts
// have something to evaluate.
func apiConfig(t *testing.T, base string) string {
	cfg := writeConfig(t, base)
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`alerts:
  schedule: "0 0 1 1 *"
  rules:
    - {name: any-h100, kind: price_below, gpu: H100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: 1000}
    - {name: lambda-down, kind: source_failed, source: lambda, runs: 1}
  notifiers:
    - {name: log, kind: log}
`)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startServe runs `gpuprice serve` (no --run-now: nothing is collected while the
// test reads) and returns its base URL and a stop function.
// launchServe runs gpuprice with args (a serve command) under ctx and waits for its
// listen address; it returns the address, the exit code's channel and stderr.
func launchServe(ctx context.Context, t *testing.T, args ...string) (string, <-chan int, *syncBuffer) {
	t.Helper()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- cli.Main(ctx, args, &out, &errb) }()
	addrRE := regexp.MustCompile(`serving on (http://[0-9.:]+)`)
	var base string
	waitFor(t, "the listen address", func() bool {
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			return true
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited %d early:\n%s", code, errb.String())
		default:
		}
		return false
	})
	return base, done, &errb
}

func startServe(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	started := time.Now()
	base, done, errb := launchServe(ctx, t, append(args, "serve", "--listen", "127.0.0.1:0")...)
	stopped := false
	return base, func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case code := <-done:
			// Stopped as asked: ExitInterrupted, with nothing cut short, unless the serve
			// lived across a wall-clock boundary of the sources' schedules (RunPod and
			// Vast every 10 minutes, the others hourly): a scheduled run then started and
			// was cut short by the stop, as it should be.
			crossed := time.Now().Truncate(10 * time.Minute).After(started)
			quiet := strings.Contains(errb.String(), "no collection was running")
			cutScheduled := crossed && strings.Contains(errb.String(), "collections cut short")
			if code != cli.ExitInterrupted || !(quiet || cutScheduled) {
				t.Errorf("serve exited %d, want %d:\n%s", code, cli.ExitInterrupted, errb.String())
			}
		case <-time.After(60 * time.Second):
			t.Fatal("serve did not stop")
		}
	}
}

// apiCase is one endpoint and the CLI command that must print the same data.
type apiCase struct {
	path string
	cli  []string
}

func apiCases(at, sku string) []apiCase {
	return []apiCase{
		{"prices", []string{"prices"}},
		{"prices?gpu=h100&pricing=On-Demand", []string{"prices", "--gpu", "h100", "--pricing", "On-Demand"}},
		{"prices?provider=vast&limit=3&all-series=true", []string{"prices", "--provider", "vast", "--limit", "3", "--all-series"}},
		{"prices?interconnect=rdma", []string{"prices", "--interconnect", "rdma"}},
		{"series?provider=lambda&sku=" + sku + "&pricing=on_demand&since=2d&at=" + at + "&bar=1h",
			[]string{"series", "--provider", "lambda", "--sku", sku, "--pricing", "on_demand", "--since", "2d", "--at", at, "--bar", "1h"}},
		{"volatility?window=2d&at=" + at, []string{"volatility", "--window", "2d", "--at", at}},
		{"volatility?window=2d&at=" + at + "&by=offering&gpu=H100%20SXM&below=3", []string{"volatility", "--window", "2d", "--at", at, "--by", "offering", "--gpu", "H100 SXM", "--below", "3"}},
		{"spreads?since=2d&at=" + at, []string{"spreads", "--since", "2d", "--at", at}},
		{"tokens?params=7e9&gpu=h100", []string{"tokens", "--params", "7e9", "--gpu", "h100"}},
		{"tokens?params=7e9&mfu=0.4&tokens=1e11&limit=5", []string{"tokens", "--params", "7e9", "--mfu", "0.4", "--tokens", "1e11", "--limit", "5"}},
		{"history?gpu=h100-sxm-80gb&since=2d&at=" + at, []string{"history", "--gpu", "h100-sxm-80gb", "--since", "2d", "--at", at}},
		{"terms?gpu=h100-sxm-80gb&at=" + at, []string{"terms", "--gpu", "h100-sxm-80gb", "--at", at}},
		{"breakeven?gpu=h100-sxm-80gb&term=1y&utilisation=60%25&quote=2.1&at=" + at,
			[]string{"breakeven", "--gpu", "h100-sxm-80gb", "--term", "1y", "--utilisation", "60%", "--quote", "2.1", "--at", at}},
		{"inference?params=70e9&precision=fp8&gpu=h100", []string{"inference", "--params", "70e9", "--precision", "fp8", "--gpu", "h100"}},
		{"index?since=2d&at=" + at, []string{"index", "--since", "2d", "--at", at}},
		{"digest?gpu=H100-SXM-80GB&since=2d&at=" + at, []string{"digest", "--gpu", "H100-SXM-80GB", "--since", "2d", "--at", at}},
		{"alerts?at=" + at, []string{"alerts", "--dry-run", "--at", at}},
		{"alerts?at=" + at + "&window=30d", []string{"alerts", "--dry-run", "--at", at, "--window", "30d"}},
		{"sources", []string{"sources"}},
		{"runs?source=lambda&limit=5", []string{"runs", "--source", "lambda", "--limit", "5"}},
		{"quarantine?limit=10", []string{"quarantine", "--limit", "10"}},
		{"gpus", []string{"gpus"}},
		{"gpus?gpu=a100-80gb", []string{"gpus", "--gpu", "a100-80gb"}},
		{"fx?currency=eur", []string{"fx", "--currency", "eur"}},
	}
}

func canonicalJSON(t *testing.T, what string, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%.400s", what, err, b)
	}
	return v
}

// testAPIMatchesCLI: every /api/v1 endpoint answers the same data as the CLI's
// --format json for the same parameters, on the same store.
func testAPIMatchesCLI(t *testing.T, dsn string) {
	srv := replay(t)
	cfg := apiConfig(t, srv.URL)
	if out, code := run(t, "--config", cfg, "--store", dsn, "collect"); !collected(code) {
		t.Fatalf("collect: %s", out)
	}
	at := time.Now().UTC().Add(time.Minute).Truncate(time.Second).Format(time.RFC3339)
	var lambda []struct {
		SKU string `json:"sku"`
	}
	runJSON(t, &lambda, "--config", cfg, "--store", dsn, "prices", "--provider", "lambda", "--pricing", "on_demand", "--format", "json")
	if len(lambda) == 0 {
		t.Fatal("no lambda prices collected")
	}
	// One evaluation that is not dry: any-h100 starts firing, and the store keeps
	// that in its alert history (the "recent" of alerts).
	if out, code := run(t, "--config", cfg, "--store", dsn, "alerts", "--at", at); code != 0 || !strings.Contains(out, "any-h100") {
		t.Fatalf("alerts: exit %d\n%s", code, out)
	}
	cases := apiCases(at, lambda[0].SKU)
	want := make([]any, len(cases))
	for i, c := range cases {
		var out, errb bytes.Buffer
		args := append(append([]string{"--config", cfg, "--store", dsn}, c.cli...), "--format", "json")
		if code := cli.Main(context.Background(), args, &out, &errb); code != 0 && c.cli[0] != "alerts" {
			t.Fatalf("gpuprice %v: exit %d\n%s", c.cli, code, errb.String())
		}
		want[i] = canonicalJSON(t, strings.Join(c.cli, " "), out.Bytes())
	}
	t.Setenv(api.TokenEnv, "admin-token")
	base, stop := startServe(t, "--config", cfg, "--store", dsn)
	defer stop()
	doc := openAPIDoc(t, base)
	checkSecurity(t, doc, base)
	if code, body := get(t, base+"/api/v1/quarantine"); code != http.StatusUnauthorized {
		t.Errorf("/api/v1/quarantine without the admin token: %d %.200s, want 401", code, body)
	}
	for i, c := range cases {
		code, body := getToken(t, base+"/api/v1/"+c.path, "admin-token")
		if code != http.StatusOK {
			t.Errorf("/api/v1/%s: %d %.300s", c.path, code, body)
			continue
		}
		// The answer is what /openapi.json says it is.
		checkAnswer(t, doc, "GET", "/api/v1/"+c.path, code, body)
		var env struct {
			Data    json.RawMessage   `json:"data"`
			Matched []json.RawMessage `json:"matched"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil || env.Data == nil || env.Matched == nil {
			t.Errorf("/api/v1/%s: no {data, matched} envelope: %v %.200s", c.path, err, body)
			continue
		}
		got := canonicalJSON(t, c.path, env.Data)
		if c.cli[0] == "alerts" && !strings.Contains(string(env.Data), `"recent":[{"rule":"any-h100"`) {
			t.Errorf("/api/v1/%s: no alert history: %.600s", c.path, env.Data)
		}
		if c.cli[0] == "series" && !strings.Contains(string(env.Data), `"close"`) {
			t.Errorf("/api/v1/%s: a series without bars: %.300s", c.path, env.Data)
		}
		if c.cli[0] == "sources" { // last runs the same; the API's server has no store trouble
			got, want[i] = stripKey(got, "endpoint"), stripKey(want[i], "endpoint")
		}
		if a, ok := got.([]any); ok && len(a) == 0 && c.cli[0] != "quarantine" {
			t.Errorf("/api/v1/%s: empty: the comparison would prove nothing", c.path)
		}
		if !reflect.DeepEqual(got, want[i]) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want[i])
			t.Errorf("/api/v1/%s differs from gpuprice %s --format json:\n api %.600s\n cli %.600s", c.path, strings.Join(c.cli, " "), g, w)
		}
		if strings.Contains(c.path, "gpu=h100") && !strings.Contains(body, `"how":"family"`) && !strings.Contains(body, `"how":"case"`) {
			t.Errorf("/api/v1/%s does not say what h100 matched: %.300s", c.path, body)
		}
	}
}

func stripKey(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, key)
		for k := range x {
			x[k] = stripKey(x[k], key)
		}
	case []any:
		for i := range x {
			x[i] = stripKey(x[i], key)
		}
	}
	return v
}

func TestAPIMatchesCLIDuckDB(t *testing.T) {
	testAPIMatchesCLI(t, "duckdb://"+filepath.Join(t.TempDir(), "api.duckdb"))
}

func TestIntegrationClickHouseAPIMatchesCLI(t *testing.T) {
	dsn := chtest.FreshDSN(t, "api")
	testAPIMatchesCLI(t, dsn)
}

// rawGet GETs u with exactly hdr (no Accept-Encoding added, nothing decompressed).
func rawGet(t *testing.T, u string, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func doReq(t *testing.T, method, u string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestAPIValidationAndDocument: every parameter is validated (400 naming it), the
// OpenAPI document lists exactly the routes and the parameters each accepts,
// answers from bars carry an ETag, collect needs the token, and the embedded
// store held by serve is read through its API by the CLI.
func TestAPIValidationAndDocument(t *testing.T) {
	srv := replay(t)
	cfg := apiConfig(t, srv.URL)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "validate.duckdb")
	if out, code := run(t, "--config", cfg, "--store", dsn, "collect"); !collected(code) {
		t.Fatalf("collect: %s", out)
	}
	bandsBesideExample(t, dsn)
	at := time.Now().UTC().Add(time.Minute).Truncate(time.Second).Format(time.RFC3339)
	// What the CLI prints before serve holds the file, to compare with after.
	before := map[string]string{}
	cliReads := [][]string{
		{"prices", "--gpu", "h100", "--format", "csv"},
		{"prices"},
		{"volatility", "--window", "2d", "--at", at, "--format", "json"},
		{"history", "--gpu", "H100 SXM", "--since", "2d", "--at", at, "--format", "markdown"},
		{"risk", "--gpu", "a100 40gb", "--changes", "--since", "2026-10-26", "--format", "json"},
		{"risk", "--sku", "p4d.24xlarge", "--region", "us-east-1", "--format", "csv"},
	}
	for _, args := range cliReads {
		out, _, code := runErr(append([]string{"--config", cfg, "--store", dsn}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		before[strings.Join(args, " ")] = out
	}
	if n := strings.Count(before["risk --gpu a100 40gb --changes --since 2026-10-26 --format json"], `"sku": "p4d.24xlarge"`); n != 3 {
		t.Fatalf("risk --gpu a100 40gb: %d moves, want the 3 of p4d.24xlarge", n)
	}

	const token = "test-token-9f8e7d6c5b4a"
	t.Setenv("GPUPRICE_API_TOKEN", token)
	// Another process, as in real use: DuckDB's lock is per process.
	base, stop := startServeProcess(t, "--config", cfg, "--store", dsn)
	defer stop()

	// The CLI while serve holds the DuckDB file: the same output, through the API,
	// said in one line on stderr.
	for _, args := range cliReads {
		out, errb, code := runErr(append([]string{"--config", cfg, "--store", dsn}, args...)...)
		key := strings.Join(args, " ")
		if code != 0 || out != before[key] {
			t.Errorf("%s while serve runs: exit %d\n--- got ---\n%s\n--- want ---\n%s\nstderr: %s", key, code, out, before[key], errb)
		}
		if !strings.Contains(errb, "the store is held by gpuprice serve; asking it at "+base) {
			t.Errorf("%s: stderr does not say it asked the server: %q", key, errb)
		}
	}
	if _, errb, code := runErr("--config", cfg, "--store", dsn, "prices", "--gpu", "H1OO"); code == 0 || !strings.Contains(errb, "--gpu \"H1OO\": no such gpu; did you mean") {
		t.Errorf("a bad name through the API: exit %d %q", code, errb)
	}

	doc := openAPIDoc(t, base)
	for _, p := range []string{"/api/prices?gpu=h100", "/api/runs"} {
		code, _, body := doReq(t, "GET", base+p, nil)
		if code != 200 {
			t.Errorf("%s: %d", p, code)
		}
		checkAnswer(t, doc, "GET", p, code, body)
	}
	for _, c := range []struct{ path, param string }{
		{"prices?colour=red", "colour"},
		{"prices?gpu=H1OO", "gpu"},
		{"prices?gpu=%ff", "gpu"},
		{"prices?gpu=%zz", "query"},
		{"prices?gpu=h100&gpu=a100", "gpu"},
		{"prices?limit=0", "limit"},
		{"prices?limit=100001", "limit"},
		{"prices?limit=ten", "limit"},
		{"prices?pricing=preemptible", "pricing"},
		{"prices?tier=boutique", "tier"},
		{"prices?interconnect=infinband", "interconnect"},
		{"prices?provider=lamdba", "provider"},
		{"prices?region=nowhere-9", "region"},
		{"prices?stale=soon", "stale"},
		{"prices?all-series=maybe", "all-series"},
		{"prices?format=xml", "format"},
		{"volatility?window=7x", "window"},
		{"volatility?window=-1d", "window"},
		{"volatility?window=5000d", "window"},
		{"volatility?bar=5m", "bar"},
		{"volatility?by=colour", "by"},
		{"volatility?below=NaN", "below"},
		{"volatility?at=yesterday", "at"},
		{"spreads?since=0d", "since"},
		{"tokens", "params"},
		{"tokens?params=7e9&mfu=1.5", "mfu"},
		{"tokens?params=7e9&precision=fp4", "precision"},
		{"history", "gpu"},
		{"terms", "gpu"},
		{"terms?gpu=h100", "gpu"},
		{"breakeven?gpu=H100-SXM-80GB&term=2w", "term"},
		{"breakeven?gpu=H100-SXM-80GB&utilisation=160%25", "utilisation"},
		{"inference", "params"},
		{"inference?params=70e9&precision=fp4", "precision"},
		{"inference?params=70e9&layers=80", "layers"},
		{"history?gpu=h100", "gpu"},
		{"history?gpu=H100-SXM-80GB&cheapest=-1", "cheapest"},
		{"series?provider=lambda", "sku"},
		{"alerts?format=csv", "format"},
		{"alerts?window=7x", "window"},
		{"runs?limit=0", "limit"},
		{"fx?currency=euro", "currency"},
		{"gpus?gpu=Z9000", "gpu"},
		{"digest", "gpu"},
		{"digest?gpu=h100&since=soon", "since"},
	} {
		code, _, body := doReq(t, "GET", base+"/api/v1/"+c.path, nil)
		checkAnswer(t, doc, "GET", "/api/v1/"+c.path, code, body)
		var e struct {
			Error     string `json:"error"`
			Parameter string `json:"parameter"`
		}
		if err := json.Unmarshal([]byte(body), &e); code != http.StatusBadRequest || err != nil || e.Parameter != c.param || e.Error == "" {
			t.Errorf("/api/v1/%s: %d %s: want 400 naming %q", c.path, code, body, c.param)
		}
	}
	if _, _, body := doReq(t, "GET", base+"/api/v1/prices?gpu=H1OO", nil); !strings.Contains(body, `"did_you_mean":["H100"`) {
		t.Errorf("no suggestions: %s", body)
	}
	if code, _, body := doReq(t, "GET", base+"/api/v1/nothing", nil); code != 404 || !strings.Contains(body, `"error"`) {
		t.Errorf("unknown endpoint: %d %s", code, body)
	}
	if code, hdr, _ := doReq(t, "POST", base+"/api/v1/prices", nil); code != 405 || hdr.Get("Allow") != "GET" {
		t.Errorf("POST prices: %d, Allow %q", code, hdr.Get("Allow"))
	}

	// ETag and Cache-Control on answers from bars; 304 when unchanged.
	code, hdr, _ := doReq(t, "GET", base+"/api/v1/volatility?window=2d&at="+at, nil)
	etag := hdr.Get("ETag")
	if code != 200 || etag == "" || !strings.Contains(hdr.Get("Cache-Control"), "max-age") {
		t.Errorf("volatility: %d, ETag %q, Cache-Control %q", code, etag, hdr.Get("Cache-Control"))
	}
	if code, _, body := doReq(t, "GET", base+"/api/v1/volatility?window=2d&at="+at, map[string]string{"If-None-Match": etag}); code != 304 || body != "" {
		t.Errorf("If-None-Match: %d %q", code, body)
	}

	// Compressed answers: gzip only when asked, decoding to the very bytes of the
	// identity answer, with Vary and the Content-Length of what is sent; the ETag
	// of the gzip answer (weak) and of the identity one both revalidate.
	for _, p := range []string{"/api/v1/prices", "/api/v1/volatility?window=2d&at=" + at} {
		code, hdr, plain := rawGet(t, base+p, nil)
		if code != 200 || hdr.Get("Content-Encoding") != "" || !strings.Contains(hdr.Get("Vary"), "Accept-Encoding") || len(plain) < 1024 ||
			hdr.Get("Content-Length") != strconv.Itoa(len(plain)) || !json.Valid(plain) {
			t.Fatalf("%s without Accept-Encoding: %d, Content-Encoding %q, Vary %q, Content-Length %q of %d bytes",
				p, code, hdr.Get("Content-Encoding"), hdr.Get("Vary"), hdr.Get("Content-Length"), len(plain))
		}
		for _, ae := range []string{"gzip;q=0", "br", "identity"} {
			if _, h, b := rawGet(t, base+p, map[string]string{"Accept-Encoding": ae}); h.Get("Content-Encoding") != "" || !bytes.Equal(b, plain) {
				t.Errorf("%s, Accept-Encoding %q: Content-Encoding %q", p, ae, h.Get("Content-Encoding"))
			}
		}
		code, zh, wire := rawGet(t, base+p, map[string]string{"Accept-Encoding": "br;q=1, gzip;q=0.8"})
		if code != 200 || zh.Get("Content-Encoding") != "gzip" || !strings.Contains(zh.Get("Vary"), "Accept-Encoding") ||
			zh.Get("Content-Length") != strconv.Itoa(len(wire)) || len(wire) >= len(plain) {
			t.Fatalf("%s gzip: %d, Content-Encoding %q, Vary %q, Content-Length %q of %d bytes (identity %d)",
				p, code, zh.Get("Content-Encoding"), zh.Get("Vary"), zh.Get("Content-Length"), len(wire), len(plain))
		}
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			t.Fatal(err)
		}
		if dec, err := io.ReadAll(zr); err != nil || !bytes.Equal(dec, plain) {
			t.Errorf("%s: gzip answer decodes to %d bytes (%v), not the identity answer's %d", p, len(dec), err, len(plain))
		}
		// zstd when the client names it (browsers do), preferred on a tie.
		for _, ae := range []string{"gzip, deflate, br, zstd", "zstd", "zstd;q=1, gzip;q=0.5"} {
			code, sh, swire := rawGet(t, base+p, map[string]string{"Accept-Encoding": ae})
			if code != 200 || sh.Get("Content-Encoding") != "zstd" || !strings.Contains(sh.Get("Vary"), "Accept-Encoding") ||
				sh.Get("Content-Length") != strconv.Itoa(len(swire)) || len(swire) >= len(plain)/2 {
				t.Fatalf("%s, Accept-Encoding %q: %d, Content-Encoding %q, Vary %q, Content-Length %q of %d bytes (identity %d)",
					p, ae, code, sh.Get("Content-Encoding"), sh.Get("Vary"), sh.Get("Content-Length"), len(swire), len(plain))
			}
			zd, err := zstd.NewReader(bytes.NewReader(swire), zstd.WithDecoderMaxWindow(8<<20))
			if err != nil {
				t.Fatal(err)
			}
			if dec, err := io.ReadAll(zd); err != nil || !bytes.Equal(dec, plain) {
				t.Errorf("%s: zstd answer decodes to %d bytes (%v), not the identity answer's %d", p, len(dec), err, len(plain))
			}
			zd.Close()
			if strong := hdr.Get("ETag"); strong != "" && sh.Get("ETag") != "W/"+strong {
				t.Errorf("zstd ETag %q, identity %q", sh.Get("ETag"), strong)
			}
		}
		if code, h, _ := rawGet(t, base+p, map[string]string{"Accept-Encoding": "zstd;q=0.5, gzip"}); code != 200 || h.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s, gzip preferred: Content-Encoding %q", p, h.Get("Content-Encoding"))
		}
		if strings.HasPrefix(p, "/api/v1/volatility") {
			strong := hdr.Get("ETag")
			if zh.Get("ETag") != "W/"+strong {
				t.Errorf("gzip ETag %q, identity %q", zh.Get("ETag"), strong)
			}
			for _, tag := range []string{strong, zh.Get("ETag")} {
				for _, ae := range []string{"", "gzip", "zstd"} {
					if code, _, b := rawGet(t, base+p, map[string]string{"If-None-Match": tag, "Accept-Encoding": ae}); code != 304 || len(b) != 0 {
						t.Errorf("If-None-Match %s, Accept-Encoding %q: %d", tag, ae, code)
					}
				}
			}
			if code, _, _ := rawGet(t, base+p, map[string]string{"If-None-Match": `"other"`, "Accept-Encoding": "gzip"}); code != 200 {
				t.Errorf("If-None-Match of another answer: %d", code)
			}
		}
	}
	if code, hdr, body := doReq(t, "GET", base+"/api/v1/spreads?since=2d&at="+at+"&format=csv", nil); code != 200 ||
		!strings.HasPrefix(body, "gpu,pricing,day,hyperscaler,specialist") || !strings.HasPrefix(hdr.Get("Content-Type"), "text/csv") {
		t.Errorf("spreads csv: %d %q %.200s", code, hdr.Get("Content-Type"), body)
	}

	// The OpenAPI document: exactly the routes, and for each GET route exactly the
	// parameters the server accepts (the 400 for an unknown one lists them).
	code, _, docText := doReq(t, "GET", base+"/openapi.json", nil)
	var spec struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			Deprecated bool `json:"deprecated"`
			Parameters []struct {
				Name string `json:"name"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal([]byte(docText), &spec); code != 200 || err != nil || !strings.HasPrefix(spec.OpenAPI, "3.") {
		t.Fatalf("/openapi.json: %d %v", code, err)
	}
	routes := map[string]string{}
	for _, r := range cli.APIRoutes() {
		routes[r[1]] = strings.ToLower(r[0])
	}
	for p, ops := range spec.Paths {
		for m := range ops {
			if routes[p] != m {
				t.Errorf("/openapi.json documents %s %s, which the server does not route", m, p)
			}
		}
	}
	knownRE := regexp.MustCompile(`\(known: ([^)]*)\)`)
	for p, m := range routes {
		op, ok := spec.Paths[p][m]
		if !ok {
			t.Errorf("route %s %s is not in /openapi.json", m, p)
			continue
		}
		if m != "get" || p == "/openapi.json" || op.Deprecated { // the first API's aliases keep their own names
			continue
		}
		code, _, body := doReq(t, "GET", base+p+"?zz_unknown=1", nil)
		if p == "/api/v1/quarantine" { // needs the admin token, which this request has not
			if code != http.StatusForbidden && code != http.StatusUnauthorized {
				t.Errorf("%s without the admin token: %d %s, want 401 or 403", p, code, body)
			}
			continue
		}
		km := knownRE.FindStringSubmatch(body)
		if km == nil {
			t.Errorf("%s?zz_unknown=1: %s: want a 400 listing the known parameters", p, body)
			continue
		}
		accepted := map[string]bool{}
		for _, n := range strings.Split(km[1], ", ") {
			accepted[n] = true
		}
		documented := map[string]bool{}
		for _, prm := range op.Parameters {
			documented[prm.Name] = true
			if !accepted[prm.Name] {
				t.Errorf("%s documents parameter %q, which the server does not accept", p, prm.Name)
			}
		}
		for n := range accepted {
			if !documented[n] {
				t.Errorf("%s accepts parameter %q, which /openapi.json does not document", p, n)
			}
		}
	}

	// collect: the bearer token, compared in constant time, never printed.
	if code, hdr, _ := doReq(t, "POST", base+"/api/v1/collect?source=lambda", nil); code != 401 || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("collect without a token: %d", code)
	}
	if code, _, _ := doReq(t, "POST", base+"/api/v1/collect?source=lambda", map[string]string{"Authorization": "Bearer wrong"}); code != 401 {
		t.Errorf("collect with a wrong token: %d", code)
	}
	auth := map[string]string{"Authorization": "Bearer " + token}
	if code, _, body := doReq(t, "POST", base+"/api/v1/collect?source=lamda", auth); code != 400 || !strings.Contains(body, "lambda") {
		t.Errorf("collect of a misspelt source: %d %s", code, body)
	}
	code, _, body := doReq(t, "POST", base+"/api/v1/collect?source=lambda", auth)
	var runs struct {
		Data []struct {
			Source string `json:"source"`
			Status string `json:"status"`
			Rows   int    `json:"rows_accepted"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &runs); code != 200 || err != nil || len(runs.Data) != 1 || runs.Data[0].Source != "lambda" || runs.Data[0].Rows == 0 {
		t.Errorf("collect: %d %s", code, body)
	}
	checkAnswer(t, doc, "POST", "/api/v1/collect", code, body)

	// Writing commands hand their work to serve (collect, with the token) or say
	// what to do.
	if out, errb, code := runErr("--config", cfg, "--store", dsn, "collect", "--source", "lambda"); !collected(code) ||
		!regexp.MustCompile(`(?m)^lambda\s+ok\s+[1-9]`).MatchString(out) || !strings.Contains(errb, "asking it at "+base+" to collect") {
		t.Errorf("collect while serve runs: exit %d\n%s\n%s", code, out, errb)
	}
	csvFile := filepath.Join(t.TempDir(), "p.csv")
	if err := os.WriteFile(csvFile, []byte(before["prices --gpu h100 --format csv"]), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errb, code := runErr("--config", cfg, "--store", dsn, "import", "csv", csvFile); code == 0 ||
		!strings.Contains(errb, "held by gpuprice serve at "+base) || !strings.Contains(errb, "stop serve first") {
		t.Errorf("import while serve runs: exit %d %q", code, errb)
	}
	stop()
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), "serve.json")); !os.IsNotExist(err) {
		t.Errorf("serve.json left behind after serve stopped: %v", err)
	}
}

// TestHelperServe is not a test: startServeProcess runs the test binary with it to
// have `gpuprice serve` in a process of its own.
func TestHelperServe(t *testing.T) {
	args := os.Getenv("GPUPRICE_HELPER_SERVE_ARGS")
	if args == "" {
		t.Skip("helper process for startServeProcess")
	}
	var a []string
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(cli.Main(ctx, a, os.Stdout, os.Stderr))
}

// startServeProcess runs `gpuprice serve` in another process and returns its base
// URL and a function that stops it (SIGTERM) and waits.
func startServeProcess(t *testing.T, args ...string) (string, func()) {
	return startServeProcessB(t, args...)
}

// startServeProcessB is startServeProcess for tests and benchmarks.
func startServeProcessB(t testing.TB, args ...string) (string, func()) {
	t.Helper()
	a, _ := json.Marshal(append(args, "serve", "--listen", "127.0.0.1:0"))
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperServe$")
	cmd.Env = append(os.Environ(), "GPUPRICE_HELPER_SERVE_ARGS="+string(a))
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	addrRE := regexp.MustCompile(`serving on (http://[0-9.:]+)`)
	var base string
	waitFor(t, "the listen address of serve", func() bool {
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			return true
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited early: %v\n%s", err, errb.String())
		default:
		}
		return false
	})
	stopped := false
	return base, func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitInterrupted {
				t.Errorf("serve on SIGTERM: %v, want exit status %d\n%s", err, cli.ExitInterrupted, errb.String())
			}
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatal("serve did not stop on SIGTERM")
		}
		if strings.Contains(out.String()+errb.String(), os.Getenv("GPUPRICE_API_TOKEN")) && os.Getenv("GPUPRICE_API_TOKEN") != "" {
			t.Errorf("serve printed the API token")
		}
	}
}

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// readFixture reads a recorded provider response from the sources' testdata
// (scrapers/<p>).
func readFixture(tb testing.TB, p string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "scrapers", p))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// replayHandler answers with recorded provider responses from the sources'
// testdata: two Azure pages linked by NextPageLink, a Vast offer search, the Lambda
// pricing page and the ECB rates; other (nil: 404) answers every other path.
func replayHandler(tb testing.TB, other http.HandlerFunc) http.HandlerFunc {
	tb.Helper()
	azure1, azure2 := readFixture(tb, "azure/testdata/page1/input.json"), readFixture(tb, "azure/testdata/page2/input.json")
	vast, lambda := readFixture(tb, "vast/testdata/mixed_gpus/input.json"), readFixture(tb, "lambda/testdata/full_page/input.html")
	ecb := readFixture(tb, "fx/testdata/hist_90d/input.xml")
	if other == nil {
		other = http.NotFound
	}
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/retail/prices" && r.URL.Query().Get("$skip") != "":
			w.Write(azure2)
		case r.URL.Path == "/api/retail/prices":
			w.Write(azure1)
		case r.URL.Path == "/api/v0/bundles/":
			w.Write(vast)
		case r.URL.Path == "/stats/eurofxref/eurofxref-hist-90d.xml":
			w.Header().Set("Content-Type", "text/xml")
			w.Write(ecb)
		case r.URL.Path == "/service/gpu-cloud":
			w.Header().Set("Content-Type", "text/html")
			w.Write(lambda)
		default:
			other(w, r)
		}
	}
}

// replay serves the recorded provider responses of replayHandler.
func replay(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(replayHandler(t, nil))
	t.Cleanup(srv.Close)
	return srv
}

func writeConfig(t *testing.T, base string) string {
	t.Helper()
	never := neverSchedule
	dir := t.TempDir()
	cfg := fmt.Sprintf(`data_dir: %s
http: {timeout: 5s, retries: 2}
sources:
  azure: {endpoint: %s/api/retail/prices, schedule: '%s'}
  vast: {endpoint: %s/api/v0/bundles/, schedule: '%s'}
  lambda: {endpoint: %s/service/gpu-cloud, schedule: '%s'}
  fx: {endpoint: %s/stats/eurofxref/eurofxref-hist-90d.xml, schedule: '%s'}
`, dir, base, never, base, never, base, never, base, never)
	for _, extra := range disabledOthers() {
		cfg += "  " + extra + ": {enabled: false}\n"
	}
	p := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// appendConfig adds text (YAML sections) to the configuration file cfg.
func appendConfig(t *testing.T, cfg, text string) {
	t.Helper()
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// neverSchedule is the test configs' schedule for every source: midnight on 1
// January, so that a `serve` under test never starts a scheduled collection of its
// own (the sources' defaults, every 10 minutes or hourly, would fire in the middle of
// a test that crosses the boundary). Tests of scheduling set their own.
const neverSchedule = "0 0 1 1 *"

// disabledOthers lists registered sources other than the three replayed here.
func disabledOthers() []string {
	var out []string
	var buf bytes.Buffer
	file := filepath.Join(os.TempDir(), "gpuprice-sources-"+randHex()+".duckdb")
	defer os.Remove(file + ".wal")
	defer os.Remove(file)
	cli.Main(context.Background(), []string{"sources", "--store", "duckdb://" + file}, &buf, &buf)
	for _, line := range strings.Split(buf.String(), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "azure" || f[0] == "vast" || f[0] == "lambda" || strings.HasPrefix(line, "time=") {
			continue
		}
		out = append(out, f[0])
	}
	return out
}

func randHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, &out, &errb)
	if code != 0 {
		t.Logf("gpuprice %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String(), code
}

var stamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// normalizeCSV replaces the collection's own timestamps (between start and end) with
// NOW, so two collections of the same recordings compare equal.
func normalizeCSV(t *testing.T, s string, start, end time.Time) string {
	return stamp.ReplaceAllStringFunc(s, func(m string) string {
		ts, err := time.Parse(time.RFC3339, m)
		if err == nil && !ts.Before(start.Truncate(time.Second)) && !ts.After(end) {
			return "NOW"
		}
		return m
	})
}

func collectAndExport(t *testing.T, srv *httptest.Server, storeDSN string) string {
	t.Helper()
	cfg := writeConfig(t, srv.URL)
	start := time.Now()
	out, code := run(t, "--config", cfg, "--store", storeDSN, "collect")
	if !collected(code) {
		t.Fatalf("collect failed")
	}
	for _, src := range []string{"azure", "vast", "lambda"} {
		if !regexp.MustCompile(`(?m)^` + src + `\s+(ok|degraded)\s+[1-9]`).MatchString(out) {
			t.Errorf("collect summary has no rows for %s:\n%s", src, out)
		}
	}
	assertBarsCover(t, storeDSN, "collect")
	// Collecting the same recordings again must not add a row to any answer.
	if _, code := run(t, "--config", cfg, "--store", storeDSN, "collect"); !collected(code) {
		t.Fatal("second collect failed")
	}
	if fxOut, _ := run(t, "--config", cfg, "--store", storeDSN, "fx", "--currency", "EUR"); !regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d\s+EUR\s+1\.\d+\s+ecb`).MatchString(fxOut) {
		t.Errorf("ECB rates not stored:\n%s", fxOut)
	}
	csvOut, code := run(t, "--config", cfg, "--store", storeDSN, "prices", "--format", "csv")
	if code != 0 {
		t.Fatal("prices failed")
	}
	return normalizeCSV(t, csvOut, start, time.Now())
}

func parseCSV(t *testing.T, s string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func checkPrices(t *testing.T, recs [][]string) {
	t.Helper()
	if len(recs) < 20 {
		t.Fatalf("only %d CSV rows", len(recs))
	}
	head := strings.Join(recs[0], ",")
	if !strings.HasPrefix(head, "observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind") {
		t.Fatalf("header %q", head)
	}
	providers := map[string]bool{}
	prev := -1.0
	// Without --pricing, prices are grouped by pricing kind (each kind once, in one
	// run of rows), cheapest first within each.
	kind, kindsSeen := "", map[string]bool{}
	for _, r := range recs[1:] {
		providers[r[1]] = true
		if r[8] != kind {
			if kindsSeen[r[8]] {
				t.Fatalf("pricing kind %s appears in two groups", r[8])
			}
			kind, kindsSeen[r[8]], prev = r[8], true, -1
		}
		var p float64
		fmt.Sscan(r[10], &p)
		if p < prev {
			t.Fatalf("not cheapest first: %v after %v", p, prev)
		}
		prev = p
	}
	for _, p := range []string{"azure", "vast", "lambda"} {
		if !providers[p] {
			t.Errorf("no %s rows", p)
		}
	}
}

func TestCollectPricesDuckDB(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "gpuprice.duckdb")
	got := collectAndExport(t, replay(t), dsn)
	recs := parseCSV(t, got)
	checkPrices(t, recs)

	// Bars were rebuilt after the collection: analytics read them with no `rollup` run.
	hist, code := run(t, "--store", dsn, "history", "--gpu", "H100-SXM-80GB", "--pricing", "on_demand")
	if code != 0 || !regexp.MustCompile(`(?m)^lambda\s+\d+\s+\d+\s+\d`).MatchString(hist) {
		t.Errorf("history after collect has no lambda H100 row:\n%s", hist)
	}

	// The export re-imports into a fresh store as the same prices.
	file := filepath.Join(t.TempDir(), "prices.csv")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(got, "NOW", time.Now().UTC().Format(time.RFC3339))), 0o600); err != nil {
		t.Fatal(err)
	}
	fresh := "duckdb://" + filepath.Join(t.TempDir(), "fresh.duckdb")
	noFX := filepath.Join(t.TempDir(), "nofx.yaml")
	if err := os.WriteFile(noFX, []byte("sources: {fx: {enabled: false}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // twice: importing again adds nothing
		if out, code := run(t, "--config", noFX, "--store", fresh, "import", "csv", file); code != 0 {
			t.Fatalf("import failed: %s", out)
		}
	}
	back, _ := run(t, "--store", fresh, "prices", "--format", "csv")
	brecs := parseCSV(t, back)
	if len(brecs) != len(recs) {
		t.Fatalf("re-import gave %d rows, export had %d", len(brecs), len(recs))
	}
	for i := 1; i < len(recs); i++ {
		a, b := recs[i], brecs[i]
		// every column but observed_at, source_kind and source_url is kept
		for _, c := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16, 17, 18, 19} {
			if a[c] != b[c] {
				t.Fatalf("row %d column %d: exported %q, re-imported %q", i, c, a[c], b[c])
			}
		}
		if b[11] != "import" {
			t.Fatalf("re-imported row has source_kind %q", b[11])
		}
	}
}

func TestIntegrationClickHouseCollectPricesSame(t *testing.T) {
	dsn := chtest.FreshDSN(t, "e2e")
	srv := replay(t) // one server, so source URLs match
	onCH := collectAndExport(t, srv, dsn)
	onDuck := collectAndExport(t, srv, "duckdb://"+filepath.Join(t.TempDir(), "gpuprice.duckdb"))
	checkPrices(t, parseCSV(t, onCH))
	if onCH != onDuck {
		t.Errorf("prices differ between ClickHouse and DuckDB\n--- clickhouse ---\n%s\n--- duckdb ---\n%s", onCH, onDuck)
	}
}

func TestEverySourceFailedExitsNonZero(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	cfg := writeConfig(t, srv.URL)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "x.duckdb")
	out, code := run(t, "--config", cfg, "--store", dsn, "collect")
	if code == 0 {
		t.Fatalf("exit 0 although every source failed:\n%s", out)
	}
	for _, src := range []string{"azure", "vast", "lambda"} {
		if !regexp.MustCompile(`(?m)^` + src + `\s+failed\s+0`).MatchString(out) {
			t.Errorf("%s not reported failed:\n%s", src, out)
		}
	}
	runs, _ := run(t, "--config", cfg, "--store", dsn, "runs")
	if strings.Count(runs, "failed") != 3 || !strings.Contains(runs, "HTTP 500") {
		t.Errorf("run records:\n%s", runs)
	}
}

func TestConfigRejectsUnknownKeysAndSecrets(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("ingest: {batch_sise: 10}\n"), 0o600)
	var out, errb bytes.Buffer
	if code := cli.Main(context.Background(), []string{"--config", bad, "version"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "batch_sise") {
		t.Errorf("unknown key accepted: %d %s", code, errb.String())
	}
	secret := filepath.Join(dir, "secret.yaml")
	os.WriteFile(secret, []byte("store: clickhouse://u:hunter2@db:9000/x\n"), 0o600)
	errb.Reset()
	if code := cli.Main(context.Background(), []string{"--config", secret, "version"}, &out, &errb); code == 0 || strings.Contains(errb.String(), "hunter2") {
		t.Errorf("password in config accepted or printed: %d %s", code, errb.String())
	}
}

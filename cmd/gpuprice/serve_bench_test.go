package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/loadgen"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// BenchmarkServeUnderLoad measures `gpuprice serve` (its own process, the embedded
// DuckDB store) under 200 concurrent clients for 30 s per endpoint: requests/s and
// p99 of /api/v1/prices, /api/v1/volatility and the web app's /, and fails on any
// error. The store holds SYNTHETIC history (storetest.Generate; benchmarks only):
// GPUPRICE_BENCH_SERIES series (default 600) observed hourly for 14 days, rolled up.
// GPUPRICE_BENCH_CLIENTS and GPUPRICE_BENCH_SECONDS change the load.
//
//	go test ./cmd/gpuprice -run '^$' -bench ServeUnderLoad -benchtime 1x
func BenchmarkServeUnderLoad(b *testing.B) {
	env := func(k string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil && v > 0 {
			return v
		}
		return def
	}
	series, clients, secs := env("GPUPRICE_BENCH_SERIES", 600), env("GPUPRICE_BENCH_CLIENTS", 200), env("GPUPRICE_BENCH_SECONDS", 30)
	dir := b.TempDir()
	dsn := "duckdb://" + filepath.Join(dir, "bench.duckdb")
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	end := time.Now().UTC().Truncate(time.Hour)
	spec := storetest.GenSpec{Series: series, Steps: 14 * 24, Start: end.Add(-14 * 24 * time.Hour), Step: time.Hour, Seed: 7}
	genStart := time.Now()
	if err := storetest.Generate(spec, 20000, func(obs []schemas.Observation) error { return st.WriteObservations(ctx, obs) }); err != nil {
		b.Fatal(err)
	}
	if err := st.(store.Rollups).Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		b.Fatal(err)
	}
	st.Close()
	b.Logf("store: %d synthetic observations written and rolled up in %s", series*spec.Steps, time.Since(genStart).Round(time.Second))
	cfg := filepath.Join(dir, "gpuprice.yaml")
	text := "data_dir: " + dir + "\nsources:\n"
	for _, n := range append(disabledOthers(), "azure", "vast") {
		text += "  " + n + ": {enabled: false}\n"
	}
	// One source, never due while the benchmark runs: serve needs one to schedule.
	text += "  lambda: {endpoint: http://127.0.0.1:1/, schedule: '0 0 1 1 *'}\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		b.Fatal(err)
	}
	base, stop := startServeProcessB(b, "--config", cfg, "--store", dsn)
	defer stop()
	// One request of each before the load: computed from the store, nothing kept yet.
	for _, p := range []string{"/api/v1/prices", "/api/v1/volatility?window=7d", "/"} {
		t0 := time.Now()
		resp, err := http.Get(base + p)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.Logf("%s first answer (computed, not cached): %d in %s, %d bytes", p, resp.StatusCode, time.Since(t0).Round(time.Millisecond), n)
	}
	b.ResetTimer()
	for _, p := range []struct{ name, path string }{
		{"prices", "/api/v1/prices"},
		{"volatility", "/api/v1/volatility?window=7d"},
		{"page", "/"},
	} {
		r := loadgen.Run(ctx, base+p.path, clients, time.Duration(secs)*time.Second)
		b.Logf("%s (%d observations of %d synthetic series)", r, series*spec.Steps, series)
		b.ReportMetric(r.RPS, p.name+"_req/s")
		b.ReportMetric(float64(r.P99.Microseconds())/1000, p.name+"_p99_ms")
		if r.Errors > 0 || r.Requests == 0 {
			b.Errorf("%s: %d errors of %d requests (first: %s)", p.path, r.Errors, r.Requests, r.FirstError)
		}
	}
}

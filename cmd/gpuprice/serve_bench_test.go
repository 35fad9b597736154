package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics/api"
	"github.com/gpuprice/gpuprice/deploy/loadgen"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// BenchmarkServeUnderLoad measures `gpuprice serve` (its own process) under 200
// concurrent clients for 30 s per endpoint: requests/s and p99 of /api/v1/prices,
// /api/v1/volatility and the web app's /, and the serve process's peak resident
// memory (VmHWM), and fails on any error. The store holds SYNTHETIC history
// (storetest.Generate; benchmarks only): GPUPRICE_BENCH_SERIES series (default 600)
// observed hourly for GPUPRICE_BENCH_DAYS days (default 14; 70: about 1M
// observations), rolled up, in a DuckDB file of its own; or in the
// store GPUPRICE_BENCH_STORE names (a DSN, e.g.
// clickhouse://localhost:9000/gpuprice_servebench), which is filled once and kept
// for later runs. GPUPRICE_BENCH_CLIENTS and GPUPRICE_BENCH_SECONDS change the load,
// GPUPRICE_BENCH_ACCEPT the requests' Accept-Encoding (default "zstd, gzip"; "gzip"
// as older clients ask, "" for none). With GPUPRICE_BENCH_LOAD_CPU (a CPU list for
// taskset, e.g. 1) the load generator runs in a process of its own pinned to those
// CPUs (`gpuprice loadtest`), so that it cannot take the server's core; serve is
// not pinned (deploy/bench.sh does this).
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
	days := env("GPUPRICE_BENCH_DAYS", 14)
	accept := loadgen.DefaultAcceptEncoding
	if v, ok := os.LookupEnv("GPUPRICE_BENCH_ACCEPT"); ok {
		accept = v
	}
	dir := b.TempDir()
	dsn := os.Getenv("GPUPRICE_BENCH_STORE")
	if dsn == "" {
		dsn = "duckdb://" + filepath.Join(dir, "bench.duckdb")
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	end := time.Now().UTC().Truncate(time.Hour)
	spec := storetest.GenSpec{Series: series, Steps: days * 24, Start: end.Add(-time.Duration(days) * 24 * time.Hour),
		Step: time.Hour, Seed: 7}
	if have, err := st.Latest(ctx, store.Filter{}); err != nil {
		b.Fatal(err)
	} else if old, err := st.Latest(ctx, store.Filter{Until: spec.Start.Add(2 * time.Hour)}); err != nil {
		b.Fatal(err)
	} else if len(have) >= series && len(old) >= series { // as many series, as many days back
		b.Logf("store %s: kept from an earlier run (%d series)", store.Redact(dsn), len(have))
	} else {
		genStart := time.Now()
		if err := storetest.Generate(spec, 20000, func(obs []schemas.Observation) error { return st.WriteObservations(ctx, obs) }); err != nil {
			b.Fatal(err)
		}
		if err := st.(store.Rollups).Rollup(ctx, time.Time{}, time.Time{}); err != nil {
			b.Fatal(err)
		}
		b.Logf("store %s: %d synthetic observations written and rolled up in %s", store.Redact(dsn), series*spec.Steps, time.Since(genStart).Round(time.Second))
	}
	st.Close()
	cfg := filepath.Join(dir, "gpuprice.yaml")
	// The clients all come from 127.0.0.1: the cap per client address
	// (serve.max_conns_per_client) would turn most of them away.
	text := "data_dir: " + dir + "\nserve:\n  max_conns_per_client: -1\nsources:\n"
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
	addr, err := api.ReadAddress(dir)
	if err != nil {
		b.Fatal(err)
	}
	// One request of each before the load.
	for _, p := range []string{"/api/v1/prices", "/api/v1/volatility?window=7d", "/"} {
		t0 := time.Now()
		resp, err := http.Get(base + p)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.Logf("%s first answer: %d in %s, %d bytes", p, resp.StatusCode, time.Since(t0).Round(time.Millisecond), n)
	}
	b.Logf("serve (pid %d) before the load: %s", addr.PID, memOf(addr.PID))
	b.ResetTimer()
	for _, p := range []struct{ name, path string }{
		{"prices", "/api/v1/prices"},
		{"prices_limit100", "/api/v1/prices?limit=100"},
		{"volatility", "/api/v1/volatility?window=7d"},
		{"page", "/"},
	} {
		r := runLoad(b, base+p.path, clients, time.Duration(secs)*time.Second, accept)
		b.Logf("%s (%d observations of %d synthetic series); serve: %s", r, series*spec.Steps, series, memOf(addr.PID))
		b.ReportMetric(r.RPS, p.name+"_req/s")
		b.ReportMetric(float64(r.P99.Microseconds())/1000, p.name+"_p99_ms")
		if r.Errors > 0 || r.Requests == 0 {
			b.Errorf("%s: %d errors of %d requests (first: %s)", p.path, r.Errors, r.Requests, r.FirstError)
		}
	}
	if hwm := procStatusKB(addr.PID, "VmHWM"); hwm > 0 {
		b.ReportMetric(float64(hwm)/1024, "peak_rss_MB")
	}
}

// runLoad loads url as loadgen.RunAccepting does: in this process, or with
// GPUPRICE_BENCH_LOAD_CPU set, in a `gpuprice loadtest` process pinned to those
// CPUs (taskset), its JSON result read back.
func runLoad(b *testing.B, url string, clients int, d time.Duration, accept string) loadgen.Result {
	cpus := os.Getenv("GPUPRICE_BENCH_LOAD_CPU")
	if cpus == "" {
		return loadgen.RunAccepting(context.Background(), url, clients, d, accept)
	}
	args, _ := json.Marshal([]string{"loadtest", "--clients", strconv.Itoa(clients), "--duration", d.String(),
		"--accept-encoding", accept, "--format", "json", url})
	cmd := exec.Command("taskset", "-c", cpus, os.Args[0], "-test.run", "^TestHelperServe$")
	cmd.Env = append(os.Environ(), "GPUPRICE_HELPER_SERVE_ARGS="+string(args))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rs []loadgen.Result
	if jerr := json.Unmarshal(out, &rs); jerr != nil || len(rs) != 1 {
		b.Fatalf("loadtest pinned to CPUs %s: %v %v\n%s%s", cpus, err, jerr, out, stderr.String())
	}
	b.Logf("load generator: its own process, pinned to CPUs %s (taskset)", cpus)
	return rs[0]
}

// memOf describes a process's resident memory now and at its peak.
func memOf(pid int) string {
	return fmt.Sprintf("RSS %d MB, peak RSS %d MB", procStatusKB(pid, "VmRSS")/1024, procStatusKB(pid, "VmHWM")/1024)
}

// procStatusKB reads one kB field of /proc/PID/status (0 when unknown).
func procStatusKB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

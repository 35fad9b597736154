package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/schemas"
)

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// getToken is get with "Authorization: bearer TOKEN" (the scheme in lower case).
func getToken(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitFor polls cond (no timing assertion: the deadline only stops a broken test).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestServe(t *testing.T) {
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "serve.duckdb")
	bandsBesideExample(t, dsn) // interruption bands for /metrics
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"--config", cfg, "--store", dsn, "serve", "--listen", "127.0.0.1:0", "--run-now"}, &out, &errb)
	}()
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
	waitFor(t, "the first runs of azure, vast and lambda", func() bool {
		_, body := get(t, base+"/api/runs")
		var runs []schemas.Run
		_ = json.Unmarshal([]byte(body), &runs)
		seen := map[string]bool{}
		for _, r := range runs {
			seen[r.Source] = r.RowsAccepted > 0
		}
		return seen["azure"] && seen["vast"] && seen["lambda"]
	})
	// The run record is stored before the service updates its metrics: wait for both.
	waitFor(t, "the metrics of the first runs", func() bool {
		_, m := get(t, base+"/metrics")
		// The market metrics read bars, rebuilt after each run's record is stored.
		return strings.Contains(m, `gpuprice_source_up{source="azure"}`) && strings.Contains(m, `gpuprice_source_up{source="vast"}`) &&
			strings.Contains(m, `gpuprice_source_up{source="lambda"}`) &&
			strings.Contains(m, `gpuprice_spread_ratio{gpu="H100-SXM-80GB",pricing="on_demand"}`)
	})
	if code, body := get(t, base+"/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("healthz: %d %q", code, body)
	}
	code, body := get(t, base+"/api/prices?gpu=H100-SXM-80GB&pricing=on_demand")
	var rows []schemas.Observation
	if err := json.Unmarshal([]byte(body), &rows); code != 200 || err != nil || len(rows) == 0 {
		t.Fatalf("api/prices: %d %v %.300s", code, err, body)
	}
	for i, o := range rows {
		if o.GPU != "H100-SXM-80GB" || o.Pricing != "on_demand" || (i > 0 && o.PriceUSDGPUHour < rows[i-1].PriceUSDGPUHour) {
			t.Fatalf("api/prices row %d: %+v", i, o)
		}
	}
	if code, _ := get(t, base+"/api/prices?pricing=preemptible"); code != http.StatusBadRequest {
		t.Errorf("bad pricing kind: status %d, want 400", code)
	}
	if code, body := get(t, base+"/api/prices?provider=lambda&format=csv&limit=2"); code != 200 || strings.Count(body, "\n") != 3 || !strings.HasPrefix(body, "observed_at,provider") {
		t.Errorf("csv: %d %q", code, body)
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{
		`gpuprice_source_up{source="lambda"} 1`,
		`gpuprice_runs_total{source="vast",status=`,
		`gpuprice_cheapest_usd_per_gpu_hour{gpu="H100-SXM-80GB",pricing="on_demand",provider="lambda",region="",tier="specialist"}`,
		`gpuprice_index_usd_per_gpu_hour{gpu="H100-SXM-80GB",group="others",pricing="on_demand"}`,
		`gpuprice_spread_ratio{gpu="H100-SXM-80GB",pricing="on_demand"}`,
		`gpuprice_tier_median_usd_per_gpu_hour{gpu="H100-SXM-80GB",pricing="on_demand",tier="hyperscaler"}`,
		`gpuprice_spool_rows 0`,
		// The bands in force (the 2025 copy's): p4d.24xlarge us-east-1 10-15 %, λ =
		// −ln(0.875)/730 = 1.82919715924e-4 per hour.
		`gpuprice_interruption_band{gpu="A100-SXM-40GB",provider="aws",region="us-east-1",sku="p4d.24xlarge"} 2`,
		`gpuprice_interruption_rate_per_hour{gpu="A100-SXM-40GB",provider="aws",region="us-east-1",sku="p4d.24xlarge"} 0.000182919715924`,
		// The stock and depth the run of vast stated (its offers' num_gpus when rentable).
		`gpuprice_gpus_in_stock{gpu="H100-SXM-80GB",provider="vast"}`,
		`gpuprice_market_depth{gpu="H100-SXM-80GB",provider="vast"}`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// Nobody could place a GPU "unknown": it is counted among the offers, and has
	// no cheapest price, index or spread.
	if !strings.Contains(metrics, `gpuprice_offers{gpu="unknown"`) {
		t.Errorf("/metrics does not count the offers of GPU unknown")
	}
	for _, m := range []string{"gpuprice_cheapest_usd_per_gpu_hour", "gpuprice_index_usd_per_gpu_hour", "gpuprice_spread_ratio", "gpuprice_tier_median_usd_per_gpu_hour"} {
		if strings.Contains(metrics, m+`{gpu="unknown"`) {
			t.Errorf("/metrics has %s of GPU unknown", m)
		}
	}
	if _, page := get(t, base+"/page"); !strings.Contains(page, "<td>H100-SXM-80GB</td>") || !strings.Contains(page, "<td>lambda</td>") {
		t.Errorf("page lacks the H100 row:\n%.500s", page)
	}
	if code, app := get(t, base+"/"); code != 200 || !strings.Contains(app, `<script type="module" src="/assets/app.js?v=`) {
		t.Errorf("/ is not the web app: %d %.500s", code, app)
	}
	cancel()
	select {
	case code := <-done:
		if code != cli.ExitInterrupted { // stopped as asked (a signal): 130
			t.Errorf("serve exited %d after cancel, want %d:\n%s", code, cli.ExitInterrupted, errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
	if strings.Contains(metrics, `gpuprice_cheapest_usd_per_gpu_hour{gpu="unknown"`) {
		t.Error("/metrics has a cheapest price of GPU unknown")
	}
	assertBarsCover(t, dsn, "serve --run-now")

	// Restarted without --run-now, the source metrics come from the stored runs.
	base2, stop := startServe(t, "--config", cfg, "--store", dsn)
	defer stop()
	_, metrics2 := get(t, base2+"/metrics")
	for _, want := range []string{`gpuprice_source_up{source="lambda"} 1`, `gpuprice_source_last_rows_accepted{source="vast"}`, `gpuprice_source_last_run_timestamp_seconds{source="azure"}`} {
		if !strings.Contains(metrics2, want) {
			t.Errorf("/metrics after a restart lacks %s", want)
		}
	}
}

// A turn of a source's schedule (not --run-now) goes through the same pipeline:
// the bars are rebuilt over what it wrote.
func TestServeScheduledRunRebuildsBars(t *testing.T) {
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(body), "lambda: {endpoint: "+srv.URL+"/service/gpu-cloud, schedule: '"+neverSchedule+"'}",
		"lambda: {endpoint: "+srv.URL+"/service/gpu-cloud, schedule: '@every 1s'}", 1)
	text = strings.Replace(text, "azure: {endpoint: "+srv.URL+"/api/retail/prices, schedule: '"+neverSchedule+"'}", "azure: {enabled: false}", 1)
	text = strings.Replace(text, "vast: {endpoint: "+srv.URL+"/api/v0/bundles/, schedule: '"+neverSchedule+"'}", "vast: {enabled: false}", 1)
	if !strings.Contains(text, "@every 1s") || strings.Count(text, "enabled: false") < 2 {
		t.Fatalf("config not rewritten:\n%s", text)
	}
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "scheduled.duckdb")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"--config", cfg, "--store", dsn, "serve", "--listen", "127.0.0.1:0"}, &out, &errb)
	}()
	addrRE := regexp.MustCompile(`serving on (http://[0-9.:]+)`)
	var base string
	waitFor(t, "the listen address", func() bool {
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
			return true
		}
		return false
	})
	waitFor(t, "a scheduled run of lambda", func() bool {
		_, body := get(t, base+"/api/runs?source=lambda")
		var runs []schemas.Run
		_ = json.Unmarshal([]byte(body), &runs)
		// Its final record: a run under way is recorded as started first.
		return len(runs) > 0 && runs[0].RowsAccepted > 0 && runs[0].Status != schemas.RunStarted
	})
	cancel()
	select {
	case code := <-done:
		if code != cli.ExitInterrupted { // stopped as asked (a signal): 130
			t.Errorf("serve exited %d after cancel, want %d:\n%s", code, cli.ExitInterrupted, errb.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
	assertBarsCover(t, dsn, "a scheduled run of serve")
}

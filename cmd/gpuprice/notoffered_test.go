package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

// TestRunPodAPINotOfferedIsRoutine collects RunPod's recorded gpuTypes answers (the
// live response a public job saved, the reference recording, the full re-typed
// query) through sources.runpod.endpoint: the null and 0 prices of clouds that do
// not offer a GPU are counted as not offered, not quarantined, and the run is ok with
// exit 0; the placeholders RunPod is known to publish are quarantined with their
// reason within its QuarantineShare.
func TestRunPodAPINotOfferedIsRoutine(t *testing.T) {
	for _, c := range []struct {
		fixture          string
		notOffered, quar int
	}{
		{"api_recorded", 47, 0},
		{"api_reference", 4, 2},
		{"api_full", 11, 2},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "..", "scrapers", "runpod", "testdata", c.fixture, "input.json"))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.URL.Path != "/graphql" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			dir := t.TempDir()
			cfg := fmt.Sprintf("data_dir: %s\nhttp: {timeout: 5s, retries: 1}\nsources:\n"+
				"  runpod: {endpoint: %s/graphql, schedule: '%s', options: {mode: api}}\n", dir, srv.URL, neverSchedule)
			for _, other := range append(disabledOthers(), "azure", "vast", "lambda") {
				if other != "runpod" {
					cfg += "  " + other + ": {enabled: false}\n"
				}
			}
			cfgPath := filepath.Join(dir, "gpuprice.yaml")
			if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			dsn := "duckdb://" + filepath.Join(dir, "prices.duckdb")
			if out, code := run(t, "--config", cfgPath, "--store", dsn, "collect"); code != 0 {
				t.Fatalf("collect exit %d, want 0:\n%s", code, out)
			}
			out, code := run(t, "--config", cfgPath, "--store", dsn, "runs", "--format", "json")
			if code != 0 {
				t.Fatalf("runs exit %d", code)
			}
			var runs []schemas.Run
			if err := json.Unmarshal([]byte(out), &runs); err != nil {
				t.Fatalf("runs JSON: %v\n%s", err, out)
			}
			if len(runs) != 1 {
				t.Fatalf("runs: %s", out)
			}
			r := runs[0]
			if r.Status != schemas.RunOK || r.RowsNotOffered != c.notOffered || r.RowsQuarantine != c.quar || r.RowsAccepted == 0 {
				t.Errorf("run %+v: want ok, %d not offered, %d quarantined", r, c.notOffered, c.quar)
			}
		})
	}
}

// TestServeFailedRunsAreLoud: in serve, a run in which every source failed is logged
// at ERROR, each failed source at WARN, and /metrics counts the run as all_failed.
func TestServeFailedRunsAreLoud(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	dir := t.TempDir()
	cfg := fmt.Sprintf("data_dir: %s\nhttp: {timeout: 5s, retries: 1}\nsources:\n"+
		"  lambda: {endpoint: %s/service/gpu-cloud, schedule: '%s'}\n", dir, down.URL, neverSchedule)
	for _, other := range append(disabledOthers(), "azure", "vast") {
		cfg += "  " + other + ": {enabled: false}\n"
	}
	cfgPath := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base, done, errb := launchServe(ctx, t, "--config", cfgPath, "--store", "duckdb://"+filepath.Join(dir, "p.duckdb"),
		"serve", "--listen", "127.0.0.1:0", "--run-now")
	waitFor(t, "the failed run in /metrics", func() bool {
		_, m := get(t, base+"/metrics")
		return strings.Contains(m, `gpuprice_collections_total{outcome="all_failed"} 1`) &&
			strings.Contains(m, `gpuprice_runs_total{source="lambda",status="failed"} 1`)
	})
	cancel()
	<-done
	logs := errb.String()
	for _, want := range []string{`level=ERROR msg="every source of the run failed" sources=1`,
		`level=WARN msg="source collected" source=lambda`} {
		if !strings.Contains(logs, want) {
			t.Errorf("serve's log lacks %s:\n%s", want, logs)
		}
	}
}

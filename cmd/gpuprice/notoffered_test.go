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
	"github.com/gpuprice/gpuprice/store"
)

// TestRunPodAPINotOfferedIsRoutine collects RunPod's recorded gpuTypes answers (the
// live response a public job saved, the reference recording, the full re-typed
// query) through sources.runpod.endpoint: the null and 0 prices of clouds that do
// not offer a GPU are counted as not offered, not quarantined, and the run is ok with
// exit 0; the placeholders RunPod is known to publish are quarantined with their
// reason within its QuarantineShare. The coverage guard (runpod.MajorModels): the
// live answer with two of the five major models out of stock is still routine; with
// three, or all five, gone (every other GPU still priced, far above MinRows) the run
// is degraded for coverage and collect exits 3.
func TestRunPodAPINotOfferedIsRoutine(t *testing.T) {
	for _, c := range []struct {
		name, fixture    string
		unpriced         []string // gpuTypes ids containing one of these have every price null
		notOffered, quar int
		status           string
		exit             int
		errPart          string
	}{
		// api_recorded: 47 on-demand and spot rows not offered, and 28 savings plans
		// (12 GPU types list neither plan, RTX 5000 Ada and V100 SXM2 32GB a 3-month one
		// with secureCloud false and a null 6-month one). Each GPU type unpriced below
		// adds its priced rows: H100 SXM, NVL, PCIe 4 + 2 plans each, H200 2 + 2 (22);
		// the two A100s 4 + 2 each (12); L40S and RTX 4090 4 + 2 each (12).
		{"api_recorded", "api_recorded", nil, 75, 0, schemas.RunOK, 0, ""},
		{"api_reference", "api_reference", nil, 4, 2, schemas.RunOK, 0, ""},
		{"api_full", "api_full", nil, 12, 2, schemas.RunOK, 0, ""}, // 11, and H100 NVL's null 6 months
		{"h100_h200_out", "api_recorded", []string{"H100", "H200"}, 97, 0, schemas.RunOK, 0, ""},
		{"three_major_out", "api_recorded", []string{"H100", "H200", "A100"}, 109, 0, schemas.RunDegraded, 3,
			"coverage: only L40S, RTX4090 of the major models H100, A100, L40S, RTX4090, H200 priced, expected at least 3"},
		{"major_models_gone", "api_recorded", []string{"H100", "H200", "A100", "L40S", "RTX 4090"}, 121, 0,
			schemas.RunDegraded, 3, "coverage: none of the major models H100, A100, L40S, RTX4090, H200 priced"},
	} {
		t.Run(c.name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "..", "scrapers", "runpod", "testdata", c.fixture, "input.json"))
			if err != nil {
				t.Fatal(err)
			}
			if c.unpriced != nil {
				body = unpriceRunPod(t, body, c.unpriced)
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
			if out, code := run(t, "--config", cfgPath, "--store", dsn, "collect"); code != c.exit {
				t.Fatalf("collect exit %d, want %d:\n%s", code, c.exit, out)
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
			if r.Status != c.status || r.RowsNotOffered != c.notOffered || r.RowsQuarantine != c.quar || r.RowsAccepted < 24 {
				t.Errorf("run %+v: want %s, %d not offered, %d quarantined", r, c.status, c.notOffered, c.quar)
			}
			if c.errPart != "" && !strings.Contains(r.Error, c.errPart) {
				t.Errorf("run error %q lacks %q", r.Error, c.errPart)
			}
			if c.name == "api_full" {
				runPodStock(t, dsn, r.RunID)
			}
		})
	}
}

// unpriceRunPod returns the gpuTypes answer body with every price of the GPU types
// whose id contains one of ids set to null, RunPod's own "not offered" answer.
func unpriceRunPod(t *testing.T, body []byte, ids []string) []byte {
	t.Helper()
	var doc struct {
		Data struct {
			GPUTypes []map[string]any `json:"gpuTypes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range doc.Data.GPUTypes {
		id, _ := g["id"].(string)
		for _, part := range ids {
			if strings.Contains(id, part) {
				for _, k := range []string{"securePrice", "communityPrice", "secureSpotPrice", "communitySpotPrice",
					"oneWeekPrice", "oneMonthPrice", "threeMonthPrice", "sixMonthPrice"} {
					g[k] = nil
				}
				n++
				break
			}
		}
	}
	if n == 0 {
		t.Fatalf("no GPU type matches %v", ids)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
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

// runPodStock: the stock api_full states (secureStock / communityStock of two GPU
// types), stored as signals beside the prices by the collection's run, one per GPU
// type and cloud (its on-demand and spot rows carry the same stock): H100 SXM secure
// High 8 and community Low 2, H100 PCIe secure Medium 4 and community none (null
// status, 0 GPUs: out of stock, its listed price not offered, kept as a fact).
func runPodStock(t *testing.T, dsn, runID string) {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sigs, err := st.(store.Signals).Signals(context.Background(), store.SignalQuery{Provider: "runpod",
		Kind: schemas.SignalStock})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range sigs {
		got[s.SKU] = fmt.Sprintf("%s %g %s", s.Label, s.Value, s.GPU)
		if s.RunID != runID || s.Source != "runpod" {
			t.Errorf("signal %s: run %s source %s, want the collection's %s", s.SKU, s.RunID, s.Source, runID)
		}
	}
	want := map[string]string{
		"NVIDIA H100 80GB HBM3:secure":    "High 8 H100-SXM-80GB",
		"NVIDIA H100 80GB HBM3:community": "Low 2 H100-SXM-80GB",
		"NVIDIA H100 PCIe:secure":         "Medium 4 H100-PCIE-80GB",
		"NVIDIA H100 PCIe:community":      " 0 H100-PCIE-80GB",
	}
	if len(got) != len(want) {
		t.Errorf("stock signals %v, want %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("stock of %s: %q, want %q", k, got[k], w)
		}
	}
}

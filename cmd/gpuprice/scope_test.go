package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scopeInput: GCP's H100 accelerator SKU priced alone (gpu_only) and Lambda's whole
// H100 machine (instance), on two days.
const scopeInput = `observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind,effective_at,gpu_name,gpu_memory_gb,currency,price_native,unit,fx_rate,interconnect,source_url,price_scope,price_basis,origin
2026-11-01T00:00:00Z,gcp,hyperscaler,nvidia-h100-80gb,H100-SXM-80GB,1,us-central1,,on_demand,9.8,9.8,api,2026-11-01T00:00:00Z,nvidia-h100-80gb,80,USD,9.8,hour,1,,https://cloudbilling.googleapis.com,gpu_only,listed,
2026-11-02T00:00:00Z,gcp,hyperscaler,nvidia-h100-80gb,H100-SXM-80GB,1,us-central1,,on_demand,9.6,9.6,api,2026-11-02T00:00:00Z,nvidia-h100-80gb,80,USD,9.6,hour,1,,https://cloudbilling.googleapis.com,gpu_only,listed,
2026-11-01T00:00:00Z,lambda,specialist,gpu_1x_h100_sxm5,H100-SXM-80GB,1,us-east-1,,on_demand,2.99,2.99,scrape,2026-11-01T00:00:00Z,H100 SXM,80,USD,2.99,hour,1,,https://lambda.ai/service/gpu-cloud,instance,listed,
2026-11-02T00:00:00Z,lambda,specialist,gpu_1x_h100_sxm5,H100-SXM-80GB,1,us-east-1,,on_demand,2.89,2.89,scrape,2026-11-02T00:00:00Z,H100 SXM,80,USD,2.89,hour,1,,https://lambda.ai/service/gpu-cloud,instance,listed,
`

// TestScopeComparesLikeWithLike: spreads, history, index and tokens compare instance
// prices by default; --scope gpu_only (scope=gpu_only in the API) compares GPU-only
// prices with each other only.
func TestScopeComparesLikeWithLike(t *testing.T) {
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	in := filepath.Join(dir, "scope.csv")
	if err := os.WriteFile(in, []byte(scopeInput), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "s.duckdb")
	if out, code := run(t, "--config", cfg, "--store", dsn, "import", "csv", in); code != 0 {
		t.Fatalf("import: %s", out)
	}
	at := []string{"--gpu", "H100-SXM-80GB", "--pricing", "on_demand", "--at", "2026-11-02", "--since", "7d", "--format", "json"}
	type spreadDays struct {
		Days []struct {
			Day                     string
			Hyperscaler, Specialist *float64
		}
	}
	for scope, want := range map[string][2]bool{"": {false, true}, "instance": {false, true}, "gpu_only": {true, false}} {
		args := append([]string{"--config", cfg, "--store", dsn, "spreads"}, at...)
		if scope != "" {
			args = append(args, "--scope", scope)
		}
		var sp spreadDays
		runJSON(t, &sp, args...)
		if len(sp.Days) == 0 {
			t.Fatalf("scope %q: no spread days", scope)
		}
		for _, d := range sp.Days {
			if (d.Hyperscaler != nil) != want[0] || (d.Specialist != nil) != want[1] {
				t.Errorf("scope %q %s: hyperscaler %v specialist %v", scope, d.Day, d.Hyperscaler, d.Specialist)
			}
		}
	}
	var idx []struct {
		Day   string
		Price float64 `json:"price_usd_gpu_hour"`
	}
	runJSON(t, &idx, append([]string{"--config", cfg, "--store", dsn, "index", "--scope", "gpu_only"}, at...)...)
	if len(idx) == 0 || idx[len(idx)-1].Price != 9.6 {
		t.Errorf("index --scope gpu_only: %+v, want GCP's 9.6 on the last day", idx)
	}
	runJSON(t, &idx, append([]string{"--config", cfg, "--store", dsn, "index"}, at...)...)
	if len(idx) == 0 || idx[len(idx)-1].Price != 2.89 {
		t.Errorf("index: %+v, want Lambda's 2.89 on the last day", idx)
	}
	out, code := run(t, append([]string{"--config", cfg, "--store", dsn, "history", "--scope", "gpu_only"}, at...)...)
	if code != 0 || !strings.Contains(out, "9.6") || strings.Contains(out, "2.89") {
		t.Errorf("history --scope gpu_only (exit %d):\n%s", code, out)
	}
	for scope, want := range map[string]string{"instance": "lambda", "gpu_only": "gcp"} {
		out, code := run(t, "--config", cfg, "--store", dsn, "tokens", "--params", "7e9", "--scope", scope, "--format", "csv")
		if code != 0 || !strings.Contains(out, ","+want+",") || strings.Count(strings.TrimSpace(out), "\n") != 1 {
			t.Errorf("tokens --scope %s (exit %d), want one %s row:\n%s", scope, code, want, out)
		}
	}
	if _, code := run(t, "--config", cfg, "--store", dsn, "spreads", "--scope", "vm"); code != 2 {
		t.Errorf("--scope vm: exit %d, want 2", code)
	}

	base, stop := startServe(t, "--config", cfg, "--store", dsn)
	defer stop()
	code, _, body := doReq(t, "GET", base+"/api/v1/spreads?gpu=H100-SXM-80GB&pricing=on_demand&at=2026-11-02&since=7d&scope=gpu_only", nil)
	var api struct{ Data spreadDays }
	if err := json.Unmarshal([]byte(body), &api); code != 200 || err != nil || len(api.Data.Days) == 0 ||
		api.Data.Days[0].Hyperscaler == nil || api.Data.Days[0].Specialist != nil {
		t.Errorf("API spreads scope=gpu_only: %d %v\n%s", code, err, body)
	}
	if code, _, body := doReq(t, "GET", base+"/api/v1/index?scope=vm", nil); code != 400 || !strings.Contains(body, "scope") {
		t.Errorf("API scope=vm: %d %s", code, body)
	}
}

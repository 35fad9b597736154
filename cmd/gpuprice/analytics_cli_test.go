package main

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// analyticsStore writes a small, hand-checkable history into a new DuckDB file and
// returns its DSN: an AWS spot series with hourly closes 4.0, 4.4, 3.96, 3.96 on
// 2025-03-10, and five H100 on-demand offers of that day.
func analyticsStore(t *testing.T, dsn string) string {
	t.Helper()
	t.Setenv("GPUPRICE_DATA_DIR", t.TempDir())
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)
	mk := func(provider, tier, sku, zone, pricing, ic string, at time.Time, gpuHour float64) schemas.Observation {
		return schemas.Observation{ObservedAt: at, EffectiveAt: at, Provider: provider, Tier: tier, SKU: sku,
			Region: "r1", Zone: zone, GPU: "H100-SXM-80GB", GPUName: "H100", GPUCount: 8, GPUMemoryGB: 80,
			Pricing: pricing, PriceUSDHour: 8 * gpuHour, PriceUSDGPUHour: gpuHour, Currency: "USD",
			PriceNative: 8 * gpuHour, Unit: schemas.UnitHour, FXRate: 1, Interconnect: ic,
			SourceKind: schemas.SourceAPI, SourceURL: "https://example.test", RunID: "r"}
	}
	var obs []schemas.Observation
	for i, p := range []float64{4.0, 4.4, 3.96, 3.96} {
		obs = append(obs, mk("aws", schemas.TierHyperscaler, "p5.48xlarge", "r1a", schemas.Spot, schemas.InterconnectEFA,
			day.Add(time.Duration(i)*time.Hour+10*time.Minute), p))
	}
	noon := day.Add(12 * time.Hour)
	obs = append(obs,
		mk("aws", schemas.TierHyperscaler, "p5.48xlarge", "", schemas.OnDemand, schemas.InterconnectEFA, noon, 4.0),
		mk("azure", schemas.TierHyperscaler, "nd", "", schemas.OnDemand, schemas.InterconnectInfiniband, noon, 4.4),
		mk("lambda", schemas.TierSpecialist, "gpu_8x_h100", "", schemas.OnDemand, schemas.InterconnectInfiniband, noon, 2.49),
		mk("coreweave", schemas.TierSpecialist, "h100", "", schemas.OnDemand, schemas.InterconnectInfiniband, noon, 2.2),
		mk("gmi", schemas.TierSpecialist, "h100", "", schemas.OnDemand, schemas.InterconnectInfiniband, noon, 2.6),
	)
	// Written twice: nothing may count twice.
	for range 2 {
		if err := st.WriteObservations(ctx, obs); err != nil {
			t.Fatal(err)
		}
	}
	return dsn
}

func runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out, code := run(t, args...)
	if code != 0 {
		t.Fatalf("gpuprice %v: exit %d", args, code)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("gpuprice %v: %v\n%s", args, err, out)
	}
}

func TestAnalyticsCommandsDuckDB(t *testing.T) {
	testAnalyticsCommands(t, "duckdb://"+filepath.Join(t.TempDir(), "a.duckdb"))
}

// TestAnalyticsCommandsClickHouse runs the same commands, with the same expected
// numbers, on ClickHouse.
func TestIntegrationClickHouseAnalyticsCommands(t *testing.T) {
	dsn := chtest.FreshDSN(t, "analytics")
	testAnalyticsCommands(t, dsn)
}

func testAnalyticsCommands(t *testing.T, dsn string) {
	dsn = analyticsStore(t, dsn)
	if out, code := run(t, "rollup", "--store", dsn); code != 0 || !strings.Contains(out, "rolled up all days") {
		t.Fatalf("rollup: %d %q", code, out)
	}
	at := "2025-03-10T04:00:00Z"

	// Log returns ln 1.1, ln 0.9, 0: sample SD 0.1003773 (as in analytics' own test,
	// whose closes 100, 110, 99, 99 have the same returns).
	var vol []struct {
		Zone         string  `json:"zone"`
		Bars         int     `json:"bars"`
		StdLogReturn float64 `json:"std_log_return"`
		ShareBelow   float64 `json:"share_below"`
	}
	runJSON(t, &vol, "volatility", "--store", dsn, "--pricing", "spot", "--window", "4h", "--bar", "1h",
		"--at", at, "--below", "4.2", "--format", "json")
	if len(vol) != 1 || vol[0].Bars != 4 || math.Abs(vol[0].StdLogReturn-0.10037728548770321) > 1e-9 || vol[0].ShareBelow != 0.75 {
		t.Fatalf("volatility: %+v", vol)
	}

	// Too few bars: a figure that needs more is null in JSON, empty in CSV, "-" in
	// the table; never 0. One on-demand bar per series: no standard deviation, CV or
	// drawdown (a range within the bar exists); two spot bars: one return, so no
	// standard deviation, but a CV and a drawdown.
	noon := "2025-03-10T13:00:00Z"
	var few []map[string]any
	runJSON(t, &few, "volatility", "--store", dsn, "--pricing", "on_demand", "--window", "24h", "--at", noon, "--format", "json")
	if len(few) != 5 {
		t.Fatalf("volatility of one bar: %v", few)
	}
	for _, v := range few {
		for _, k := range []string{"std_log_return", "annualised", "cv", "max_drawdown"} {
			if x, ok := v[k]; !ok || x != nil {
				t.Errorf("one bar: %s = %v, want null: %v", k, x, v)
			}
		}
		if v["range"] != 0.0 || v["bars"] != 1.0 {
			t.Errorf("one bar: range %v, bars %v", v["range"], v["bars"])
		}
	}
	var groups []map[string]any
	runJSON(t, &groups, "volatility", "--store", dsn, "--pricing", "on_demand", "--window", "24h", "--at", noon, "--by", "offering", "--format", "json")
	if len(groups) != 5 || groups[0]["annualised"] != nil || groups[0]["cv"] != nil || groups[0]["median_close"] == nil {
		t.Errorf("groups of one bar: %v", groups)
	}
	csvOut, _ := run(t, "volatility", "--store", dsn, "--pricing", "on_demand", "--window", "24h", "--at", noon, "--format", "csv")
	if recs := parseCSV(t, csvOut); len(recs) != 6 || strings.Join(recs[1][7:12], ",") != ",,,0.00," {
		t.Errorf("csv of one bar: std..drawdown %q\n%s", recs[1][7:12], csvOut)
	}
	tableOut, _ := run(t, "volatility", "--store", dsn, "--pricing", "on_demand", "--window", "24h", "--at", noon)
	if !regexp.MustCompile(`(?m)^H100-SXM-80GB\s+lambda\s+on_demand\s+gpu_8x_h100\s+r1\s+1\s+-\s+-\s+-\s+0\.00\s+-\s+0\s`).MatchString(tableOut) {
		t.Errorf("table of one bar:\n%s", tableOut)
	}
	var two []map[string]any
	runJSON(t, &two, "volatility", "--store", dsn, "--pricing", "spot", "--window", "2h", "--at", "2025-03-10T02:00:00Z", "--format", "json")
	if len(two) != 1 || two[0]["bars"] != 2.0 || two[0]["std_log_return"] != nil || two[0]["annualised"] != nil ||
		two[0]["cv"] == nil || two[0]["max_drawdown"] != 0.0 {
		t.Errorf("two bars: %v", two)
	}

	// Lambda at $2.49, 7B, MFU 0.5 and the catalog's 989.4 TFLOPS: $58.7225 per 1B
	// tokens (ARCHITECTURE.md's example, ≈ $58.7).
	out, code := run(t, "tokens", "--store", dsn, "--params", "7e9", "--mfu", "0.5", "--explain", "--provider", "lambda")
	if code != 0 || !strings.Contains(out, "$58.7225") || !strings.Contains(out, "989.4 TFLOPS") {
		t.Fatalf("tokens --explain: %d\n%s", code, out)
	}
	var tok []struct {
		Provider string `json:"provider"`
		Cost     struct {
			MFU            float64 `json:"mfu"`
			USDPer1BTokens float64 `json:"usd_per_1b_tokens"`
		} `json:"cost"`
	}
	runJSON(t, &tok, "tokens", "--store", dsn, "--params", "7e9", "--pricing", "on_demand", "--format", "json")
	if len(tok) != 5 || tok[0].Provider != "coreweave" || tok[0].Cost.MFU != 0.58 {
		t.Fatalf("tokens with default MFU: %+v", tok)
	}
	// A job of one node (the default) on H100 SXM: the single-node NVLink band 44–72 %
	// (Megatron-LM, FlashAttention-2), midpoint 0.58, whatever the fabric between
	// nodes and whoever sells it.
	for _, r := range tok {
		if r.Cost.MFU != tok[0].Cost.MFU {
			t.Errorf("%s: MFU %v: the brand or the network moved the band of a one-node job", r.Provider, r.Cost.MFU)
		}
	}
	// Across two nodes, coreweave's InfiniBand gives the multi-node RDMA band 38–55.2 %
	// (Llama 3, MegaScale), midpoint 0.466: 2.2 × 4.2e19 / (989.4e12 × 0.466 × 3600).
	runJSON(t, &tok, "tokens", "--store", dsn, "--params", "7e9", "--pricing", "on_demand", "--nodes", "2", "--format", "json")
	if len(tok) == 0 || tok[0].Provider != "coreweave" || tok[0].Cost.MFU != 0.466 {
		t.Fatalf("tokens of a two-node job: %+v", tok)
	}
	if want := 2.2 * 4.2e19 / (989.4e12 * 0.466 * 3600); math.Abs(tok[0].Cost.USDPer1BTokens-want) > 1e-6 {
		t.Fatalf("coreweave $/1B %v, want %v", tok[0].Cost.USDPer1BTokens, want)
	}

	// Hyperscalers 4.0, 4.4 → 4.2; specialists 2.2, 2.49, 2.6 → 2.49.
	var spreads struct {
		Days []struct {
			Day   time.Time `json:"day"`
			Ratio float64   `json:"ratio"`
		} `json:"days"`
	}
	runJSON(t, &spreads, "spreads", "--store", dsn, "--pricing", "on_demand", "--since", "1d", "--at", "2025-03-10T23:00:00Z", "--format", "json")
	if len(spreads.Days) != 1 || math.Abs(spreads.Days[0].Ratio-4.2/2.49) > 1e-12 {
		t.Fatalf("spreads: %+v", spreads)
	}

	var hist struct {
		Overall struct {
			P50    float64 `json:"p50"`
			Min    float64 `json:"min"`
			Series int     `json:"series"`
		} `json:"overall"`
	}
	runJSON(t, &hist, "history", "--store", dsn, "--gpu", "H100-SXM-80GB", "--since", "1d", "--at", "2025-03-10T23:00:00Z", "--format", "json")
	if hist.Overall.Series != 5 || hist.Overall.P50 != 2.6 || hist.Overall.Min != 2.2 {
		t.Fatalf("history: %+v", hist)
	}

	var idx []struct {
		Group   string  `json:"group"`
		Pricing string  `json:"pricing"`
		Price   float64 `json:"price_usd_gpu_hour"`
	}
	runJSON(t, &idx, "index", "--store", dsn, "--pricing", "on_demand", "--since", "1d", "--at", "2025-03-10T23:00:00Z", "--format", "json")
	if len(idx) != 2 || idx[0].Group != "hyperscaler" || math.Abs(idx[0].Price-4.2) > 1e-12 || idx[1].Price != 2.49 {
		t.Fatalf("index: %+v", idx)
	}

	for _, args := range [][]string{
		{"volatility", "--bar", "5m"}, {"volatility", "--window", "-1d"}, {"tokens"}, {"tokens", "--params", "7e9", "--precision", "int4"},
		{"history"}, {"spreads", "--format", "xml"},
	} {
		if _, code := run(t, append(args, "--store", dsn)...); code == 0 {
			t.Errorf("gpuprice %v: exit 0, want an error", args)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// TestRiskSpotAdvisorDuckDB: importing two dated Spot Advisor files shows the band
// changes between them. The first is the real file of 2025-06-28; the second is
// that file with two bands changed by the test (constructed: p5.48xlarge moves from
// >20% to 10-15% in us-east-1 and from 5-10% to 15-20% in us-west-2).
func TestRiskSpotAdvisorDuckDB(t *testing.T) {
	testRiskSpotAdvisor(t, "duckdb://"+filepath.Join(t.TempDir(), "risk.duckdb"))
}

// TestIntegrationClickHouseRiskSpotAdvisor runs the same imports and reads on ClickHouse.
func TestIntegrationClickHouseRiskSpotAdvisor(t *testing.T) {
	testRiskSpotAdvisor(t, chtest.FreshDSN(t, "risk"))
}

// spotAdvisorFile is a saved Spot Advisor copy of scrapers/aws/testdata/spot_advisor.
func spotAdvisorFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "scrapers", "aws", "testdata", "spot_advisor", name))
	if err != nil {
		t.Fatal(err)
	}
	return gunzip(t, b)
}

// bandsBesideExample imports interruption bands beside the recorded example:
// spotinfo's real Spot Advisor copies of 2021 and 2025 as of 2026-10-20 and
// 2026-10-30, so that the example's last week holds band moves. Of the 131 moves
// between them, 3 are of A100-SXM-40GB (p4d.24xlarge: eu-west-1 10-15% → >20%,
// us-east-1 <5% → 10-15%, us-west-2 <5% → >20%), 121 of T4 and none of an H100
// (p5 is in the 2025 copy only: a first band, no move).
func bandsBesideExample(t *testing.T, dsn string) {
	t.Helper()
	for _, c := range [][2]string{{"spotinfo_2021-02-10.json.gz", "2026-10-20"}, {"input.json.gz", "2026-10-30"}} {
		file := filepath.Join(t.TempDir(), "spot-advisor-data.json")
		if err := os.WriteFile(file, spotAdvisorFile(t, c[0]), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, code := run(t, "--store", dsn, "risk", "import-spot-advisor", file, "--at", c[1]); code != 0 {
			t.Fatalf("import-spot-advisor %s failed", c[0])
		}
	}
}

func testRiskSpotAdvisor(t *testing.T, dsn string) {
	real := spotAdvisorFile(t, "input.json.gz")
	var doc map[string]any
	if err := json.Unmarshal(real, &doc); err != nil {
		t.Fatal(err)
	}
	linux := func(region string) map[string]any {
		return doc["spot_advisor"].(map[string]any)[region].(map[string]any)["Linux"].(map[string]any)
	}
	linux("us-east-1")["p5.48xlarge"].(map[string]any)["r"] = 2
	linux("us-west-2")["p5.48xlarge"].(map[string]any)["r"] = 3
	changed, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, second := filepath.Join(dir, "2025-06-28.json"), filepath.Join(dir, "2025-07-05.json")
	if err := os.WriteFile(first, real, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{first, "2025-06-28"}, {second, "2025-07-05"}} {
		out, code := run(t, "--store", dsn, "risk", "import-spot-advisor", c[0], "--at", c[1])
		if code != 0 || !strings.Contains(out, "stored 682 interruption bands as of "+c[1]) {
			t.Fatalf("import %s: exit %d: %s", c[1], code, out)
		}
	}
	// Importing a copy again stores nothing twice.
	if _, code := run(t, "--store", dsn, "risk", "import-spot-advisor", first, "--at", "2025-06-28"); code != 0 {
		t.Fatal("second import of the same copy failed")
	}
	type change struct {
		SKU, Region    string
		At             string  `json:"at"`
		FromLabel      string  `json:"from_label"`
		ToLabel        string  `json:"to_label"`
		Rise           int     `json:"rise"`
		RatePerHour    float64 `json:"rate_per_hour"`
		Provider, Zone string
	}
	var moves struct{ Changes []change }
	runJSON(t, &moves, "--store", dsn, "risk", "--changes", "--format", "json")
	if len(moves.Changes) != 2 {
		t.Fatalf("changes %+v, want the two the second file makes", moves.Changes)
	}
	down, up := moves.Changes[0], moves.Changes[1]
	if down.SKU != "p5.48xlarge" || down.Region != "us-east-1" || down.FromLabel != ">20%" || down.ToLabel != "10-15%" ||
		down.Rise != -1 || down.At != "2025-07-05T00:00:00Z" || down.RatePerHour < 1.8291e-4 || down.RatePerHour > 1.8293e-4 {
		t.Errorf("us-east-1 move %+v", down)
	}
	if up.Region != "us-west-2" || up.FromLabel != "5-10%" || up.ToLabel != "15-20%" || up.Rise != 1 {
		t.Errorf("us-west-2 move %+v", up)
	}
	testRiskAdjustedPrices(t, dsn)

	var hist struct{ Changes []change }
	runJSON(t, &hist, "--store", dsn, "risk", "--sku", "p5.48xlarge", "--region", "us-east-1", "--format", "json")
	if len(hist.Changes) != 2 || hist.Changes[0].ToLabel != ">20%" || hist.Changes[0].Rise != 0 ||
		hist.Changes[0].At != "2025-06-28T00:00:00Z" || hist.Changes[1].ToLabel != "10-15%" {
		t.Errorf("history of p5.48xlarge us-east-1 %+v", hist.Changes)
	}
	// A window that begins after the first copy: the moves in it are still moves from
	// the band in force when it began, and without --changes that band is listed first.
	var week struct{ Changes []change }
	runJSON(t, &week, "--store", dsn, "risk", "--changes", "--since", "2025-07-01", "--format", "json")
	if len(week.Changes) != 2 || week.Changes[0].FromLabel != ">20%" || week.Changes[1].FromLabel != "5-10%" {
		t.Errorf("changes since 2025-07-01 %+v, want the two moves of 2025-07-05", week.Changes)
	}
	runJSON(t, &hist, "--store", dsn, "risk", "--sku", "p5.48xlarge", "--region", "us-east-1", "--since", "2025-07-01",
		"--format", "json")
	if len(hist.Changes) != 2 || hist.Changes[0].At != "2025-06-28T00:00:00Z" || hist.Changes[1].At != "2025-07-05T00:00:00Z" {
		t.Errorf("history since 2025-07-01 %+v, want the band in force then and the move", hist.Changes)
	}
	if runJSON(t, &week, "--store", dsn, "risk", "--since", "2025-07-06", "--format", "json"); len(week.Changes) != 682 {
		t.Errorf("since 2025-07-06: %d rows, want the 682 bands in force", len(week.Changes))
	}
	// A risk_rise rule on H100s over the stored bands: on 2025-07-06 p5.48xlarge
	// us-west-2 is up (5-10% → 15-20%), us-east-1 down (>20% → 10-15%); by
	// 2025-07-20 the rise is out of the 7-day window.
	cfg := filepath.Join(t.TempDir(), "alerts.yaml")
	if err := os.WriteFile(cfg, []byte(`data_dir: `+t.TempDir()+`
alerts:
  rules:
    - {name: h100-risk, kind: risk_rise, gpu: H100-SXM-80GB}
  notifiers:
    - {name: log, kind: log}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	type instance struct {
		Subject string
		Firing  bool
		Value   float64
		Labels  map[string]string
	}
	var rep struct {
		Rules []struct {
			Error     string
			Instances []instance
		}
	}
	runJSON(t, &rep, "--config", cfg, "--store", dsn, "alerts", "--dry-run", "--at", "2025-07-06", "--format", "json")
	if len(rep.Rules) != 1 || rep.Rules[0].Error != "" || len(rep.Rules[0].Instances) != 2 {
		t.Fatalf("risk_rise on 2025-07-06: %+v", rep)
	}
	for _, in := range rep.Rules[0].Instances {
		up := in.Subject == "aws p5.48xlarge us-west-2"
		if in.Firing != up || (up && (in.Value != 3 || in.Labels["band_then"] != "5-10%" || in.Labels["band_now"] != "15-20%")) {
			t.Errorf("risk_rise instance %+v", in)
		}
	}
	runJSON(t, &rep, "--config", cfg, "--store", dsn, "alerts", "--dry-run", "--at", "2025-07-20", "--format", "json")
	if len(rep.Rules[0].Instances) != 0 {
		t.Errorf("risk_rise on 2025-07-20: %+v", rep.Rules[0].Instances)
	}
}

// testRiskAdjustedPrices: prices --risk-adjusted on constructed p5.48xlarge spot rows
// ($40/h, $5/GPU-hour) against the bands imported above (the second file's: us-east-1
// 10-15 %, us-west-2 15-20 %), an on-demand row and a spot row in a region the file
// does not list. Hand-checked: (C/2 + R)/60 = (15 + 10)/60 = 0.416667 h;
// 10-15 %: λ = −ln(0.875)/730 = 1.829197e-4, factor 1.0000762165, 5 × factor = 5.000381;
// 15-20 %: λ = −ln(0.825)/730 = 2.635231e-4, factor 1.0001098013, 5.000549.
func testRiskAdjustedPrices(t *testing.T, dsn string) {
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteObservations(ctx, p5Rows(time.Date(2025, 7, 5, 12, 0, 0, 0, time.UTC))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var adj []struct {
		Region  string `json:"region"`
		Pricing string `json:"pricing"`
		Risk    struct {
			Band     string  `json:"band"`
			Known    bool    `json:"known"`
			Expected float64 `json:"expected_usd_gpu_hour"`
			Factor   float64 `json:"factor"`
			Explain  string  `json:"explain"`
		} `json:"risk"`
	}
	runJSON(t, &adj, "--store", dsn, "prices", "--provider", "aws", "--risk-adjusted", "--checkpoint", "30m",
		"--restart", "10m", "--explain", "--format", "json")
	got := map[string]int{}
	for i, r := range adj {
		got[r.Region+" "+r.Pricing] = i
	}
	if len(adj) != 4 {
		t.Fatalf("rows %+v", adj)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	e1, w2 := adj[got["us-east-1 spot"]].Risk, adj[got["us-west-2 spot"]].Risk
	if e1.Band != "10-15%" || !near(e1.Factor, 1.0000762165) || !near(e1.Expected, 5.000381) ||
		!strings.Contains(e1.Explain, "band 10-15% → λ = 0.00018292 per hour") {
		t.Errorf("us-east-1 spot %+v", e1)
	}
	if w2.Band != "15-20%" || !near(w2.Factor, 1.0001098013) || !near(w2.Expected, 5.000549) {
		t.Errorf("us-west-2 spot %+v", w2)
	}
	if eu := adj[got["eu-west-1 spot"]].Risk; eu.Known || eu.Expected != 0 {
		t.Errorf("a spot row without a band was priced: %+v", eu)
	}
	if od := adj[got["us-east-1 on_demand"]].Risk; !od.Known || od.Factor != 1 || !near(od.Expected, 6.88) {
		t.Errorf("on-demand %+v", od)
	}
	testRiskAdjustedTokens(t, dsn)
	out, code := run(t, "--store", dsn, "prices", "--provider", "aws", "--pricing", "spot", "--risk-adjusted")
	if code != 0 || !strings.Contains(out, "RISK_ADJ_USD_GPU_HOUR") || !strings.Contains(out, "5.000381") ||
		!strings.Contains(out, "unknown") {
		t.Errorf("table:\n%s", out)
	}
}

// p5Rows are constructed p5.48xlarge rows at at: spot at $40/h ($5/GPU-hour) in
// us-east-1, us-west-2 and eu-west-1 (a region the Spot Advisor file does not list
// for it), and on demand at $55.04/h in us-east-1.
func p5Rows(at time.Time) []schemas.Observation {
	row := func(region, pricing string, usdHour float64) schemas.Observation {
		return schemas.Observation{ObservedAt: at, EffectiveAt: at, Provider: "aws", Tier: schemas.TierHyperscaler,
			SKU: "p5.48xlarge", Region: region, GPU: "H100-SXM-80GB", GPUName: "NVIDIA H100 SXM", GPUCount: 8,
			GPUMemoryGB: 80, Pricing: pricing, PriceUSDHour: usdHour, PriceUSDGPUHour: usdHour / 8, Currency: "USD",
			PriceNative: usdHour, Unit: schemas.UnitHour, FXRate: 1, Interconnect: schemas.InterconnectEFA,
			SourceKind: schemas.SourceAPI, SourceURL: "https://example.test", RunID: "constructed"}
	}
	return []schemas.Observation{row("us-east-1", schemas.Spot, 40), row("us-west-2", schemas.Spot, 40),
		row("eu-west-1", schemas.Spot, 40), row("us-east-1", schemas.OnDemand, 55.04)}
}

// TestWebAppRiskBand: the board's Interruption column over p5Rows (as of now) and
// the real Spot Advisor file of 2025-06-28 (p5.48xlarge: us-east-1 >20%, band 4;
// us-west-2 5-10%, band 1): each spot offer's band, "unknown" where none is stored
// (eu-west-1), "—" for on demand; sorting by it puts the highest band last.
func TestWebAppRiskBand(t *testing.T) {
	ctx := browser(t)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "risk-web.duckdb")
	if _, code := run(t, "--store", dsn, "migrate"); code != 0 {
		t.Fatal("migrate failed")
	}
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteObservations(context.Background(), p5Rows(time.Now().UTC().Add(-time.Hour).Truncate(time.Second))); err != nil {
		t.Fatal(err)
	}
	st.Close()
	file := filepath.Join(t.TempDir(), "spot-advisor-data.json")
	if err := os.WriteFile(file, spotAdvisorFile(t, "input.json.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code := run(t, "--store", dsn, "risk", "import-spot-advisor", file, "--at", "2025-06-28"); code != 0 {
		t.Fatal("import-spot-advisor failed")
	}
	base, stop := startServe(t, "--store", dsn)
	defer stop()
	do(t, ctx, "open the board sorted by interruption", chromedp.Navigate(base+"/?sort=risk"),
		chromedp.WaitVisible(chromedp.CSS(`#offers`)), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
	cells := eval[[]string](t, ctx, `[...document.querySelectorAll('#offers tbody tr')]
	  .map(tr => tr.children[3].textContent + ' ' + tr.children[4].textContent.trim() + ' ' + tr.children[8].textContent)`)
	want := []string{"on-demand us-east-1 —", "spot us-west-2 5-10%", "spot us-east-1 >20%", "spot eu-west-1 unknown"}
	if strings.Join(cells, "|") != strings.Join(want, "|") {
		t.Errorf("board rows %q, want %q", cells, want)
	}
	if title := eval[string](t, ctx, `document.querySelector('#offers td.risk.band-4').title`); !strings.Contains(title,
		"interruption frequency >20% (band 4, AWS Spot Advisor), as of") {
		t.Errorf("band title %q", title)
	}
	// The Job column: >20% is λ = −ln(0.75)/730 = 3.941e-4 per hour, × (1 + λ × 25/60)
	// = × 1.000164 for a checkpoint every 30 min and a 10 min restart; on demand × 1;
	// no band: —.
	jobs := eval[[]string](t, ctx, `[...document.querySelectorAll('#offers tbody tr')]
	  .map(tr => tr.children[4].textContent.trim() + ' ' + tr.children[3].textContent + ' ' + tr.children[9].title.split(';')[0])`)
	for _, want := range []string{"us-east-1 spot expected $ per GPU-hour of work: 5.00 × (1 + 0.000394/h × (30/2 + 10) min) = × 1.000164",
		"us-east-1 on-demand expected $ per GPU-hour of work: 6.88 × (1 + 0.00/h × (30/2 + 10) min) = × 1.000000",
		"eu-west-1 spot no interruption band: the expected cost of a finished job is unknown"} {
		if !strings.Contains(strings.Join(jobs, "|"), want) {
			t.Errorf("job column %q lacks %q", jobs, want)
		}
	}
	shot(t, ctx, "board-risk")
	accessible(t, ctx, "board-risk")
}

// testRiskAdjustedTokens: tokens --risk-adjusted over the rows of
// testRiskAdjustedPrices, at MFU 0.5 for a 7e9-parameter model on the H100 SXM's
// dense BF16 peak of 989.4 TFLOPS (the catalog's): $ per 1B tokens at $5/GPU-hour =
// 5 × 1e9 × 6 × 7e9 / (989.4e12 × 0.5 × 3600) = 117.9166; us-east-1 spot (10-15 %)
// × 1.0000762165 = 117.9256; us-west-2 (15-20 %) × 1.0001098013 = 117.9295; the
// on-demand row ($6.88) is not interrupted (factor 1); the eu-west-1 spot row has no
// band: unknown, kept with its sticker figure and no adjusted one, listed last.
func testRiskAdjustedTokens(t *testing.T, dsn string) {
	var rows []struct {
		Region  string `json:"region"`
		Pricing string `json:"pricing"`
		Cost    struct {
			PeakTFLOPS float64 `json:"peak_tflops"`
			USDPer1B   float64 `json:"usd_per_1b_tokens"`
		} `json:"cost"`
		Risk *struct {
			Band  string `json:"band"`
			Known bool   `json:"known"`
		} `json:"risk"`
		Adjusted float64 `json:"risk_adj_usd_per_1b_tokens"`
	}
	runJSON(t, &rows, "--store", dsn, "tokens", "--params", "7e9", "--mfu", "0.5", "--provider", "aws", "--gpu",
		"H100-SXM-80GB", "--risk-adjusted", "--checkpoint", "30m", "--restart", "10m", "--format", "json")
	near := func(a, b float64) bool { return math.Abs(a-b) < 5e-5 }
	got := map[string]int{}
	for i, r := range rows {
		got[r.Region+" "+r.Pricing] = i
	}
	if len(rows) != 4 || rows[0].Cost.PeakTFLOPS != 989.4 || got["eu-west-1 spot"] != 3 {
		t.Fatalf("tokens --risk-adjusted: %+v", rows)
	}
	e1, w2, eu, od := rows[got["us-east-1 spot"]], rows[got["us-west-2 spot"]], rows[got["eu-west-1 spot"]],
		rows[got["us-east-1 on_demand"]]
	if !near(e1.Cost.USDPer1B, 117.9166) || !near(e1.Adjusted, 117.9256) || e1.Risk == nil || e1.Risk.Band != "10-15%" {
		t.Errorf("us-east-1 spot: %+v", e1)
	}
	if !near(w2.Adjusted, 117.9295) || w2.Risk.Band != "15-20%" {
		t.Errorf("us-west-2 spot: %+v", w2)
	}
	if eu.Risk == nil || eu.Risk.Known || eu.Adjusted != 0 || !near(eu.Cost.USDPer1B, 117.9166) {
		t.Errorf("eu-west-1 spot without a band: %+v", eu)
	}
	if !od.Risk.Known || od.Adjusted != od.Cost.USDPer1B {
		t.Errorf("on demand: %+v", od)
	}
	// The cheapest first on the adjusted figure: us-east-1 spot before us-west-2.
	if got["us-east-1 spot"] > got["us-west-2 spot"] {
		t.Errorf("order: %v", got)
	}
	if _, errb, code := runErr("--store", dsn, "tokens", "--params", "7e9", "--checkpoint", "1h"); code != 2 ||
		!strings.Contains(errb, "--checkpoint") || !strings.Contains(errb, "--risk-adjusted") {
		t.Errorf("--checkpoint without --risk-adjusted: exit %d %s", code, errb)
	}
	out, code := run(t, "--store", dsn, "tokens", "--params", "7e9", "--mfu", "0.5", "--provider", "aws", "--risk-adjusted")
	if code != 0 || !strings.Contains(out, "RISK_ADJ_USD_PER_1B_TOKENS") || !strings.Contains(out, "117.9256") ||
		!strings.Contains(out, "unknown") {
		t.Errorf("table:\n%s", out)
	}
}

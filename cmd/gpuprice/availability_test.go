package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// TestAvailabilityDuckDB: `availability` over stored stock signals, by offer and by
// GPU, and --need, hand-checked.
func TestAvailabilityDuckDB(t *testing.T) {
	testAvailability(t, "duckdb://"+filepath.Join(t.TempDir(), "avail.duckdb"))
}

// TestIntegrationClickHouseAvailability runs the same on ClickHouse.
func TestIntegrationClickHouseAvailability(t *testing.T) {
	testAvailability(t, chtest.FreshDSN(t, "avail"))
}

// availT0 is the start of the constructed stock history.
var availT0 = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

// availabilityFixture writes constructed stock signals and prices (labelled
// constructed in their source_url) to dsn:
//   - runpod H100 SXM secure (gpus): 8 at 00:00, 0 at 01:00 and 02:00, 16 at 03:00;
//   - runpod H100 SXM community (gpus): 2 at 00:00, 0 at 02:00;
//   - crusoe h100 8x in us-east1-a (instances of 8 GPUs): 10 at 03:30;
//   - lambda gpu_8x_h100_sxm5 (regions with capacity): 2 at 03:30;
//
// and the current prices: runpod secure on demand $2.99 and spot $1.75, crusoe on
// demand $3.90 (us-east1-a), lambda on demand $2.99 (region "").
func availabilityFixture(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	h := func(n float64) time.Time { return availT0.Add(time.Duration(n * float64(time.Hour))) }
	sig := func(provider, sku, region, unit string, at time.Time, v float64, attrs ...string) schemas.Signal {
		a := map[string]string{"unit": unit, "gpu_name": "H100 SXM"}
		for i := 0; i+1 < len(attrs); i += 2 {
			a[attrs[i]] = attrs[i+1]
		}
		return schemas.Signal{ObservedAt: at, EffectiveAt: at, Provider: provider, SKU: sku, Region: region,
			GPU: "H100-SXM-80GB", Kind: schemas.SignalStock, Value: v, Source: provider, RunID: "constructed",
			SourceURL: "constructed:availability_test", Attrs: a}
	}
	const secure, community = "NVIDIA H100 80GB HBM3:secure", "NVIDIA H100 80GB HBM3:community"
	sigs := []schemas.Signal{
		sig("runpod", secure, "", "gpus", h(0), 8), sig("runpod", secure, "", "gpus", h(1), 0),
		sig("runpod", secure, "", "gpus", h(2), 0), sig("runpod", secure, "", "gpus", h(3), 16),
		sig("runpod", community, "", "gpus", h(0), 2), sig("runpod", community, "", "gpus", h(2), 0),
		sig("crusoe", "h100-80gb-sxm-ib.8x", "us-east1-a", "instances", h(3.5), 10, "gpu_count", "8"),
		sig("lambda", "gpu_8x_h100_sxm5", "", "regions", h(3.5), 2),
	}
	sg, err := store.SignalsOf(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := sg.WriteSignals(ctx, sigs); err != nil {
		t.Fatal(err)
	}
	at := h(3.5)
	row := func(provider, tier, sku, region, pricing string, gpus, usdGPUHour float64) schemas.Observation {
		return schemas.Observation{ObservedAt: at, EffectiveAt: at, Provider: provider, Tier: tier, SKU: sku,
			Region: region, GPU: "H100-SXM-80GB", GPUName: "H100 SXM", GPUCount: gpus, GPUMemoryGB: 80,
			Pricing: pricing, PriceUSDHour: usdGPUHour * gpus, PriceUSDGPUHour: usdGPUHour, Currency: "USD",
			PriceNative: usdGPUHour * gpus, Unit: schemas.UnitHour, FXRate: 1, SourceKind: schemas.SourceAPI,
			SourceURL: "constructed:availability_test", RunID: "constructed"}
	}
	if err := st.WriteObservations(ctx, []schemas.Observation{
		row("runpod", schemas.TierMarketplace, secure, "", schemas.OnDemand, 1, 2.99),
		row("runpod", schemas.TierMarketplace, secure, "", schemas.Spot, 1, 1.75),
		row("crusoe", schemas.TierSpecialist, "h100-80gb-sxm-ib.8x", "us-east1-a", schemas.OnDemand, 8, 3.90),
		row("lambda", schemas.TierSpecialist, "gpu_8x_h100_sxm5", "", schemas.OnDemand, 8, 2.99),
	}); err != nil {
		t.Fatal(err)
	}
}

type availabilityJSON struct {
	Rows []struct {
		Provider      string  `json:"provider"`
		SKU           string  `json:"sku"`
		GPU           string  `json:"gpu"`
		Series        int     `json:"series"`
		Signals       int     `json:"signals"`
		Observed      int64   `json:"observed_ns"`
		InStockShare  float64 `json:"in_stock_share"`
		Outages       int     `json:"outages"`
		LongestOutage int64   `json:"longest_outage_ns"`
		OutageFrom    string  `json:"outage_from"`
		Last          float64 `json:"last"`
		Unit          string  `json:"unit"`
	} `json:"rows"`
	Offers []struct {
		Provider    string  `json:"provider"`
		SKU         string  `json:"sku"`
		GPUs        float64 `json:"gpus_available"`
		CountStated bool    `json:"count_stated"`
		Pricing     string  `json:"pricing"`
		Price       float64 `json:"usd_gpu_hour"`
		Risk        struct {
			Known    bool    `json:"known"`
			Expected float64 `json:"expected_usd_gpu_hour"`
		} `json:"risk"`
	} `json:"offers"`
}

func testAvailability(t *testing.T, dsn string) {
	availabilityFixture(t, dsn)
	window := []string{"--store", dsn, "availability", "--gpu", "h100 sxm", "--since", "2026-11-20T00:00:00Z",
		"--until", "2026-11-20T04:00:00Z", "--format", "json"}

	// By offer, least available first. secure: in 00–01 and 03–04, out 01–03: share
	// 0.5, one outage of 2 h from 01:00. community: in 00–02, out 02–04 (the 3 h hold
	// ends at 05:00, after the window): 0.5, 2 h from 02:00. crusoe and lambda: in
	// stock 03:30–04:00, share 1.
	var a availabilityJSON
	runJSON(t, &a, window...)
	got := map[string]int{}
	for i, r := range a.Rows {
		got[r.Provider+" "+r.SKU] = i
	}
	if len(a.Rows) != 4 {
		t.Fatalf("rows %+v", a.Rows)
	}
	sec := a.Rows[got["runpod NVIDIA H100 80GB HBM3:secure"]]
	if sec.InStockShare != 0.5 || sec.Observed != int64(4*time.Hour) || sec.Outages != 1 ||
		sec.LongestOutage != int64(2*time.Hour) || sec.OutageFrom != "2026-11-20T01:00:00Z" || sec.Last != 16 ||
		sec.Signals != 4 {
		t.Errorf("secure %+v", sec)
	}
	com := a.Rows[got["runpod NVIDIA H100 80GB HBM3:community"]]
	if com.InStockShare != 0.5 || com.LongestOutage != int64(2*time.Hour) || com.OutageFrom != "2026-11-20T02:00:00Z" {
		t.Errorf("community %+v", com)
	}
	if cr := a.Rows[got["crusoe h100-80gb-sxm-ib.8x"]]; cr.InStockShare != 1 || cr.Observed != int64(30*time.Minute) ||
		cr.Unit != "instances" || cr.Last != 10 {
		t.Errorf("crusoe %+v", cr)
	}
	if a.Rows[0].InStockShare != 0.5 || a.Rows[3].InStockShare != 1 {
		t.Errorf("not least available first: %+v", a.Rows)
	}

	// By GPU: runpod's H100 is in stock while either offer is: 00–02 and 03–04, out
	// 02–03: share 0.75, one outage of 1 h; Last 16 + 0.
	var g availabilityJSON
	runJSON(t, &g, append(window, "--by", "gpu")...)
	var rp int = -1
	for i, r := range g.Rows {
		if r.Provider == "runpod" {
			rp = i
		}
	}
	if len(g.Rows) != 3 || rp < 0 {
		t.Fatalf("groups %+v", g.Rows)
	}
	if r := g.Rows[rp]; r.InStockShare != 0.75 || r.Outages != 1 || r.LongestOutage != int64(time.Hour) ||
		r.Series != 2 || r.Signals != 6 || r.Last != 16 || r.SKU != "" {
		t.Errorf("runpod group %+v", r)
	}

	// --need 64 at 04:00: crusoe's 10 instances × 8 GPUs = 80 qualify (on demand,
	// $3.90, not interrupted: risk-adjusted $3.90); runpod's 16 do not; lambda counts
	// regions (2), not GPUs: listed after, its count not stated.
	var n availabilityJSON
	runJSON(t, &n, append(window, "--need", "64")...)
	if len(n.Offers) != 2 {
		t.Fatalf("need 64: %+v", n.Offers)
	}
	if o := n.Offers[0]; o.Provider != "crusoe" || o.GPUs != 80 || !o.CountStated || o.Price != 3.90 ||
		!o.Risk.Known {
		t.Errorf("need 64, first %+v", o)
	}
	if o := n.Offers[1]; o.Provider != "lambda" || o.CountStated || o.Price != 2.99 {
		t.Errorf("need 64, second %+v", o)
	}
	// --need 16: runpod's secure offer (16 GPUs) too, on demand at $2.99 (known,
	// cheapest of the stated ones) before crusoe's $3.90, its spot price after them
	// (no band stored: unknown), then lambda.
	runJSON(t, &n, append(window, "--need", "16")...)
	var order []string
	for _, o := range n.Offers {
		order = append(order, o.Provider+" "+o.Pricing)
	}
	if strings.Join(order, ", ") != "runpod on_demand, crusoe on_demand, runpod spot, lambda on_demand" {
		t.Errorf("need 16 order: %v", order)
	}
	out, code := run(t, "--store", dsn, "availability", "--gpu", "h100 sxm", "--until", "2026-11-20T04:00:00Z",
		"--need", "16")
	if code != 0 || !strings.Contains(out, "not stated") || !strings.Contains(out, "unknown") {
		t.Errorf("need table:\n%s", out)
	}
	if out, code := run(t, "--store", dsn, "availability", "--checkpoint", "5m"); code == 0 {
		t.Errorf("--checkpoint without --need accepted:\n%s", out)
	}
}

// TestWebAppStock: the board's Stock column over constructed offers and stock
// signals of an hour ago: RunPod secure 16 GPUs ("High") for both its prices (a
// region-less stock is the offer's in every region), community out of stock,
// Crusoe 10 instances in its region, Lambda no stock signal ("—"). Sorted by
// stock, the most first and out of stock after those in stock.
func TestWebAppStock(t *testing.T) {
	ctx := browser(t)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "stock-web.duckdb")
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	const secure, community = "NVIDIA H100 80GB HBM3:secure", "NVIDIA H100 80GB HBM3:community"
	sig := func(provider, sku, region, unit, label string, v float64) schemas.Signal {
		return schemas.Signal{ObservedAt: at, EffectiveAt: at, Provider: provider, SKU: sku, Region: region,
			GPU: "H100-SXM-80GB", Kind: schemas.SignalStock, Value: v, Label: label, Source: provider,
			RunID: "constructed", SourceURL: "constructed:availability_test", Attrs: map[string]string{"unit": unit}}
	}
	sg, _ := store.SignalsOf(st)
	if err := sg.WriteSignals(context.Background(), []schemas.Signal{
		sig("runpod", secure, "", "gpus", "High", 16), sig("runpod", community, "", "gpus", "", 0),
		sig("crusoe", "h100-80gb-sxm-ib.8x", "us-east1-a", "instances", "", 10),
	}); err != nil {
		t.Fatal(err)
	}
	row := func(provider, tier, sku, region, pricing string, usd float64) schemas.Observation {
		return schemas.Observation{ObservedAt: at, EffectiveAt: at, Provider: provider, Tier: tier, SKU: sku,
			Region: region, GPU: "H100-SXM-80GB", GPUName: "H100 SXM", GPUCount: 1, GPUMemoryGB: 80, Pricing: pricing,
			PriceUSDHour: usd, PriceUSDGPUHour: usd, Currency: "USD", PriceNative: usd, Unit: schemas.UnitHour,
			FXRate: 1, SourceKind: schemas.SourceAPI, SourceURL: "constructed:availability_test", RunID: "constructed"}
	}
	if err := st.WriteObservations(context.Background(), []schemas.Observation{
		row("runpod", schemas.TierMarketplace, secure, "", schemas.OnDemand, 2.99),
		row("runpod", schemas.TierMarketplace, secure, "", schemas.Spot, 1.75),
		row("runpod", schemas.TierMarketplace, community, "", schemas.OnDemand, 2.69),
		row("crusoe", schemas.TierSpecialist, "h100-80gb-sxm-ib.8x", "us-east1-a", schemas.OnDemand, 3.90),
		row("lambda", schemas.TierSpecialist, "gpu_8x_h100_sxm5", "", schemas.OnDemand, 2.99),
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	base, stop := startServe(t, "--store", dsn)
	defer stop()
	do(t, ctx, "open the board sorted by stock", chromedp.Navigate(base+"/?sort=stock"),
		chromedp.WaitVisible(chromedp.CSS(`#offers`)), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
	cells := eval[[]string](t, ctx, `[...document.querySelectorAll('#offers tbody tr')]
	  .map(tr => tr.children[1].textContent + ' ' + tr.children[6].textContent + ' ' + tr.children[10].textContent)`)
	want := []string{
		"runpod " + secure + " ● 16 gpus", "runpod " + secure + " ● 16 gpus", "crusoe h100-80gb-sxm-ib.8x ● 10 instances",
		"runpod " + community + " ○ out", "lambda gpu_8x_h100_sxm5 —",
	}
	if strings.Join(cells, "|") != strings.Join(want, "|") {
		t.Errorf("board rows %q, want %q", cells, want)
	}
	if title := eval[string](t, ctx, `document.querySelector('#offers td.stock.stock-in').title`); !strings.Contains(title,
		"16 gpus can be rented now (High), as of") || !strings.Contains(title, "in stock 100 %") {
		t.Errorf("stock title %q", title)
	}
	shot(t, ctx, "board-stock")
	accessible(t, ctx, "board-stock")
}

// TestWebAppAvailability: the Availability view over constructed stock signals of
// the last three hours (RunPod secure 8, 0 then 16 GPUs; Crusoe 10 instances): a
// chart line per provider and unit with something drawn, and the table least
// available first (RunPod, out for an hour of the three observed, before Crusoe),
// drawn in headless Chromium with axe.
func TestWebAppAvailability(t *testing.T) {
	ctx := browser(t)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "availability-web.duckdb")
	now := time.Now().UTC().Truncate(time.Second)
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	sig := func(provider, sku, region, unit string, back time.Duration, v float64) schemas.Signal {
		at := now.Add(-back)
		return schemas.Signal{ObservedAt: at, EffectiveAt: at, Provider: provider, SKU: sku, Region: region,
			GPU: "H100-SXM-80GB", Kind: schemas.SignalStock, Value: v, Source: provider, RunID: "constructed",
			SourceURL: "constructed:availability_test", Attrs: map[string]string{"unit": unit}}
	}
	sg, _ := store.SignalsOf(st)
	const secure = "NVIDIA H100 80GB HBM3:secure"
	if err := sg.WriteSignals(context.Background(), []schemas.Signal{
		sig("runpod", secure, "", "gpus", 3*time.Hour, 8), sig("runpod", secure, "", "gpus", 2*time.Hour, 0),
		sig("runpod", secure, "", "gpus", time.Hour, 16),
		sig("crusoe", "h100-80gb-sxm-ib.8x", "us-east1-a", "instances", 3*time.Hour, 10),
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	base, stop := startServe(t, "--store", dsn)
	defer stop()
	do(t, ctx, "open the availability view", chromedp.Navigate(base+"/availability?gpu=H100-SXM-80GB&since=1d"),
		chromedp.WaitVisible(chromedp.CSS(`#availability-table`)), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
	if n := eval[string](t, ctx, `document.querySelector('#availability-chart').dataset.seriesDrawn`); n != "2" {
		t.Errorf("lines drawn %q, want 2", n)
	}
	labels := eval[string](t, ctx, `document.querySelector('#availability-chart .plot').getAttribute('aria-label')`)
	if !strings.Contains(labels, "crusoe instances") || !strings.Contains(labels, "runpod gpus") {
		t.Errorf("chart label %q", labels)
	}
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll('#availability-table tbody tr')]
	  .map(tr => [...tr.children].map(c => c.textContent).join(' | '))`)
	// RunPod: observed 3 h (8 for 1 h, 0 for 1 h, 16 for the last hour): 67 % in stock.
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "runpod | stock | 1 | 67 % | 3.0 | 1 | 1.0") ||
		!strings.HasPrefix(rows[1], "crusoe | stock | 1 | 100 %") {
		t.Errorf("table rows %q", rows)
	}
	shot(t, ctx, "availability")
	accessible(t, ctx, "availability")
}

package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gpuprice/gpuprice/scrapers/aws"
	"github.com/gpuprice/gpuprice/scrapers/runpod"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// TestTermsRecordedDuckDB: terms, breakeven and inference on the recorded example
// (examples/recorded, `--at 2026-11-02`), with the figures checked by hand in
// docs/analytics.md ("Terms, break-even and inference").
func TestTermsRecordedDuckDB(t *testing.T) {
	testTermsRecorded(t, "duckdb://"+filepath.Join(t.TempDir(), "terms.duckdb"))
}

// TestIntegrationClickHouseTermsRecorded runs the same commands, with the same
// figures, on ClickHouse.
func TestIntegrationClickHouseTermsRecorded(t *testing.T) {
	testTermsRecorded(t, chtest.FreshDSN(t, "terms"))
}

func testTermsRecorded(t *testing.T, dsn string) {
	recorded := filepath.Join("..", "..", "examples", "recorded")
	if _, code := run(t, "--store", dsn, "reparse", recorded); !collected(code) {
		t.Fatalf("reparse %s failed", recorded)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 5e-5 }

	// The curve: the six one-year reservations in force (together 2.69, crusoe
	// 2.90, aws 4.1803 / 4.2230 / 4.2656, azure 8.1170) (4.18025 unrounded) have the median 4.201625;
	// their like-for-like discounts 25.64, 32.58, 33.95, 38.00, 38.62, 39.24 %
	// the median (33.95 + 38.00) / 2 = 35.98 %.
	var terms struct {
		GPU    string `json:"gpu"`
		Market []struct {
			Pricing     string   `json:"pricing"`
			Months      float64  `json:"term_months"`
			Offers      int      `json:"offers"`
			Min         float64  `json:"min_usd_gpu_hour"`
			Median      float64  `json:"median_usd_gpu_hour"`
			DiscountPct *float64 `json:"discount_pct"`
			Pairs       int      `json:"pairs"`
		} `json:"market"`
	}
	runJSON(t, &terms, "--store", dsn, "terms", "--gpu", "H100-SXM-80GB", "--at", "2026-11-02", "--format", "json")
	byKind := map[string]int{}
	for i, p := range terms.Market {
		byKind[p.Pricing] = i
	}
	od, r1 := terms.Market[byKind["on_demand"]], terms.Market[byKind["reserved_1y"]]
	if terms.GPU != "H100-SXM-80GB" || od.Offers != 22 || od.Median != 4.04 || !near(od.Min, 1.386741) {
		t.Errorf("on-demand point: %+v", od)
	}
	if r1.Months != 12 || r1.Offers != 6 || r1.Min != 2.69 || !near(r1.Median, 4.201625) || r1.Pairs != 6 ||
		r1.DiscountPct == nil || !near(*r1.DiscountPct, 35.9774) {
		t.Errorf("reserved_1y point: %+v %v", r1, *r1.DiscountPct)
	}
	if len(terms.Market) != 9 || terms.Market[0].Pricing != "on_demand" || terms.Market[1].Pricing != "spot" {
		t.Errorf("market points: %+v", terms.Market)
	}
	// RunPod's Secure Cloud savings plans (the recorded gpuTypes answer): 3 months at
	// 2.811, alone, 1 − 2.811 / 2.99 (its secure on-demand twin) = 5.99 % off; 6 months
	// at 2.601 beside together 2.99 and crusoe 3.40: median 2.99, discounts 13.01,
	// 25.06, 12.82 %, median 13.01 %.
	m3, m6 := terms.Market[byKind["commitment_3m"]], terms.Market[byKind["commitment_6m"]]
	if m3.Pricing != "commitment_3m" || m3.Months != 3 || m3.Offers != 1 || m3.Min != 2.811 || m3.Pairs != 1 ||
		m3.DiscountPct == nil || !near(*m3.DiscountPct, 5.9866) {
		t.Errorf("commitment_3m point: %+v", m3)
	}
	if m6.Pricing != "commitment_6m" || m6.Offers != 3 || m6.Min != 2.601 || m6.Median != 2.99 || m6.Pairs != 3 ||
		m6.DiscountPct == nil || !near(*m6.DiscountPct, 13.01) {
		t.Errorf("commitment_6m point: %+v", m6)
	}

	// Break-even of a $2.10 one-year quote at 60 %: 2.10 / 4.04 = 52 %; the
	// saving 4.04 × 8,760 × 0.6 − 2.10 × 8,760 = $2,838.24 per GPU. The cheapest
	// offer (together, 2.69) breaks even at 66.6 % and loses $2,330.16.
	out, code := run(t, "--store", dsn, "breakeven", "--gpu", "H100-SXM-80GB", "--term", "1y", "--utilisation", "60%",
		"--quote", "2.10", "--at", "2026-11-02")
	if code != 0 || !strings.Contains(out, "At your 60 % utilisation this one-year quote beats today's on-demand median "+
		"($4.04) by $2838 over the term per GPU; below 52 % it loses.") {
		t.Errorf("breakeven: exit %d\n%s", code, out)
	}
	type breakEvens struct {
		Hours  float64 `json:"hours"`
		Offers []struct {
			Offer struct {
				Provider string  `json:"provider"`
				Price    float64 `json:"price_usd_gpu_hour"`
			} `json:"offer"`
			Market struct {
				BreakEven float64 `json:"break_even"`
				Saving    float64 `json:"saving_usd"`
			} `json:"market"`
			Upfront      *float64 `json:"upfront_usd_per_gpu"`
			Cancellation string   `json:"cancellation"`
		} `json:"offers"`
		Quote struct {
			Market struct {
				BreakEven float64 `json:"break_even"`
				Saving    float64 `json:"saving_usd"`
			} `json:"market"`
		} `json:"quote"`
	}
	var be breakEvens
	runJSON(t, &be, "--store", dsn, "breakeven", "--gpu", "H100-SXM-80GB", "--term", "1y", "--utilisation", "0.6",
		"--quote", "2.10", "--at", "2026-11-02", "--format", "json")
	if be.Hours != 8760 || len(be.Offers) != 7 || be.Offers[0].Offer.Provider != "together" ||
		be.Quote.Market.Saving != 2838.24 || !near(be.Quote.Market.BreakEven, 0.519802) {
		t.Errorf("breakeven json: %+v", be)
	}
	for _, o := range be.Offers {
		if o.Offer.Price == 4.1803 && (o.Upfront == nil || *o.Upfront != 36619.43 || o.Cancellation != aws.Cancellation) {
			t.Errorf("aws all-upfront: upfront %v, %q; want 4.1803 × 8760 = 36619.43, %q", o.Upfront, o.Cancellation,
				aws.Cancellation)
		}
	}

	// A six-month term (6 × 730 = 4,380 hours): RunPod's plan at $2.601 is the
	// cheapest, paid whole upfront: 2.601 × 4,380 = $11,392.38 per GPU, non-refundable.
	// Against the on-demand median u* = 2.601 / 4.04 = 64.4 %, and at 60 % it loses
	// 4.04 × 4,380 × 0.6 − 11,392.38 = 10,617.12 − 11,392.38 = −$775.26; against its own
	// $2.99 on demand u* = 2.601 / 2.99 = 87.0 %. Together and crusoe publish no
	// upfront or cancellation terms.
	out, code = run(t, "--store", dsn, "breakeven", "--gpu", "H100-SXM-80GB", "--term", "6m", "--utilisation", "60%",
		"--at", "2026-11-02")
	if code != 0 || !strings.Contains(out, "11392.38") || !strings.Contains(out, runpod.Cancellation) ||
		!strings.Contains(out, "loses to today's on-demand median ($4.04) by $775 over the term per GPU; above 64 % it wins.") {
		t.Errorf("breakeven 6m: exit %d\n%s", code, out)
	}
	var be6 breakEvens
	runJSON(t, &be6, "--store", dsn, "breakeven", "--gpu", "H100-SXM-80GB", "--term", "6m", "--utilisation", "0.6",
		"--at", "2026-11-02", "--format", "json")
	if be6.Hours != 4380 || len(be6.Offers) != 3 {
		t.Fatalf("breakeven 6m json: %+v", be6)
	}
	rp := be6.Offers[0]
	if rp.Offer.Provider != "runpod" || rp.Offer.Price != 2.601 || !near(rp.Market.BreakEven, 0.643812) ||
		rp.Market.Saving != -775.26 || rp.Upfront == nil || *rp.Upfront != 11392.38 || rp.Cancellation != runpod.Cancellation {
		t.Errorf("runpod 6-month plan: %+v (upfront %v)", rp, rp.Upfront)
	}
	for _, o := range be6.Offers[1:] {
		if o.Upfront != nil || o.Cancellation != "" {
			t.Errorf("%s: upfront %v, cancellation %q; its provider publishes neither", o.Offer.Provider, o.Upfront,
				o.Cancellation)
		}
	}

	// 70e9 parameters at fp8 fit one H100 (70 of 80 GB); decode reads 70 GB a token
	// at 3.35 TB/s × 0.658: 31.49 tokens/s; vast's $0.40 spot → 0.40 × 1e6 / (31.49 × 3600)
	// = $3.528457 per 1M.
	var inf []struct {
		Provider string `json:"provider"`
		Cost     struct {
			GPUs     int     `json:"gpus"`
			TPS      float64 `json:"output_tokens_per_s"`
			PerM     float64 `json:"usd_per_1m_output_tokens"`
			PriceGPU float64 `json:"price_usd_gpu_hour"`
		} `json:"cost"`
	}
	runJSON(t, &inf, "--store", dsn, "inference", "--params", "70e9", "--precision", "fp8", "--gpu", "H100-SXM-80GB", "--format", "json")
	if len(inf) == 0 || inf[0].Provider != "vast" || inf[0].Cost.GPUs != 1 || inf[0].Cost.TPS != 31.49 ||
		inf[0].Cost.PerM != 3.528457 {
		t.Errorf("inference: %+v", inf[:min(len(inf), 2)])
	}
}

// TestWebAppTermCurve: the web app's /terms view draws the term curve of the
// recorded example in headless Chromium: the market median, the cheapest and spot
// (three lines), the median line's blue pixels on the canvas, and a table whose
// one-year reservation median is the API's (4.201625, shown 4.20).
func TestWebAppTermCurve(t *testing.T) {
	ctx := browser(t)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "terms-web.duckdb")
	recorded := filepath.Join("..", "..", "examples", "recorded")
	if _, code := run(t, "--store", dsn, "reparse", recorded); !collected(code) {
		t.Fatalf("reparse %s failed", recorded)
	}
	base, stop := startServe(t, "--store", dsn)
	defer stop()
	do(t, ctx, "open the term curve", chromedp.Navigate(base+"/terms?gpu=H100-SXM-80GB&at=2026-11-02"),
		chromedp.WaitVisible(chromedp.CSS(`#terms-chart[data-series-drawn]`)), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
	if n := eval[string](t, ctx, `document.querySelector('#terms-chart').dataset.seriesDrawn`); n != "3" {
		t.Errorf("term chart drew %s lines, want the median, the cheapest and spot", n)
	}
	if px := eval[int](t, ctx, canvasPixels("#terms-chart", 47, 111, 222)); px < 100 {
		t.Errorf("%d pixels of the median line on the canvas", px)
	}
	cells := eval[[]string](t, ctx, `[...document.querySelectorAll('#terms-market tbody tr')]
	  .filter(tr => tr.children[1].textContent.includes('1y') || tr.children[1].textContent.toLowerCase().includes('reserved 1'))
	  .map(tr => tr.children[2].textContent + '|' + tr.children[3].textContent + '|' + tr.children[5].textContent)`)
	if len(cells) != 1 || cells[0] != "12|6|4.20" {
		t.Errorf("one-year reservation row %q, want 12 months, 6 offers, median 4.20", cells)
	}
	shot(t, ctx, "terms")
	accessible(t, ctx, "terms")
}

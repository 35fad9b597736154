package analytics

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// val reads an optional figure; nil (undefined) is NaN, which no assertion accepts.
func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.9g, want %.9g (±%g)", name, got, want, tol)
	}
}

var t0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

// TestTokensArchitectureExample is the example of ARCHITECTURE.md: H100 SXM at
// $2.49/GPU-h, 7B params, MFU 0.50, 989 dense BF16 TFLOPS → ≈ $58.7–58.8 per 1B
// tokens. By hand: 6 × 7e9 = 4.2e10 FLOPs a token; 989e12 × 0.5 × 3600 = 1.7802e18
// FLOPs a GPU-hour; 1.7802e18 / 4.2e10 = 42,385,714.3 tokens a GPU-hour;
// 2.49 × 1e9 / 42,385,714.3 = 58.7462; 1e11 tokens take 2359.2855 GPU-hours, $5874.62
// (checked with a calculator, not this package).
func TestTokensArchitectureExample(t *testing.T) {
	c, err := Tokens(2.49, 7e9, 989, 0.5, 1e11)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "tokens per GPU-hour", c.TokensPerGPUHour, 42385714.2857, 1e-3)
	near(t, "$ per 1B tokens", c.USDPer1BTokens, 58.7462, 1e-4)
	if math.Abs(c.USDPer1BTokens-58.8) > 0.06 {
		t.Errorf("$/1B %v is not ≈ $58.8", c.USDPer1BTokens)
	}
	near(t, "GPU-hours for 1e11 tokens", c.GPUHours, 2359.285474, 1e-5)
	near(t, "cost of the run", c.RunUSD, 5874.620829, 1e-5)
	c2, _ := Tokens(2.49, 7e9, 989.4, 0.5, 0)
	near(t, "$ per 1B at 989.4 TFLOPS", c2.USDPer1BTokens, 58.7225, 1e-4)
	if c2.GPUHours != 0 || c2.RunUSD != 0 {
		t.Errorf("no --tokens, yet run totals: %+v", c2)
	}
	ex := c.Explain()
	for _, s := range []string{"42385714", "$58.7462", "2359.29", "$5874.62"} {
		if !strings.Contains(ex, s) {
			t.Errorf("Explain lacks %q:\n%s", s, ex)
		}
	}
	for _, bad := range [][4]float64{{2.49, 0, 989, .5}, {2.49, 7e9, 0, .5}, {2.49, 7e9, 989, 0}, {2.49, 7e9, 989, 1.2}, {-1, 7e9, 989, .5}} {
		if _, err := Tokens(bad[0], bad[1], bad[2], bad[3], 0); err == nil {
			t.Errorf("Tokens%v: no error", bad)
		}
	}
}

// MFU bands follow what limits MFU, never the provider's brand: the same H100
// SXM over InfiniBand has one band whoever sells it.
func TestMFUFor(t *testing.T) {
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	gpu := func(id string) schemas.GPU {
		g, ok := cat.Lookup(id)
		if !ok {
			t.Fatalf("%s not in catalog", id)
		}
		return g
	}
	cases := []struct {
		gpu, ic, class string
		lo, hi         float64
	}{
		{"H100-SXM-80GB", schemas.InterconnectInfiniband, MFUMultiNodeRDMA, .38, .552},
		{"H100-SXM-80GB", schemas.InterconnectEFA, MFUMultiNodeRDMA, .38, .552},
		{"MI300X-OAM-192GB", schemas.InterconnectRoCE, MFUMultiNodeRDMA, .38, .552},
		{"H100-SXM-80GB", schemas.InterconnectEthernet, MFUSingleNodeNVLink, .44, .72},
		{"A100-SXM-80GB", schemas.InterconnectNVLinkOnly, MFUSingleNodeNVLink, .44, .72},
		{"GB200-SUPERCHIP-186GB", schemas.InterconnectUnknown, MFUSingleNodeNVLink, .44, .72},
	}
	for _, c := range cases {
		b, err := MFUFor(gpu(c.gpu), c.ic)
		if err != nil || b.Class != c.class || b.Low != c.lo || b.High != c.hi || len(b.Sources) == 0 {
			t.Errorf("MFUFor(%s, %s) = %+v, %v; want %s %v–%v", c.gpu, c.ic, b, err, c.class, c.lo, c.hi)
		}
	}
	// The brand does not move the band: every provider's H100 over InfiniBand is one band.
	a, _ := MFUFor(gpu("H100-SXM-80GB"), schemas.InterconnectInfiniband)
	if a.Mid() != 0.466 {
		t.Errorf("multi-node RDMA midpoint %v, want 0.466", a.Mid())
	}
	for _, c := range []struct{ gpu, class string }{
		{"RTX4090-PCIE-24GB", MFUConsumer}, {"RTX5090-PCIE-32GB", MFUConsumer},
		{"L40S-PCIE-48GB", MFUPCIe}, {"H100-PCIE-80GB", MFUPCIe}, {"RTXA6000-PCIE-48GB", MFUPCIe},
		// a form factor the provider does not state leaves the limit unknown: no band
		{"A100-UNSTATED-80GB", MFUUnstated},
	} {
		if cl := MFUClassOf(gpu(c.gpu), schemas.InterconnectEthernet); cl != c.class {
			t.Errorf("%s: class %s, want %s", c.gpu, cl, c.class)
		}
		if _, err := MFUFor(gpu(c.gpu), schemas.InterconnectEthernet); !errors.Is(err, ErrNoMFUBand) {
			t.Errorf("%s: err = %v, want ErrNoMFUBand (no public measurement)", c.gpu, err)
		}
	}
	// Every band names public sources, and --explain prints them.
	ex := ExplainBands()
	for _, want := range []string{"Llama 3 Herd", "38–43 %", "MegaScale", "55.2 %", "MLPerf", "FlashAttention-2"} {
		if !strings.Contains(ex, want) {
			t.Errorf("ExplainBands lacks %q:\n%s", want, ex)
		}
	}
}

func TestNoFloatNoise(t *testing.T) {
	b := MFUBand{Low: 0.38, High: 0.46}
	if b.Mid() != 0.42 || FormatNumber((0.38+0.46)/2, 4) != "0.42" {
		t.Errorf("mid %v / %q: float noise", b.Mid(), FormatNumber((0.38+0.46)/2, 4))
	}
	c, err := Tokens(2.49, 7e9, 989.4, (0.38+0.46)/2, 1e11)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{c.Explain(), fmt.Sprint(c.MFU), fmt.Sprint(c.USDPer1BTokens), fmt.Sprint(c.RunUSD)} {
		if strings.Contains(s, "0000000") || strings.Contains(s, "9999999") {
			t.Errorf("float noise in %q", s)
		}
	}
}

func TestPeakTFLOPSNoFigure(t *testing.T) {
	cat, _ := schemas.DefaultCatalog()
	g, _ := cat.Lookup("RTXPRO6000SERVER-PCIE-96GB")
	if _, err := PeakTFLOPS(g, BF16); err == nil || !strings.Contains(err.Error(), "no dense BF16/FP16 figure is known") {
		t.Errorf("RTX PRO 6000: %v", err)
	}
}

func TestPeakTFLOPS(t *testing.T) {
	g := schemas.GPU{ID: "X", DenseBF16TFLOPS: 989, DenseFP8TFLOPS: 1979}
	if p, err := PeakTFLOPS(g, BF16); p != 989 || err != nil {
		t.Errorf("bf16: %v, %v", p, err)
	}
	if p, err := PeakTFLOPS(g, FP8); p != 1979 || err != nil {
		t.Errorf("fp8: %v, %v", p, err)
	}
	if _, err := PeakTFLOPS(schemas.GPU{ID: "A100", DenseBF16TFLOPS: 312}, FP8); err == nil {
		t.Error("fp8 on a GPU without FP8: no error")
	}
	if _, err := PeakTFLOPS(g, "int4"); err == nil {
		t.Error("int4: no error")
	}
}

func TestPercentileAndTrim(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	near(t, "p25", Percentile(xs, .25), 1.75, 1e-12)
	near(t, "p90", Percentile(xs, .9), 3.7, 1e-12)
	near(t, "p50", Median(xs), 2.5, 1e-12)
	near(t, "p100", Percentile(xs, 1), 4, 0)
	if xs[0] != 4 {
		t.Error("Percentile sorted its input")
	}
	// mean 14.5, sample SD 30.15: 100 lies 85.5 > 75.4 away and goes; the median of
	// 1…9 is 5 (untrimmed: 5.5).
	m, dropped := TrimmedMedian([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 100})
	if m != 5 || dropped != 1 {
		t.Errorf("TrimmedMedian = %v, %d dropped; want 5, 1", m, dropped)
	}
	if m, d := TrimmedMedian([]float64{1, 100}); m != 50.5 || d != 0 {
		t.Errorf("two values: %v, %d", m, d)
	}
}

func bar(series string, start time.Time, o, h, l, c float64) store.Bar {
	return store.Bar{Provider: "aws", SKU: series, Region: "us-east-1", Zone: "us-east-1a", Pricing: schemas.Spot,
		GPU: "H100-SXM-80GB", Tier: schemas.TierHyperscaler, Start: start, Open: o, High: h, Low: l, Close: c, Mean: c, Count: 1}
}

// TestVolatility: closes 100, 110, 99, 99 on hourly bars. Log returns ln 1.1,
// ln 0.9, 0: sample SD 0.1003773, × √8760 = 9.394799. Closes: mean 102, sample SD
// √(86/3) → CV 0.0524914. Range 112/98 − 1. Drawdown from 110 to 99: 0.1. Two
// changes. Below 105 over five hourly steps (100, 110, 99, 99, 99 carried): 0.8.
func TestVolatility(t *testing.T) {
	bars := []store.Bar{
		bar("p5", t0, 100, 100, 100, 100),
		bar("p5", t0.Add(time.Hour), 100, 112, 105, 110),
		bar("p5", t0.Add(2*time.Hour), 110, 110, 98, 99),
		bar("p5", t0.Add(4*time.Hour), 99, 99, 99, 99), // an empty hour before it
	}
	v := SeriesVolatilityOf(bars, time.Hour, t0.Add(5*time.Hour), 105)
	near(t, "std", v.StdLogReturn, 0.10037728548770321, 1e-12)
	near(t, "annualised", v.Annualised, 9.394799152236715, 1e-9)
	near(t, "cv", v.CV, 0.052491432693493496, 1e-12)
	near(t, "range", v.Range, 112.0/98-1, 1e-12)
	near(t, "drawdown", v.MaxDrawdown, 0.1, 1e-12)
	near(t, "share below", val(v.ShareBelow), 0.8, 1e-12)
	if v.Changes != 2 || v.Bars != 4 || v.Returns != 3 {
		t.Errorf("changes %d, bars %d, returns %d; want 2, 4, 3", v.Changes, v.Bars, v.Returns)
	}
	// Daily bars annualise by √365.
	d := SeriesVolatilityOf(bars, 24*time.Hour, t0.Add(5*time.Hour), 0)
	near(t, "daily annualised", d.Annualised, 0.10037728548770321*math.Sqrt(365), 1e-9)
	if d.ShareBelow != nil { // no threshold: none (null), not a sentinel
		t.Errorf("no threshold, ShareBelow %v", *d.ShareBelow)
	}
	// Two series in one offering: medians.
	other := []store.Bar{bar("p4", t0, 10, 10, 10, 10), bar("p4", t0.Add(time.Hour), 10, 10, 10, 10),
		bar("p4", t0.Add(2*time.Hour), 10, 10, 10, 10)}
	vs := Volatilities(append(other, bars...), time.Hour, t0.Add(5*time.Hour), -1)
	g := Group(vs, ByOffering)
	if len(g) != 1 || g[0].Series != 2 || g[0].Changes != 2 {
		t.Fatalf("Group: %+v", g)
	}
	near(t, "group std", g[0].StdLogReturn, 0.10037728548770321/2, 1e-12)
	// A group whose one series has a single bar: no standard deviation, CV or
	// drawdown (null), not 0.
	lone := Group(Volatilities([]store.Bar{bar("p3", t0, 10, 11, 9, 10)}, time.Hour, t0.Add(time.Hour), 0), ByOffering)
	if b, _ := json.Marshal(lone); len(lone) != 1 || lone[0].StdDefined() || lone[0].CVDefined() || lone[0].DrawdownDefined() || !lone[0].RangeDefined() ||
		!strings.Contains(string(b), `"annualised":null,"cv":null`) {
		t.Errorf("group of one bar: %s", b)
	}
	if z := Group(vs, ByZone); len(z) != 1 || z[0].Zone != "us-east-1a" {
		t.Errorf("ByZone: %+v", z)
	}
}

func day(d int) time.Time { return t0.AddDate(0, 0, d) }

func TestDailyPricesCarryForward(t *testing.T) {
	bars := []store.Bar{bar("a", day(-3), 5, 5, 5, 5), bar("a", day(1), 6, 6, 6, 6), bar("b", day(2), 7, 7, 7, 7)}
	got := DailyPrices(bars, day(0), day(3))
	want := map[string]float64{"a|0": 5, "a|1": 6, "a|2": 6, "b|2": 7}
	if len(got) != len(want) {
		t.Fatalf("%d day prices, want %d: %+v", len(got), len(want), got)
	}
	for _, p := range got {
		k := p.Bar.SKU + "|" + string(rune('0'+int(p.Day.Sub(t0)/(24*time.Hour))))
		if want[k] != p.Price {
			t.Errorf("%s: %v, want %v", k, p.Price, want[k])
		}
	}
}

func dp(provider, tier, pricing string, sku string, d int, price float64) DayPrice {
	b := store.Bar{Provider: provider, SKU: sku, Pricing: pricing, GPU: "H100-SXM-80GB", Tier: tier, Start: day(d), Close: price}
	return DayPrice{Day: day(d), Series: b.SeriesKey(), Bar: b, Price: price}
}

// TestSpreads: hyperscalers 4.0 and 4.4 (median 4.2), specialists 2.0, 2.2, 2.6
// (median 2.2): ratio 4.2/2.2 = 1.90909, premium 90.909 %. The next day the
// specialists' median is 2.1: ratio 2.0, and the ratio moved by +0.0909.
func TestSpreads(t *testing.T) {
	h, s, m := schemas.TierHyperscaler, schemas.TierSpecialist, schemas.TierMarketplace
	prices := []DayPrice{
		dp("aws", h, "on_demand", "p5", 0, 4.0), dp("azure", h, "on_demand", "nd", 0, 4.4),
		dp("lambda", s, "on_demand", "l", 0, 2.0), dp("coreweave", s, "on_demand", "c", 0, 2.2),
		dp("gmi", s, "on_demand", "g", 0, 2.6), dp("vast", m, "on_demand", "v", 0, 1.8),
		dp("aws", h, "on_demand", "p5", 1, 4.0), dp("azure", h, "on_demand", "nd", 1, 4.4),
		dp("lambda", s, "on_demand", "l", 1, 2.0), dp("coreweave", s, "on_demand", "c", 1, 2.2),
	}
	days := Spreads(prices)
	if len(days) != 2 {
		t.Fatalf("%d spread days: %+v", len(days), days)
	}
	near(t, "day 0 hyperscaler", val(days[0].Hyperscaler), 4.2, 1e-12)
	near(t, "day 0 specialist", val(days[0].Specialist), 2.2, 1e-12)
	near(t, "day 0 marketplace", val(days[0].Marketplace), 1.8, 1e-12)
	near(t, "day 0 ratio", val(days[0].Ratio), 4.2/2.2, 1e-12)
	near(t, "day 0 premium", val(days[0].PremiumPct), (4.2/2.2-1)*100, 1e-9)
	near(t, "day 1 ratio", val(days[1].Ratio), 2.0, 1e-12)
	sum := SummariseSpreads(days)
	if len(sum) != 1 || sum[0].Days != 2 {
		t.Fatalf("summary: %+v", sum)
	}
	near(t, "ratio change", sum[0].RatioChange, 2.0-4.2/2.2, 1e-12)
}

// TestHistory: on-demand day prices over three days, aws 2.0, 2.1, 2.2 and lambda
// 3.0 each day; reserved_1y at aws 1.4 on the last day: 30 % off aws's 2.0… 2.2.
// TestHistoryTrendIgnoresEntryAndExit: series a at 2.0 and b at 3.0 on day 0; c at
// 1.0 enters on day 1; b leaves on day 2. The daily median falls 2.5 → 2 → 1.5, but
// no series' price moved: the trend is exactly 0, with 1 series entered and 1 left.
func TestHistoryTrendIgnoresEntryAndExit(t *testing.T) {
	s := schemas.TierSpecialist
	prices := []DayPrice{
		dp("x", s, "on_demand", "a", 0, 2.0), dp("x", s, "on_demand", "b", 0, 3.0),
		dp("x", s, "on_demand", "a", 1, 2.0), dp("x", s, "on_demand", "b", 1, 3.0), dp("y", s, "on_demand", "c", 1, 1.0),
		dp("x", s, "on_demand", "a", 2, 2.0), dp("y", s, "on_demand", "c", 2, 1.0),
	}
	o := HistoryOf("H100-SXM-80GB", "on_demand", prices, day(0), day(3), 1).Overall
	if o.TrendPctPer30d == nil || *o.TrendPctPer30d != 0 || *o.TrendPer30d != 0 {
		t.Errorf("trend %v %%, %v $: want 0 (entry and exit are not price movement)", o.TrendPctPer30d, o.TrendPer30d)
	}
	if o.SeriesEntered != 1 || o.SeriesLeft != 1 {
		t.Errorf("entered %d left %d, want 1 and 1", o.SeriesEntered, o.SeriesLeft)
	}
	// One day only: no trend, not a zero one.
	one := HistoryOf("H100-SXM-80GB", "on_demand", prices[:2], day(0), day(1), 1).Overall
	if one.TrendPctPer30d != nil {
		t.Errorf("one day: trend %v, want none", *one.TrendPctPer30d)
	}
}

func TestHistory(t *testing.T) {
	h, s := schemas.TierHyperscaler, schemas.TierSpecialist
	prices := []DayPrice{
		dp("aws", h, "on_demand", "p5", 0, 2.0), dp("aws", h, "on_demand", "p5", 1, 2.1), dp("aws", h, "on_demand", "p5", 2, 2.2),
		dp("lambda", s, "on_demand", "l", 0, 3.0), dp("lambda", s, "on_demand", "l", 1, 3.0), dp("lambda", s, "on_demand", "l", 2, 3.0),
		dp("aws", h, "reserved_1y", "p5", 2, 1.54),
	}
	got := HistoryOf("H100-SXM-80GB", "on_demand", prices, day(0), day(3), 1)
	o := got.Overall
	// The market at a time, per day: {2.0, 3.0}, {2.1, 3.0}, {2.2, 3.0}; p10 (h = 0.1)
	// 2.1, 2.19, 2.28; p50 2.5, 2.55, 2.6; p90 2.9, 2.91, 2.92; the window's is the
	// median over the days: 2.19, 2.55, 2.91 (pooled series-days gave 2.05, 2.6, 3.0).
	near(t, "p10", val(o.P10), 2.19, 1e-12)
	near(t, "p50", val(o.P50), 2.55, 1e-12)
	near(t, "p90", val(o.P90), 2.91, 1e-12)
	near(t, "min", val(o.Min), 2.0, 0)
	near(t, "latest", val(o.Latest), 2.2, 0)
	if o.Series != 2 || o.Samples != 6 {
		t.Errorf("series %d samples %d", o.Series, o.Samples)
	}
	// Matched: day 0→1 the mean log change of aws (2.1/2.0) and lambda (flat), day
	// 1→2 of aws (2.2/2.1) and lambda; chained over 2 days, compounded to 30 days;
	// in dollars, that percent of the mean daily median (2.5, 2.55, 2.6 → 2.55).
	l := (math.Log(2.1/2.0) + math.Log(2.2/2.1)) / 2
	pct := (math.Exp(l/2*30) - 1) * 100
	near(t, "trend %", val(o.TrendPctPer30d), pct, 1e-9)
	near(t, "trend", val(o.TrendPer30d), pct/100*2.55, 1e-9)
	if o.SeriesEntered != 0 || o.SeriesLeft != 0 {
		t.Errorf("entered %d left %d, want none", o.SeriesEntered, o.SeriesLeft)
	}
	if len(got.Providers) != 2 || got.Providers[0].Provider != "aws" {
		t.Fatalf("providers: %+v", got.Providers)
	}
	aws := got.Providers[0]
	awsPct := (math.Exp(math.Log(2.2/2.0)/2*30) - 1) * 100
	near(t, "aws trend %", val(aws.TrendPctPer30d), awsPct, 1e-9)
	near(t, "aws reserved discount", val(aws.ReservedDiscountPct), 30, 1e-9)
	// Overall, of the providers that publish both (aws): not aws's reserved price
	// against lambda's on-demand one.
	near(t, "overall reserved discount", val(o.ReservedDiscountPct), 30, 1e-9)
	if d := got.Providers[1].ReservedDiscountPct; d != nil { // lambda publishes no reserved price
		t.Errorf("lambda reserved discount %v, want none (null)", *d)
	}
	if len(got.Cheapest) != 1 || got.Cheapest[0].Provider != "aws" || got.Cheapest[0].Price != 2.2 {
		t.Errorf("cheapest: %+v", got.Cheapest)
	}
}

// TestIndex: ten others' offers 1…9 and 100 → 5 after trimming; hyperscalers apart.
func TestIndex(t *testing.T) {
	var prices []DayPrice
	for i, p := range []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 100} {
		prices = append(prices, dp("vast", schemas.TierMarketplace, "on_demand", string(rune('a'+i)), 0, p))
	}
	prices = append(prices, dp("aws", schemas.TierHyperscaler, "on_demand", "p5", 0, 12.3))
	idx := Index(prices)
	if len(idx) != 2 {
		t.Fatalf("index: %+v", idx)
	}
	if idx[0].Group != GroupHyperscaler || idx[0].Price != 12.3 || idx[0].Offers != 1 {
		t.Errorf("hyperscaler point: %+v", idx[0])
	}
	if idx[1].Group != GroupOthers || idx[1].Price != 5 || idx[1].Dropped != 1 || idx[1].Method != IndexVersion {
		t.Errorf("others point: %+v", idx[1])
	}
}

// TestSpreadsMissingTier: a day without a specialist price has no ratio (null),
// never 0, and the summary skips it.
func TestSpreadsMissingTier(t *testing.T) {
	h, m := schemas.TierHyperscaler, schemas.TierMarketplace
	days := Spreads([]DayPrice{dp("aws", h, "on_demand", "p5", 0, 4.0), dp("vast", m, "on_demand", "v", 0, 1.8)})
	if len(days) != 1 {
		t.Fatalf("%d days", len(days))
	}
	d := days[0]
	if d.Ratio != nil || d.PremiumPct != nil || d.Specialist != nil || d.NSpecialist != 0 {
		t.Errorf("day without a specialist price: %+v", d)
	}
	near(t, "hyperscaler", val(d.Hyperscaler), 4.0, 0)
	if s := SummariseSpreads(days); len(s) != 0 {
		t.Errorf("summary of days without a ratio: %+v", s)
	}
	hs := HistoryOf("H100-SXM-80GB", "on_demand", nil, day(0), day(3), 5)
	if hs.Overall.P50 != nil || hs.Overall.Min != nil || hs.Overall.TrendPer30d != nil || hs.Overall.Samples != 0 {
		t.Errorf("history of nothing: %+v", hs.Overall)
	}
}

// The chained index is not moved by the mix: two series fall 5 % while two premium
// offers enter; the trimmed median jumps, the matched-sample chained index falls 5 %.
func TestChainedIndexIgnoresComposition(t *testing.T) {
	d0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	d1 := d0.Add(24 * time.Hour)
	p := func(series string, day time.Time, price float64) DayPrice {
		return DayPrice{Day: day, Series: series, Price: price,
			Bar: store.Bar{Provider: series, GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, Tier: schemas.TierSpecialist}}
	}
	idx := Index([]DayPrice{
		p("a", d0, 2.0), p("b", d0, 2.2),
		p("a", d1, 1.9), p("b", d1, 2.09), p("c", d1, 6.0), p("d", d1, 6.5),
	})
	if len(idx) != 2 {
		t.Fatalf("%+v", idx)
	}
	if idx[0].Chained != 2.1 || idx[0].Matched != 0 || idx[0].ChainedMethod != ChainedVersion || idx[0].Method != IndexVersion {
		t.Errorf("day 0: %+v", idx[0])
	}
	if idx[1].Price < 4 {
		t.Errorf("day 1 trimmed median %v: the mix should move it", idx[1].Price)
	}
	if idx[1].Chained != 1.995 || idx[1].Matched != 2 {
		t.Errorf("day 1 chained %v (matched %d), want 1.995 over 2 matched series", idx[1].Chained, idx[1].Matched)
	}
}

// index --explain: a day's members and the series left out, with the reason.
func TestExplainIndexDay(t *testing.T) {
	d0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	d1 := d0.Add(24 * time.Hour)
	b := func(sku string, start time.Time, price float64, scope, basis string) store.Bar {
		return store.Bar{Provider: "p-" + sku, SKU: sku, GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand,
			Tier: schemas.TierSpecialist, Start: start, Close: price, PriceScope: scope, PriceBasis: basis}
	}
	bars := []store.Bar{
		b("a", d0, 2.0, "", ""), b("a", d1, 1.9, "", ""),
		b("b", d1, 2.2, "instance", "listed"),
		b("c", d1, 1.0, "instance", "derived"),
		b("d", d1, 9.8, "gpu_only", "listed"),
	}
	got := map[string]IndexMember{}
	for _, m := range ExplainIndexDay(bars, d1) {
		got[m.Series[:strings.Index(m.Series, "|")]] = m
	}
	want := map[string]string{"p-a": "member", "p-b": "member", "p-c": "derived", "p-d": "not comparable (gpu_only)"}
	for k, st := range want {
		if got[k].Status != st {
			t.Errorf("%s: %+v, want %s", k, got[k], st)
		}
	}
	if !got["p-a"].Matched || got["p-b"].Matched {
		t.Errorf("matched: a %v (priced the day before), b %v (new)", got["p-a"].Matched, got["p-b"].Matched)
	}
}

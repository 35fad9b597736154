package analytics

import (
	"math"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// The recorded example's H100-SXM-80GB one-year offers on 2026-11-02 and a quote of
// $3.50: worked by hand, the quote is 3rd of 7 (2.69 and 2.90 are cheaper), $0.81
// above together's $2.69, $0.54 below the on-demand median $4.04 of the four
// on-demand offers (3.99, 4.00 | 4.08, 4.29 → (4.00+4.08)/2), and it beats on-demand
// above 3.50/4.04 = 86.6 % utilisation; spot's median (0.40, 1.00, 1.7333, 2.4638 →
// 1.3667) is cheaper at any utilisation.
func TestQuoteVerdictLikeForLike(t *testing.T) {
	term := []Offer{
		{Provider: "aws", Price: 4.1803}, {Provider: "together", Price: 2.69}, {Provider: "crusoe", Price: 2.90},
		{Provider: "aws", Price: 4.2230}, {Provider: "aws", Price: 4.2656}, {Provider: "azure", Price: 8.1170},
		{Provider: "azure", Price: 9.3404},
	}
	od := []Offer{{Price: 3.99}, {Price: 4.00}, {Price: 4.08}, {Price: 4.29}}
	spot := []Offer{{Price: 0.40}, {Price: 1.00}, {Price: 1.7333}, {Price: 2.4638}}
	v := QuoteVerdict(3.50, "1y", 8760, term, od, spot)
	if v.Rank != 3 || v.Offers != 7 || v.Cheapest.Provider != "together" || *v.TermMedian != 4.2230 {
		t.Fatalf("rank %d of %d, cheapest %+v, median %v", v.Rank, v.Offers, v.Cheapest, *v.TermMedian)
	}
	if math.Abs(*v.OnDemand-4.04) > 1e-9 || math.Abs(*v.OnDemandBreakEven-3.50/4.04) > 1e-9 {
		t.Fatalf("on-demand %v break-even %v", *v.OnDemand, *v.OnDemandBreakEven)
	}
	if math.Abs(*v.Spot-1.36665) > 1e-9 || *v.SpotBreakEven < 1 {
		t.Fatalf("spot %v break-even %v", *v.Spot, *v.SpotBreakEven)
	}
	got := strings.Join(v.Sentences(), " ")
	for _, want := range []string{
		"3rd cheapest of 7 one-year offers; $0.81 above the cheapest (together, $2.69)",
		"$0.54 below today's on-demand median ($4.04, 4 offers)",
		"used more than 87 % of the 8760 hours (7589 hours)",
		"Paying spot by the hour costs less at any utilisation",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("verdict lacks %q:\n%s", want, got)
		}
	}
	// The cheapest quote, and a quote with no offer of its term.
	if v := QuoteVerdict(2.00, "3y", 26280, term, nil, nil); v.Rank != 1 ||
		!strings.Contains(strings.Join(v.Sentences(), " "), "is the cheapest of 7 three-year offers; $0.69 below") {
		t.Errorf("cheapest quote: %d %q", v.Rank, v.Sentences())
	}
	if s := QuoteVerdict(2.00, "3y", 26280, nil, nil, nil).Sentences(); !strings.Contains(s[0], "No three-year offer") {
		t.Errorf("no term offers: %q", s)
	}
	for n, w := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 102: "102nd"} {
		if Ordinal(n) != w {
			t.Errorf("Ordinal(%d) = %s", n, Ordinal(n))
		}
	}
}

// TestUnknownGPUComparesWithNothing: an unknown GPU's bars (a V100 and a P100 may
// share the name) never take part in day prices: no cheapest, spread or index.
func TestUnknownGPUComparesWithNothing(t *testing.T) {
	known := dp("aws", schemas.TierHyperscaler, "on_demand", "p5", 0, 4.0)
	unknown := dp("vast", schemas.TierMarketplace, "on_demand", "v", 0, 0.5)
	unknown.Bar.GPU = schemas.UnknownGPU
	got := DailyPrices([]store.Bar{known.Bar, unknown.Bar}, day(0), day(1))
	if len(got) != 1 || got[0].Bar.GPU != "H100-SXM-80GB" {
		t.Fatalf("day prices %+v, want the known GPU's only", got)
	}
	if Comparable(unknown.Bar) || len(ScopedDailyPrices([]store.Bar{unknown.Bar}, day(0), day(1), schemas.ScopeGPUOnly)) != 0 {
		t.Error("an unknown GPU is comparable")
	}
}

// TestTermWords: the words a buyer reads for each term the CLI takes.
func TestTermWords(t *testing.T) {
	for term, want := range map[string]string{"1y": "one-year", "3y": "three-year", "6m": "6-month", "12m": "12-month",
		"m": "m", "xm": "xm", "2w": "2w"} {
		if got := TermWords(term); got != want {
			t.Errorf("TermWords(%q) = %q, want %q", term, got, want)
		}
	}
}

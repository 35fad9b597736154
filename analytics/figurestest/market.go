package figurestest

import (
	"math"
	"testing"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// marketCrossSection checks the market at a time (analytics.MarketMethod) on the
// store's own bars, against figures computed by hand, each offer once and each
// provider once. The day cross-sections (offers in force) are
//
//	days 0–2 {2, 3, 6}, day 3 {3, 6}, days 4–5 {1 ×8, 3, 6}
//
// so, per day (type 7), p10 2.2 ×3, 3.3, 1 ×2 → window (median of the days) 2.2;
// p50 3 ×3, 4.5, 1 ×2 → 3; p90 5.4 ×3, 5.7, 3.3 ×2 → 5.4. Pooled series-days (31
// of them, 16 at $1.00) would give a p50 of 1. By provider (x's median for x):
// days 0–2 {2.5, 6} p50 4.25, day 3 {3, 6} 4.5, days 4–5 {1, 3, 6} 3 → 4.25; the
// last day's median is 1 by offer, 3 by provider.
func (s *suite) marketCrossSection(t *testing.T) {
	st := s.fresh(t)
	obs := storetest.MarketData()
	storetest.Write(t, st, obs)
	storetest.Rollup(t, st, storetest.M0, storetest.M0.AddDate(0, 0, 7))
	ro, ok := st.(store.Rollups)
	if !ok {
		t.Skip("no bars")
	}
	f := store.Filter{GPU: "H100-SXM-80GB", Since: storetest.M0, Until: storetest.M0.AddDate(0, 0, 6)}
	h, err := analytics.HistoryFor(ctx(t), ro, f, "H100-SXM-80GB", schemas.OnDemand, 3)
	if err != nil {
		t.Fatal(err)
	}
	o := h.Overall
	check := func(what string, got *float64, want float64) {
		t.Helper()
		if got == nil || math.Abs(*got-want) > 1e-9 {
			t.Errorf("%s = %s, want %v", what, showOpt(got), want)
		}
	}
	check("p10", o.P10, 2.2)
	check("p50", o.P50, 3)
	check("p90", o.P90, 5.4)
	check("min", o.Min, 1)
	check("latest", o.Latest, 1)
	check("latest median", o.LatestMedian, 1)
	check("trend %", o.TrendPctPer30d, 0) // entering and leaving moved no price
	if o.Days != 6 || o.Samples != 31 || o.Series != 11 || o.SeriesEntered != 8 || o.SeriesLeft != 1 ||
		h.Weight != analytics.WeightOffer {
		t.Errorf("days %d samples %d series %d entered %d left %d weight %q; want 6, 31, 11, 8, 1, offer",
			o.Days, o.Samples, o.Series, o.SeriesEntered, o.SeriesLeft, h.Weight)
	}
	// Composition, like for like: big and x/a are in force on days 0 and 5 (of 3
	// offers on day 0, 10 on day 5): each day {3, 6}, median 4.5 over the window and
	// on its last day, while the whole market's p50 is 3 and today's median 1.
	check("matched p50", o.MatchedP50, 4.5)
	check("matched latest median", o.MatchedLatestMedian, 4.5)
	if o.FirstDayOffers != 3 || o.LastDayOffers != 10 || o.MatchedOffers != 2 {
		t.Errorf("first day %d, last day %d, matched %d offers; want 3, 10, 2", o.FirstDayOffers, o.LastDayOffers,
			o.MatchedOffers)
	}
	bars, err := ro.Bars(ctx(t), store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
	if err != nil {
		t.Fatal(err)
	}
	w := analytics.HistoryWeighted("H100-SXM-80GB", schemas.OnDemand, analytics.DailyPrices(bars, f.Since, f.Until),
		f.Since, f.Until, 3, analytics.WeightProvider)
	check("p50 by provider", w.Overall.P50, 4.25)
	check("latest median by provider", w.Overall.LatestMedian, 3)
	check("latest by provider", w.Overall.Latest, 1) // the lowest offer still
	check("min by provider", w.Overall.Min, 1)
	check("matched p50 by provider", w.Overall.MatchedP50, 4.5) // big 6, x 3 (x/a alone)
	if w.Weight != analytics.WeightProvider {
		t.Errorf("weight %q", w.Weight)
	}
}

package figurestest

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// volatility checks a store's own volatility (store.VolatilityStats, computed where
// the bars are) against analytics.Volatilities over the bars the same store returns
// for the same query: the same series in the same order, the same counts, and every
// figure equal to within 1e-9 relative (the store's log and square root may round
// the last bits differently). Stores without it are skipped.
func (s *suite) volatility(t *testing.T) {
	st := s.fresh(t)
	vs, ok := st.(store.VolatilityStats)
	if !ok {
		t.Skipf("%T computes no volatility of its own", st)
	}
	all := storetest.RollupData()
	storetest.Write(t, st, all)
	// Every bar in two versions, one of them older: the last write counts.
	fixed := all[3]
	fixed.PriceUSDHour, fixed.PriceUSDGPUHour = 24.0, 3.0
	storetest.Write(t, st, []schemas.Observation{fixed})
	// A generated history: spot walks, steps, several providers and tiers.
	if err := storetest.Generate(storetest.GenSpec{Series: 60, Steps: 400, Start: storetest.T0, Step: 10 * time.Minute,
		Seed: 7}, 10_000,
		func(obs []schemas.Observation) error { storetest.Write(t, st, obs); return nil }); err != nil {
		t.Fatal(err)
	}
	storetest.Rollup(t, st, time.Time{}, time.Time{})
	end := storetest.T0.Add(60 * time.Hour)
	for _, q := range []store.BarQuery{
		{Width: store.Hourly},
		{Width: store.Hourly, Filter: store.Filter{Pricing: schemas.Spot, Since: storetest.T0.Add(3 * time.Hour),
			Until: end}},
		{Width: store.Hourly, Filter: store.Filter{Tier: schemas.TierSpecialist, Since: storetest.T0, Until: end}},
		{Width: store.Daily, Filter: store.Filter{GPU: "H100-SXM-80GB"}},
		{Width: store.Hourly, Filter: store.Filter{Provider: "aws", Region: "us-east-1", Until: end}},
	} {
		for _, below := range []float64{0, 2.5} {
			rs := st.(store.Rollups)
			bars, err := rs.Bars(ctx(t), q)
			if err != nil {
				t.Fatal(err)
			}
			want := analytics.Volatilities(bars, q.Width, end, below)
			got, err := vs.Volatilities(ctx(t), q, end, below)
			if err != nil {
				t.Fatalf("Volatilities %+v: %v", q, err)
			}
			if d := volatilityDiff(got, want); d != "" {
				t.Fatalf("Volatilities %+v below %v: %s", q, below, d)
			}
			if len(want) == 0 {
				t.Fatalf("query %+v selects no series: the test proves nothing", q)
			}
		}
	}
}

func volatilityDiff(got, want []store.SeriesVolatility) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d series, want %d", len(got), len(want))
	}
	near := func(a, b float64) bool {
		return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Key() != w.Key() || g.GPU != w.GPU || g.Tier != w.Tier || g.Bars != w.Bars ||
			g.Returns != w.Returns || g.Changes != w.Changes || (g.ShareBelow == nil) != (w.ShareBelow == nil) ||
			(g.ShareBelow != nil && *g.ShareBelow != *w.ShareBelow) {
			return fmt.Sprintf("series %d:\n got %+v\nwant %+v", i, g, w)
		}
		for _, f := range []struct {
			name string
			g, w float64
		}{{"std", g.StdLogReturn, w.StdLogReturn}, {"annualised", g.Annualised, w.Annualised},
			{"cv", g.CV, w.CV}, {"range", g.Range, w.Range}, {"drawdown", g.MaxDrawdown, w.MaxDrawdown},
			{"min", g.Min, w.Min}, {"max", g.Max, w.Max}, {"mean", g.Mean, w.Mean}, {"close", g.Close, w.Close}} {
			if !near(f.g, f.w) {
				return fmt.Sprintf("series %s %s: got %v, want %v", g.Key(), f.name, f.g, f.w)
			}
		}
	}
	return ""
}

// VolatilityDiff describes the first difference between two lists of series
// volatilities as the conformance suite compares them (counts exactly, figures to
// within 1e-9 relative), or returns "".
func VolatilityDiff(got, want []store.SeriesVolatility) string { return volatilityDiff(got, want) }

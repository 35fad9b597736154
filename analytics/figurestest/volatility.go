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

// volatilityWindows runs VolatilityWindows on a fresh store.
func (s *suite) volatilityWindows(t *testing.T) {
	st := s.fresh(t)
	if _, ok := st.(store.VolatilityStats); !ok {
		t.Skipf("%T computes no volatility of its own", st)
	}
	VolatilityWindows(t, st)(st, "rolled up")
}

// VolatilityWindows writes to st (migrated, empty, a store.VolatilityStats) the
// data of a check of hourly volatility where a store that combines per-day
// summaries could go wrong, rolls it up, and returns the check of a store holding
// that data (run it, and again after anything that rebuilds the summaries, on st
// or on st reopened): against analytics.Volatilities
// over the bars the same store returns, a series whose tier and price change in
// the middle of a UTC day (a tier filter splits that day; the day is rebuilt by
// later rollups), windows that cut days at both ends or fall within one day, open
// ends, a threshold with the window's end before, inside and after the data, GPU,
// tier, provider and region filters.
func VolatilityWindows(t *testing.T, st store.Store) (check func(st store.Store, when string)) {
	t.Helper()
	all := storetest.RollupData()
	if err := storetest.Generate(storetest.GenSpec{Series: 24, Steps: 500, Start: storetest.T0, Step: 10 * time.Minute,
		Seed: 3}, 10_000, func(obs []schemas.Observation) error { all = append(all, obs...); return nil }); err != nil {
		t.Fatal(err)
	}
	storetest.Write(t, st, all)
	storetest.Rollup(t, st, time.Time{}, time.Time{})
	// The spot history's series turns marketplace (and dearer) from T0+26h on,
	// 01:00 UTC: its day then has bars of two tiers. Rolled up twice more.
	var moved []schemas.Observation
	key := storetest.RollupData()[len(storetest.RollupData())-1].SeriesKey()
	cut := storetest.T0.Add(26 * time.Hour)
	for _, o := range all {
		if o.SeriesKey() == key && !o.EffectiveAt.Before(cut) {
			o.Tier = schemas.TierMarketplace
			o.PriceUSDGPUHour += 0.25
			moved = append(moved, o)
		}
	}
	if len(moved) == 0 {
		t.Fatal("no observations after the cut: the test proves nothing")
	}
	storetest.Write(t, st, moved)
	storetest.Rollup(t, st, time.Time{}, time.Time{})
	storetest.Rollup(t, st, cut, cut.Add(time.Hour))
	t0 := storetest.T0
	mid := t0.Add(26*time.Hour + 30*time.Minute)
	cases := []struct {
		f   store.Filter
		end time.Time
	}{
		{store.Filter{}, t0.Add(60 * time.Hour)},
		{store.Filter{Since: t0.Add(3 * time.Hour), Until: t0.Add(75 * time.Hour)}, t0.Add(75 * time.Hour)},
		{store.Filter{Since: t0.Add(7*time.Hour + 20*time.Minute), Until: mid}, mid},
		{store.Filter{Since: t0.Add(25 * time.Hour), Until: t0.Add(49 * time.Hour)}, t0.Add(49 * time.Hour)},
		{store.Filter{Since: t0.Add(26 * time.Hour), Until: t0.Add(30 * time.Hour)}, t0.Add(40 * time.Hour)},
		{store.Filter{Since: t0.Add(time.Hour), Until: t0.Add(49 * time.Hour)}, t0.Add(49 * time.Hour)},
		{store.Filter{Since: t0.Add(24 * time.Hour), Until: t0.Add(48 * time.Hour)}, t0.Add(48 * time.Hour)},
		{store.Filter{Until: t0.Add(49 * time.Hour)}, t0.Add(20 * time.Hour)},
		{store.Filter{Since: t0.Add(30 * time.Hour)}, t0.Add(100 * time.Hour)},
		{store.Filter{Tier: schemas.TierMarketplace}, t0.Add(90 * time.Hour)},
		{store.Filter{Tier: schemas.TierSpecialist, Since: t0.Add(24 * time.Hour)}, t0.Add(90 * time.Hour)},
		{store.Filter{Tier: schemas.TierHyperscaler, Since: t0.Add(5 * time.Hour)}, t0.Add(60 * time.Hour)},
		{store.Filter{GPU: "H100-SXM-80GB", Pricing: schemas.Spot, Since: t0.Add(2 * time.Hour),
			Until: t0.Add(70 * time.Hour)}, t0.Add(70 * time.Hour)},
		{store.Filter{Provider: "aws", Region: "us-east-1", Since: t0.Add(30 * time.Hour)}, t0.Add(100 * time.Hour)},
	}
	return func(st store.Store, when string) {
		t.Helper()
		vs, r := st.(store.VolatilityStats), st.(store.Rollups)
		for _, c := range cases {
			q := store.BarQuery{Width: store.Hourly, Filter: c.f}
			bars, err := r.Bars(ctx(t), q)
			if err != nil {
				t.Fatal(err)
			}
			if len(bars) == 0 {
				t.Fatalf("%s: %+v selects no bars: the case proves nothing", when, c.f)
			}
			for _, below := range []float64{0, 2.6} {
				want := analytics.Volatilities(bars, store.Hourly, c.end, below)
				got, err := vs.Volatilities(ctx(t), q, c.end, below)
				if err != nil {
					t.Fatalf("%s: Volatilities %+v: %v", when, c.f, err)
				}
				if d := volatilityDiff(got, want); d != "" {
					t.Fatalf("%s: Volatilities %+v end %s below %v: %s", when, c.f, c.end.Format(time.RFC3339), below, d)
				}
			}
		}
	}
}

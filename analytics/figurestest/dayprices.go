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

// DayPriceStats runs the check of the conformance suite's DayPriceStats on the
// stores open returns (fresh, empty, unmigrated each time), for a store that
// computes spreads and history of its own only when wrapped.
func DayPriceStats(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	s := &suite{open: open}
	s.dayPriceStats(t)
}

// dayPriceStats checks a store's own spreads (store.DayPriceStats, computed where
// the bars are) against analytics.Spreads over the day prices of the daily bars
// the same store returns (with carry-in), for windows and filters that select withdrawn series, carried-in bars,
// non-comparable bars and tier changes. Stores without it are skipped.
func (s *suite) dayPriceStats(t *testing.T) {
	st := s.fresh(t)
	ds, ok := st.(store.DayPriceStats)
	if !ok {
		t.Skipf("%T computes no day-price figures of its own", st)
	}
	storetest.DayPriceData(t, st)
	rs := st.(store.Rollups)
	day := func(d int) time.Time { return time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	windows := [][2]time.Time{
		{day(20), day(50)}, // withdrawn series end inside
		{day(30).Add(7 * time.Hour), day(33).Add(5 * time.Hour)}, // ends inside days; the rewritten day
		{day(40), day(41)},     // one day
		{day(-200), day(-190)}, // nothing at all
	}
	filters := []store.Filter{
		{},
		{GPU: "H100-SXM-80GB"},
		{Pricing: schemas.OnDemand},
		{Tier: schemas.TierSpecialist},
		{GPU: "A100-SXM-80GB", Region: "region-1"},
	}
	for _, w := range windows {
		for _, f := range filters {
			f.Since, f.Until = w[0], w[1]
			bars, err := rs.Bars(ctx(t), store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
			if err != nil {
				t.Fatal(err)
			}
			prices := analytics.DailyPrices(bars, f.Since, f.Until)
			want := analytics.Spreads(prices)
			got, err := ds.Spreads(ctx(t), f)
			if err != nil {
				t.Fatalf("Spreads %+v: %v", f, err)
			}
			if d := spreadsDiff(got, want); d != "" {
				t.Fatalf("Spreads %+v: %s", f, d)
			}
		}
	}
	// The checks prove something only if the data reaches every case.
	f := store.Filter{Since: day(20), Until: day(50)}
	all, err := ds.Spreads(ctx(t), f)
	if err != nil {
		t.Fatal(err)
	}
	ratios := 0
	for _, d := range all {
		if d.Ratio != nil {
			ratios++
		}
	}
	if len(all) < 100 || ratios < 50 {
		t.Fatalf("%d spread days, %d with a ratio: the data reaches too little", len(all), ratios)
	}
}

// Nearly reports whether two figures are equal to within 1e-9 relative or 1e-12
// absolute (a store's sums may add in another order, and so do a cluster's shards
// and analytics.HistoryOf from one run to the next: a flat trend may come out as 0
// or as 1e-17).
func Nearly(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) <= 1e-12
}

func nearOpt(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return Nearly(*a, *b)
}

func showOpt(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func spreadsDiff(got, want []store.SpreadDay) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d days, want %d\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.GPU != w.GPU || g.Pricing != w.Pricing || !g.Day.Equal(w.Day) || g.NHyperscaler != w.NHyperscaler ||
			g.NSpecialist != w.NSpecialist || g.NMarketplace != w.NMarketplace || g.Carried != w.Carried ||
			!g.LastSeen.Equal(w.LastSeen) {
			return fmt.Sprintf("day %d:\n got %+v\nwant %+v", i, g, w)
		}
		for _, f := range []struct {
			name string
			g, w *float64
		}{{"hyperscaler", g.Hyperscaler, w.Hyperscaler}, {"specialist", g.Specialist, w.Specialist},
			{"marketplace", g.Marketplace, w.Marketplace}, {"ratio", g.Ratio, w.Ratio}, {"premium", g.PremiumPct,
				w.PremiumPct}} {
			if !nearOpt(f.g, f.w) {
				return fmt.Sprintf(
					"%s %s %s %s: got %s, want %s",
					g.GPU,
					g.Pricing,
					g.Day.Format(time.DateOnly),
					f.name,
					showOpt(f.g),
					showOpt(f.w),
				)
			}
		}
	}
	return ""
}

package storetest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// DayPriceData writes the history the day-price checks read: a generated market
// (112 series: 7 providers × 4 GPUs × spot, spot, on demand, reserved; every 6
// hours for 50 days from 2025-02-01) in which some series are
// withdrawn (no longer collected), some stop early (only a bar before most
// windows), some change tier, some list derived, floor or GPU-only prices for a
// while or throughout, some on-demand prices step; plus the withdrawn-series
// collections of Collection (an Azure list price effective in 2024, seen daily)
// and a day of the market written again with other prices after its bars were
// built (every such bar in two versions on ClickHouse until it merges). It
// rebuilds the bars as the CLI does. SYNTHETIC, for tests only.
func DayPriceData(t *testing.T, st store.Store) {
	t.Helper()
	start := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	const steps = 200
	spec := GenSpec{Series: 112, Steps: steps, Start: start, Step: 6 * time.Hour, Seed: 11}
	shape := func(o schemas.Observation) (schemas.Observation, bool) {
		i, _ := strconv.Atoi(o.SKU[strings.LastIndexByte(o.SKU, '-')+1:])
		step := int(o.EffectiveAt.Sub(start) / spec.Step)
		switch {
		case i%5 == 0 && step >= 150: // withdrawn: no longer listed from day 37
			return o, false
		case i%17 == 6 && step >= 20: // stopped on day 5: carried in, then withdrawn
			return o, false
		}
		if i%9 == 2 && step >= 100 {
			o.Tier = schemas.TierSpecialist
		}
		if i%7 == 3 && step >= 60 && step < 120 {
			o.PriceBasis = schemas.BasisDerived
		}
		if i%11 == 4 {
			o.PriceScope = schemas.ScopeGPUOnly
		}
		if i%19 == 7 { // a GPU the catalog could not place: compared with nothing
			o.GPU = schemas.UnknownGPU
		}
		if i%13 == 5 && step%8 < 3 {
			o.PriceBasis = schemas.BasisFloor
		}
		if o.Pricing != schemas.Spot && i%3 == 0 {
			o.PriceUSDGPUHour = math.Round(o.PriceUSDGPUHour*(1+0.02*float64((step/37)%4))*1e4) / 1e4
			o.PriceUSDHour = o.PriceUSDGPUHour * 8
		}
		return o, true
	}
	var again []schemas.Observation
	if err := Generate(spec, 5_000, func(obs []schemas.Observation) error {
		keep := make([]schemas.Observation, 0, len(obs))
		for _, o := range obs {
			if o, ok := shape(o); ok {
				keep = append(keep, o)
				if twin, ok := reservedTwin(o); ok {
					keep = append(keep, twin)
				}
				if d := o.EffectiveAt.Sub(start); d >= 30*store.Daily && d < 31*store.Daily {
					o.PriceUSDGPUHour *= 1.1
					o.PriceUSDHour *= 1.1
					again = append(again, o)
				}
			}
		}
		write(t, st, keep)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for d := 0; d <= 9; d++ {
		write(t, st, Collection(d))
	}
	rollup(t, st, time.Time{}, time.Time{})
	write(t, st, again)
	rollup(t, st, again[0].EffectiveAt, again[len(again)-1].EffectiveAt.Add(time.Second))
}

// reservedTwin is a one-year reservation of every fourth on-demand series (the same
// SKU, region and zone at 62 % of the price), so that the commitment discount has
// pairs (analytics.CommitmentDiscount).
func reservedTwin(o schemas.Observation) (schemas.Observation, bool) {
	i, _ := strconv.Atoi(o.SKU[strings.LastIndexByte(o.SKU, '-')+1:])
	if o.Pricing != schemas.OnDemand || i%4 != 1 {
		return o, false
	}
	o.Pricing = schemas.Reserved1Y
	o.PriceUSDGPUHour = math.Round(o.PriceUSDGPUHour*0.62*1e4) / 1e4
	o.PriceUSDHour = o.PriceUSDGPUHour * 8
	return o, true
}

// DayPriceStats runs the check of the conformance suite's DayPriceStats on the
// stores open returns (fresh, empty, unmigrated each time), for a store that
// computes spreads and history of its own only when wrapped.
func DayPriceStats(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	s := &suite{open: open}
	s.dayPriceStats(t)
}

// dayPriceStats checks a store's own spreads and history (store.DayPriceStats,
// computed where the bars are) against analytics.Spreads and analytics.HistoryOf
// over the day prices of the daily bars the same store returns (with carry-in),
// for windows and filters that select withdrawn series, carried-in bars,
// non-comparable bars and tier changes. Stores without it are skipped.
func (s *suite) dayPriceStats(t *testing.T) {
	st := s.fresh(t)
	ds, ok := st.(store.DayPriceStats)
	if !ok {
		t.Skipf("%T computes no day-price figures of its own", st)
	}
	DayPriceData(t, st)
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
	// History: one GPU and pricing kind, every pricing kind read (the others give
	// the reserved discount), alone or with a provider, tier or region filter.
	for i, w := range windows[:2] {
		for _, gp := range [][2]string{{"H100-SXM-80GB", schemas.OnDemand}, {"H100-SXM-80GB", schemas.Spot},
			{"A100-SXM-80GB", schemas.Reserved1Y}} {
			for j, f := range []store.Filter{{}, {Tier: schemas.TierSpecialist}, {Provider: "aws", Region: "region-5"}} {
				f.GPU, f.Since, f.Until = gp[0], w[0], w[1]
				bars, err := rs.Bars(ctx(t), store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
				if err != nil {
					t.Fatal(err)
				}
				prices := analytics.DailyPrices(bars, f.Since, f.Until)
				cheapest := []int{5}
				if i == 0 && j == 0 {
					cheapest = []int{5, 0, 1000}
				}
				for _, n := range cheapest {
					want := analytics.HistoryOf(gp[0], gp[1], prices, f.Since, f.Until, n)
					got, err := ds.History(ctx(t), f, gp[0], gp[1], n)
					if err != nil {
						t.Fatalf("History %+v %s: %v", f, gp[1], err)
					}
					if d := historyDiff(got, want); d != "" {
						t.Fatalf("History %+v %s cheapest %d: %s", f, gp[1], n, d)
					}
				}
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
	h, err := ds.History(ctx(t), store.Filter{Since: day(20), Until: day(50), GPU: "H100-SXM-80GB"}, "H100-SXM-80GB", schemas.OnDemand, 5)
	if err != nil {
		t.Fatal(err)
	}
	if h.Overall.Samples < 50 || len(h.Providers) < 3 || h.Overall.TrendPer30d == nil || h.Overall.ReservedDiscountPct == nil || len(h.Cheapest) < 3 {
		t.Fatalf("history reaches too little: %+v", h)
	}
}

// nearly reports whether two figures are equal to within 1e-9 relative or 1e-12
// absolute (a store's sums may add in another order, and so does
// analytics.HistoryOf from one run to the next: a flat trend may come out as 0 or
// as 1e-17).
func nearly(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) <= 1e-12
}

func nearOpt(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return nearly(*a, *b)
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
			{"marketplace", g.Marketplace, w.Marketplace}, {"ratio", g.Ratio, w.Ratio}, {"premium", g.PremiumPct, w.PremiumPct}} {
			if !nearOpt(f.g, f.w) {
				return fmt.Sprintf("%s %s %s %s: got %s, want %s", g.GPU, g.Pricing, g.Day.Format(time.DateOnly), f.name, showOpt(f.g), showOpt(f.w))
			}
		}
	}
	return ""
}

func historyDiff(got, want store.History) string {
	if got.GPU != want.GPU || got.Pricing != want.Pricing || !got.From.Equal(want.From) || !got.To.Equal(want.To) {
		return fmt.Sprintf("report of %s %s %v–%v, want %s %s %v–%v", got.GPU, got.Pricing, got.From, got.To,
			want.GPU, want.Pricing, want.From, want.To)
	}
	if d := statsDiff(got.Overall, want.Overall); d != "" {
		return "overall: " + d
	}
	if len(got.Providers) != len(want.Providers) {
		return fmt.Sprintf("%d providers, want %d: got %+v", len(got.Providers), len(want.Providers), got.Providers)
	}
	for i := range got.Providers {
		if d := statsDiff(got.Providers[i], want.Providers[i]); d != "" {
			return "provider " + want.Providers[i].Provider + ": " + d
		}
	}
	if len(got.Daily) != len(want.Daily) {
		return fmt.Sprintf("%d daily points, want %d", len(got.Daily), len(want.Daily))
	}
	for i := range got.Daily {
		g, w := got.Daily[i], want.Daily[i]
		if !g.Day.Equal(w.Day) || g.Group != w.Group || g.Name != w.Name || g.Series != w.Series || !nearly(g.Median, w.Median) ||
			!nearly(g.P10, w.P10) || !nearly(g.P90, w.P90) || g.Min != w.Min {
			return fmt.Sprintf("daily point %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if len(got.Cheapest) != len(want.Cheapest) {
		return fmt.Sprintf("%d offers, want %d:\n got %+v\nwant %+v", len(got.Cheapest), len(want.Cheapest), got.Cheapest, want.Cheapest)
	}
	for i := range got.Cheapest {
		g, w := got.Cheapest[i], want.Cheapest[i]
		if g.Provider != w.Provider || g.SKU != w.SKU || g.Region != w.Region || g.Zone != w.Zone || g.Pricing != w.Pricing ||
			g.Tier != w.Tier || g.Price != w.Price || !g.Since.Equal(w.Since) || !g.LastSeen.Equal(w.LastSeen) {
			return fmt.Sprintf("offer %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	return ""
}

func statsDiff(g, w store.HistoryStats) string {
	if g.Provider != w.Provider || g.Series != w.Series || g.Samples != w.Samples ||
		g.SeriesEntered != w.SeriesEntered || g.SeriesLeft != w.SeriesLeft {
		return fmt.Sprintf("\n got %+v\nwant %+v", g, w)
	}
	for _, f := range []struct {
		name string
		g, w *float64
	}{{"p10", g.P10, w.P10}, {"p25", g.P25, w.P25}, {"p50", g.P50, w.P50}, {"p75", g.P75, w.P75}, {"p90", g.P90, w.P90},
		{"min", g.Min, w.Min}, {"latest", g.Latest, w.Latest}, {"latest_median", g.LatestMedian, w.LatestMedian},
		{"trend", g.TrendPer30d, w.TrendPer30d}, {"trend_pct", g.TrendPctPer30d, w.TrendPctPer30d},
		{"reserved_discount", g.ReservedDiscountPct, w.ReservedDiscountPct}} {
		if !nearOpt(f.g, f.w) {
			return fmt.Sprintf("%s: got %s, want %s", f.name, showOpt(f.g), showOpt(f.w))
		}
	}
	return ""
}

package analytics

import (
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// When a series counts as withdrawn (docs/analytics.md, "Day price").
const (
	// StaleAfter is how far a series' last sighting may lie behind the newest
	// sighting among its provider's series and the series still count as on
	// offer: the rule of `gpuprice prices` and `tokens`, read from the bars'
	// last_observed_at instead of raw rows.
	StaleAfter = 24 * time.Hour
	// Grace is how long after the UTC day of its last sighting a withdrawn
	// series' last price stays in force.
	Grace = store.Daily
)

// DayPrice is the price of one series in force on one UTC day: the close of the
// series' last daily bar starting on or before that day. A price carries forward
// until the series has a newer bar (an on-demand price published once stays in
// force), from the series' first bar, or the bar carried in from before the
// window, but not past the end of a withdrawn series (see PriceEnd).
type DayPrice struct {
	Day    time.Time
	Series string
	Bar    store.Bar // the bar the price comes from
	Price  float64
	// LastSeen is the latest LastObservedAt among the series' bars read: when a
	// collection last saw the series. Zero when unknown.
	LastSeen time.Time
}

// DailyPrices lays daily bars (sorted by series then start, as Bars with CarryIn
// returns them) on the days [from, to), day by day. A series withdrawn by its
// provider gets no price from the day PriceEnd gives on; its provider's newest
// sighting is the latest among the series of bars.
//
// Only comparable bars take part (Comparable): spreads, history, the index and
// the alerts built on day prices compare instance prices listed by their provider,
// never a derived price, a "from" floor or a GPU-only price.
func DailyPrices(bars []store.Bar, from, to time.Time) []DayPrice {
	return AllDailyPrices(ComparableBars(bars), from, to)
}

// ScopedDailyPrices is DailyPrices over the listed prices of one scope: "" or
// "instance" is DailyPrices (instance prices, the default); "gpu_only" compares
// GPU-only prices (an accelerator priced apart from its VM) with each other only.
func ScopedDailyPrices(bars []store.Bar, from, to time.Time, scope string) []DayPrice {
	if scope == "" || scope == schemas.ScopeInstance {
		return DailyPrices(bars, from, to)
	}
	var keep []store.Bar
	for _, b := range bars {
		if b.GPU != schemas.UnknownGPU && schemas.BasisOf(b.PriceBasis) == schemas.BasisListed &&
			schemas.ScopeOf(b.PriceScope) == scope {
			keep = append(keep, b)
		}
	}
	return AllDailyPrices(keep, from, to)
}

// AllDailyPrices is DailyPrices without the comparability filter: every series'
// price in force, derived prices, floors and GPU-only prices included (for `index
// --explain`, which says why those are left out).
func AllDailyPrices(bars []store.Bar, from, to time.Time) []DayPrice {
	var out []DayPrice
	eachDayPrice(bars, from, to, func(n int) { out = make([]DayPrice, 0, n) }, func(p *DayPrice) { out = append(out, *p) })
	return out
}

// eachCloseDayPrice calls yield with each day price DailyPrices(store.BarsOfCloses(
// series), from, to) returns, in its order, after size with an upper bound of their
// number, from the compact daily bars store.DayCloses reads: the comparable bars are
// kept and laid on the days as they are, and a Bar is built only for a day price
// (not for every bar read, then copied again by the filter and the split into
// series). p is valid only during the call.
func eachCloseDayPrice(series []store.SeriesCloses, from, to time.Time, size func(int), yield func(p *DayPrice)) {
	runs, of := comparableRuns(series)
	// Each run as the series of its kept bars, and its key.
	kept, keys := make([]store.SeriesCloses, len(runs)), make([]string, len(runs))
	for n, s := range of {
		kept[n] = store.SeriesCloses{Provider: s.Provider, SKU: s.SKU, Region: s.Region, Zone: s.Zone, Pricing: s.Pricing,
			Bars: runs[n]}
		keys[n] = kept[n].Bar(0).SeriesKey()
	}
	var p DayPrice
	layDays(runs, func(n int) string { return of[n].Provider },
		func(b *store.CloseBar) (time.Time, time.Time) { return b.Start, b.LastObservedAt }, from, to,
		func(days int) { size(days * len(runs)) },
		func(d time.Time, _, n, i int, seen time.Time) {
			p = DayPrice{Day: d, Series: keys[n], Bar: kept[n].Bar(i), Price: runs[n][i].Close, LastSeen: seen}
			yield(&p)
		})
}

// comparableRuns is the comparable bars of each series of compact daily bars
// (listed instance prices, as ComparableBars keeps), the series none is left of
// dropped, and of each run its series.
func comparableRuns(series []store.SeriesCloses) (runs [][]store.CloseBar, of []*store.SeriesCloses) {
	runs = make([][]store.CloseBar, 0, len(series))
	of = make([]*store.SeriesCloses, 0, len(series))
	for i := range series {
		s := &series[i]
		if bars := keep(s.Bars, func(b *store.CloseBar) bool {
			return listedInstance(b.Attrs.GPU, b.Attrs.PriceScope, b.Attrs.PriceBasis)
		}); len(bars) > 0 {
			runs, of = append(runs, bars), append(of, s)
		}
	}
	return runs, of
}

// eachDayPrice calls yield with each day price AllDailyPrices returns, in its
// order (by day, then the series in the order of bars), after size with an upper
// bound of their number. p (with its Bar) is valid only during the call.
func eachDayPrice(bars []store.Bar, from, to time.Time, size func(int), yield func(p *DayPrice)) {
	series := SplitSeries(bars)
	keys := make([]string, len(series))
	for n, s := range series {
		keys[n] = s[0].SeriesKey()
	}
	var p DayPrice
	layDays(series, func(n int) string { return series[n][0].Provider },
		func(b *store.Bar) (time.Time, time.Time) { return b.Start, b.LastObservedAt }, from, to,
		func(days int) { size(days * len(series)) },
		func(d time.Time, _, n, i int, seen time.Time) {
			b := &series[n][i]
			p = DayPrice{Day: d, Series: keys[n], Bar: *b, Price: b.Close, LastSeen: seen}
			yield(&p)
		})
}

// layDays lays series of daily bars (each by start; store.Bar or the compact
// store.CloseBar, read by times: a bar's start and last sighting) on the days
// [from, to): it calls yield(d, day, n, i, seen) for each day d (the day-th of
// the window, from 0) and each series n with a price that day, i its bar in force
// and seen the series' last sighting, by day then series, after size with the
// number of days. provider is the provider of series n. Every day-price figure is
// laid out here, whatever the form of its bars.
func layDays[B any](series [][]B, provider func(n int) string, times func(*B) (start, seen time.Time),
	from, to time.Time, size func(days int), yield func(d time.Time, day, n, i int, seen time.Time)) {
	from, to = from.UTC().Truncate(store.Daily), to.UTC()
	seen, ends := sightings(series, provider, times)
	// Day by day, the series in their order (what a stable sort by day of each
	// series' prices in turn gives, without moving the large DayPrice values).
	at := make([]int, len(series)) // per series, its bar in force; −1 before its first
	for n := range series {
		at[n] = -1
	}
	days := 0
	for d := from; d.Before(to); d = d.Add(store.Daily) {
		days++
	}
	size(days)
	for day, d := 0, from; d.Before(to); day, d = day+1, d.Add(store.Daily) {
		for n, s := range series {
			if !ends[n].IsZero() && !d.Before(ends[n]) {
				continue
			}
			i := at[n]
			for i+1 < len(s) {
				if next, _ := times(&s[i+1]); next.After(d) {
					break
				}
				i++
			}
			if i < 0 {
				continue
			}
			at[n] = i
			yield(d, day, n, i, seen[n])
		}
	}
}

// sightings gives, for each series of bars (each by start), its last sighting (the
// latest of its bars' sightings) and the first UTC day it has no price (PriceEnd
// against the newest sighting among its provider's series; zero while its price
// carries forward). Every day price and every Sighting is decided here.
func sightings[B any](series [][]B, provider func(n int) string, times func(*B) (start, seen time.Time)) (seen,
	ends []time.Time) {
	seen, ends = make([]time.Time, len(series)), make([]time.Time, len(series))
	newest := map[string]time.Time{}
	for n, s := range series {
		for i := range s {
			if _, t := times(&s[i]); t.After(seen[n]) {
				seen[n] = t
			}
		}
		if p := provider(n); seen[n].After(newest[p]) {
			newest[p] = seen[n]
		}
	}
	for n, s := range series {
		last, _ := times(&s[len(s)-1])
		ends[n] = PriceEnd(store.Bar{Start: last}, seen[n], newest[provider(n)])
	}
	return seen, ends
}

// Sighting is when collections last saw a series and, when its provider no longer
// lists it, the first UTC day it has no price: the rule of every day price (a
// series is withdrawn when its last sighting is more than StaleAfter behind the
// newest among its provider's series read; PriceEnd). A chart draws its price as
// observed up to LastSeen, carried after it, and not at all from Withdrawn on.
type Sighting struct {
	LastSeen  time.Time // zero when unknown (bars rolled up before stores kept sightings)
	Withdrawn time.Time // zero while the price carries forward
}

// Sightings gives the Sighting of each series of bars (sorted by series then start,
// as Bars with CarryIn returns them), by SeriesKey. The provider's newest sighting
// is the latest among the series of bars, as DailyPrices takes it.
func Sightings(bars []store.Bar) map[string]Sighting {
	series := SplitSeries(bars)
	seen, ends := sightings(series, func(n int) string { return series[n][0].Provider },
		func(b *store.Bar) (time.Time, time.Time) { return b.Start, b.LastObservedAt })
	out := make(map[string]Sighting, len(series))
	for n, s := range series {
		out[s[0].SeriesKey()] = Sighting{LastSeen: seen[n], Withdrawn: ends[n]}
	}
	return out
}

// PriceEnd is the first UTC day on which a series whose last bar is last, last
// seen at seen, has no price any more, given the newest sighting among its
// provider's series; the zero time when its price carries forward without end.
//
// A series is withdrawn when seen is more than StaleAfter behind newest: its
// provider was collected since and no longer listed it. Its price then stays in
// force through the day of seen and Grace after it (and at least through the day
// of its last bar), never beyond. A series within StaleAfter of newest is still
// on offer, however old its last bar (a list price published once) and however
// long ago its provider was last collected (its last known prices stay). A series
// whose sightings are unknown (bars rolled up before the stores kept them) is
// never withdrawn.
func PriceEnd(last store.Bar, seen, newest time.Time) time.Time {
	if seen.IsZero() || !seen.Before(newest.Add(-StaleAfter)) {
		return time.Time{}
	}
	end := seen.UTC().Truncate(store.Daily).Add(store.Daily + Grace)
	if b := last.Start.UTC().Truncate(store.Daily).Add(store.Daily); b.After(end) {
		end = b
	}
	return end
}

// Comparable reports whether a bar compares with the others by default: a listed
// price (not derived by a rule, not a "from" floor) for a whole instance (not a
// GPU priced apart from its VM). Bars rolled up before schema version 5 carry ""
// for both and count as listed instance prices. A GPU the catalog could not place
// (schemas.UnknownGPU: a V100 and a P100 may share it) compares with nothing: it is
// never a cheapest, a spread or in the index.
func Comparable(b store.Bar) bool {
	return listedInstance(b.GPU, b.PriceScope, b.PriceBasis)
}

func listedInstance(gpu, scope, basis string) bool {
	return gpu != schemas.UnknownGPU && schemas.BasisOf(basis) == schemas.BasisListed &&
		schemas.ScopeOf(scope) == schemas.ScopeInstance
}

// ComparableBars keeps the bars Comparable accepts, in order.
func ComparableBars(bars []store.Bar) []store.Bar {
	return keep(bars, func(b *store.Bar) bool { return listedInstance(b.GPU, b.PriceScope, b.PriceBasis) })
}

// keep returns the elements ok accepts, in order: xs itself when it accepts all.
func keep[T any](xs []T, ok func(*T) bool) []T {
	for i := range xs {
		if !ok(&xs[i]) {
			out := append(make([]T, 0, len(xs)), xs[:i]...)
			for j := i + 1; j < len(xs); j++ {
				if ok(&xs[j]) {
					out = append(out, xs[j])
				}
			}
			return out
		}
	}
	return xs
}

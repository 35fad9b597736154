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
		if schemas.BasisOf(b.PriceBasis) == schemas.BasisListed && schemas.ScopeOf(b.PriceScope) == scope {
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

// eachDayPrice calls yield with each day price AllDailyPrices returns, in its
// order (by day, then the series in the order of bars), after size with an upper
// bound of their number. p (with its Bar) is valid only during the call.
func eachDayPrice(bars []store.Bar, from, to time.Time, size func(int), yield func(p *DayPrice)) {
	from, to = from.UTC().Truncate(store.Daily), to.UTC()
	series := SplitSeries(bars)
	seen := make([]time.Time, len(series))
	newest := map[string]time.Time{}
	for i, s := range series {
		for _, b := range s {
			if b.LastObservedAt.After(seen[i]) {
				seen[i] = b.LastObservedAt
			}
		}
		if p := s[0].Provider; seen[i].After(newest[p]) {
			newest[p] = seen[i]
		}
	}
	// Day by day, the series in their order (what a stable sort by day of each
	// series' prices in turn gives, without moving the large DayPrice values).
	ends := make([]time.Time, len(series))
	at := make([]int, len(series)) // per series, its bar in force; −1 before its first
	keys := make([]string, len(series))
	for n, s := range series {
		ends[n] = PriceEnd(s[len(s)-1], seen[n], newest[s[0].Provider])
		at[n], keys[n] = -1, s[0].SeriesKey()
	}
	days := 0
	for d := from; d.Before(to); d = d.Add(store.Daily) {
		days++
	}
	size(days * len(series))
	var p DayPrice
	for d := from; d.Before(to); d = d.Add(store.Daily) {
		for n, s := range series {
			if !ends[n].IsZero() && !d.Before(ends[n]) {
				continue
			}
			i := at[n]
			for i+1 < len(s) && !s[i+1].Start.After(d) {
				i++
			}
			if i < 0 {
				continue
			}
			at[n] = i
			p = DayPrice{Day: d, Series: keys[n], Bar: s[i], Price: s[i].Close, LastSeen: seen[n]}
			yield(&p)
		}
	}
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
// for both and count as listed instance prices.
func Comparable(b store.Bar) bool {
	return schemas.BasisOf(b.PriceBasis) == schemas.BasisListed && schemas.ScopeOf(b.PriceScope) == schemas.ScopeInstance
}

// ComparableBars keeps the bars Comparable accepts, in order.
func ComparableBars(bars []store.Bar) []store.Bar {
	for i, b := range bars {
		if !Comparable(b) {
			out := append(make([]store.Bar, 0, len(bars)), bars[:i]...)
			for _, b := range bars[i+1:] {
				if Comparable(b) {
					out = append(out, b)
				}
			}
			return out
		}
	}
	return bars
}

package analytics

import (
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// DayPrice is the price of one series in force on one UTC day: the close of the
// series' last daily bar starting on or before that day. A price carries forward
// until the series has a newer bar (an on-demand price published once stays in
// force), from the series' first bar, or the bar carried in from before the
// window.
type DayPrice struct {
	Day    time.Time
	Series string
	Bar    store.Bar // the bar the price comes from
	Price  float64
}

// DailyPrices lays daily bars (sorted by series then start, as Bars with CarryIn
// returns them) on the days [from, to), day by day.
func DailyPrices(bars []store.Bar, from, to time.Time) []DayPrice {
	from, to = from.UTC().Truncate(store.Daily), to.UTC()
	var out []DayPrice
	for _, s := range SplitSeries(bars) {
		i := -1
		for d := from; d.Before(to); d = d.Add(store.Daily) {
			for i+1 < len(s) && !s[i+1].Start.After(d) {
				i++
			}
			if i < 0 {
				continue
			}
			out = append(out, DayPrice{Day: d, Series: s[i].SeriesKey(), Bar: s[i], Price: s[i].Close})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Day.Before(out[b].Day) })
	return out
}

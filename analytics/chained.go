package analytics

import (
	"math"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// ChainedVersion names the method of the matched-sample chained index; every index
// row carries it beside IndexVersion.
const ChainedVersion = "gpuprice-chained/1"

// ChainedMethod describes ChainedVersion.
const ChainedMethod = ChainedVersion +
	": matched-sample chained index per GPU × pricing × group: each day's change is the geometric mean of the price " +
	"relatives p(day)/p(day−1) over the series priced on both days (a series entering or leaving moves nothing), " +
	"chained from the first day, whose level is that day's trimmed median; a day with no matched series carries the " +
	"level"

// indexKey is one index line.
type indexKey struct{ gpu, pricing, group string }

func groupOf(p DayPrice) string {
	if p.Bar.Tier == schemas.TierHyperscaler {
		return GroupHyperscaler
	}
	return GroupOthers
}

// chained computes the chained level of every (line, day) of prices: the level and
// the number of series matched with the day before.
func chained(prices []DayPrice) map[indexKey]map[int64]struct {
	level   float64
	matched int
} {
	byLine := map[indexKey]map[int64]map[string]float64{}
	for _, p := range prices {
		k := indexKey{p.Bar.GPU, p.Bar.Pricing, groupOf(p)}
		days := byLine[k]
		if days == nil {
			days = map[int64]map[string]float64{}
			byLine[k] = days
		}
		d := p.Day.Unix()
		if days[d] == nil {
			days[d] = map[string]float64{}
		}
		days[d][p.Series] = p.Price
	}
	out := map[indexKey]map[int64]struct {
		level   float64
		matched int
	}{}
	for k, days := range byLine {
		order := make([]int64, 0, len(days))
		for d := range days {
			order = append(order, d)
		}
		sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
		line := map[int64]struct {
			level   float64
			matched int
		}{}
		var level float64
		for i, d := range order {
			today := days[d]
			if i == 0 {
				v := make([]float64, 0, len(today))
				for _, p := range today {
					v = append(v, p)
				}
				level, _ = TrimmedMedian(v)
				line[d] = struct {
					level   float64
					matched int
				}{level, 0}
				continue
			}
			prev := days[order[i-1]]
			var logSum float64
			n := 0
			for s, p := range today {
				if q, ok := prev[s]; ok && q > 0 && p > 0 {
					logSum += math.Log(p / q)
					n++
				}
			}
			if n > 0 {
				level *= math.Exp(logSum / float64(n))
			}
			line[d] = struct {
				level   float64
				matched int
			}{level, n}
		}
		out[k] = line
	}
	return out
}

// IndexMember is one series' part in an index line on one day (`index --explain`):
// a member of the trimmed median and the chained index, or left out and why.
type IndexMember struct {
	Group    string  `json:"group"`
	Series   string  `json:"series"`
	Provider string  `json:"provider"`
	Price    float64 `json:"price_usd_gpu_hour"`
	// Status is "member", or why the series is left out: "trimmed (beyond 2.5 SD)",
	// "derived", "floor", "not comparable (gpu_only)" or "stale (not on offer that
	// day)". Suspect prices are never stored: `gpuprice quarantine` lists them.
	Status string `json:"status"`
	// Matched: priced the day before too, so it moves the chained index.
	Matched bool `json:"matched"`
}

// ExplainIndexDay lists every series of bars (daily bars of one GPU and pricing
// kind, with the bar in force before the window) on day: the index members and
// the series left out, with the reason.
func ExplainIndexDay(bars []store.Bar, day time.Time) []IndexMember {
	day = day.UTC().Truncate(store.Daily)
	all := AllDailyPrices(bars, day.Add(-store.Daily), day.Add(store.Daily))
	today := map[string]DayPrice{}
	yesterday := map[string]bool{}
	for _, p := range all {
		switch {
		case p.Day.Equal(day):
			today[p.Series] = p
		case Comparable(p.Bar):
			yesterday[p.Series] = true
		}
	}
	byGroup := map[string][]float64{}
	for _, p := range today {
		if Comparable(p.Bar) {
			byGroup[groupOf(p)] = append(byGroup[groupOf(p)], p.Price)
		}
	}
	var out []IndexMember
	seen := map[string]bool{}
	for s, p := range today {
		seen[s] = true
		m := IndexMember{Group: groupOf(p), Series: s, Provider: p.Bar.Provider, Price: p.Price, Status: "member",
			Matched: yesterday[s]}
		switch {
		case schemas.BasisOf(p.Bar.PriceBasis) != schemas.BasisListed:
			m.Status, m.Matched = schemas.BasisOf(p.Bar.PriceBasis), false
		case schemas.ScopeOf(p.Bar.PriceScope) != schemas.ScopeInstance:
			m.Status, m.Matched = "not comparable ("+p.Bar.PriceScope+")", false
		default:
			v := byGroup[m.Group]
			if mean, sd := Mean(v), SampleStd(v); len(v) >= 3 && sd > 0 && math.Abs(p.Price-mean) > TrimSD*sd {
				m.Status = "trimmed (beyond 2.5 SD)"
			}
		}
		out = append(out, m)
	}
	for _, b := range bars {
		k := b.SeriesKey()
		if seen[k] {
			continue
		}
		seen[k] = true
		g := GroupOthers
		if b.Tier == schemas.TierHyperscaler {
			g = GroupHyperscaler
		}
		out = append(out, IndexMember{Group: g, Series: k, Provider: b.Provider, Price: b.Close,
			Status: "stale (not on offer that day)"})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if (a.Status == "member") != (b.Status == "member") {
			return a.Status == "member"
		}
		if a.Status != b.Status {
			return a.Status < b.Status
		}
		return a.Series < b.Series
	})
	return out
}

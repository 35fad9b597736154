package analytics

import (
	"math"
	"sort"

	"github.com/gpuprice/gpuprice/schemas"
)

// ChainedVersion names the method of the matched-sample chained index; every index
// row carries it beside IndexVersion.
const ChainedVersion = "gpuprice-chained/1"

// ChainedMethod describes ChainedVersion.
const ChainedMethod = ChainedVersion + ": matched-sample chained index per GPU × pricing × group: each day's change is the geometric mean of the price relatives p(day)/p(day−1) over the series priced on both days (a series entering or leaving moves nothing), chained from the first day, whose level is that day's trimmed median; a day with no matched series carries the level"

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

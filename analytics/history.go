package analytics

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// HistoryStats, Offer, History and HistoryDay are the negotiation report (defined
// in store, so that a store can compute it where the bars are; see HistoryFor).
type (
	HistoryStats = store.HistoryStats
	Offer        = store.Offer
	History      = store.History
	HistoryDay   = store.HistoryDay
)

// HistoryOf computes the report of one pricing kind from the day prices of one GPU
// over all pricing kinds (the other kinds give the reserved discount), each offer
// weighted once (HistoryWeighted with WeightOffer). cheapest bounds the offers
// listed.
func HistoryOf(gpu, pricing string, prices []DayPrice, from, to time.Time, cheapest int) History {
	return HistoryWeighted(gpu, pricing, prices, from, to, cheapest, WeightOffer)
}

// HistoryWeighted is HistoryOf with the cross-sections weighted as weight says
// (WeightOffer, WeightProvider): every percentile, median and minimum is of the
// market at a time (MarketMethod), per day, never of pooled series-days.
func HistoryWeighted(gpu, pricing string, prices []DayPrice, from, to time.Time, cheapest int, weight string) History {
	return historyWeighted(gpu, pricing, func(yield func(*DayPrice)) {
		for i := range prices {
			yield(&prices[i])
		}
	}, from, to, cheapest, weight)
}

// historyWeighted is HistoryWeighted of the day prices each yields, in
// DailyPrices' order (a price is read during its call only, never kept).
func historyWeighted(gpu, pricing string, each func(yield func(*DayPrice)), from, to time.Time, cheapest int,
	weight string) History {
	if weight != WeightProvider {
		weight = WeightOffer
	}
	h := History{GPU: gpu, Pricing: pricing, From: from, To: to, Weight: weight, Method: MarketMethod}
	lastDay := to.UTC().Truncate(store.Daily)
	if lastDay.Equal(to.UTC()) {
		lastDay = lastDay.Add(-store.Daily)
	}
	type sighting struct {
		carried int
		seen    time.Time
	}
	type group struct {
		vals  []float64
		byDay map[int64][]float64
		// provs is the provider of each price of byDay, in its order.
		provs map[int64][]string
		// seen is each day's sighting of the group's prices (HistoryDay.Carried).
		seen   map[int64]*sighting
		series map[string]bool
		latest map[string]float64
		// daySeries is each day's price of each series: the matched trend.
		daySeries map[int64]map[string]float64
	}
	newGroup := func() *group {
		return &group{byDay: map[int64][]float64{}, provs: map[int64][]string{}, series: map[string]bool{},
			latest:    map[string]float64{},
			daySeries: map[int64]map[string]float64{}, seen: map[int64]*sighting{}}
	}
	all := newGroup()
	per := map[string]*group{}
	tiers := map[string]*group{}
	// latest on-demand and reserved_1y offers per provider, for the discount.
	od, res := map[string][]Offer{}, map[string][]Offer{}
	var offers []Offer
	each(func(p *DayPrice) {
		if p.Day.Equal(lastDay) {
			o := Offer{Provider: p.Bar.Provider, SKU: p.Bar.SKU, Region: p.Bar.Region, Zone: p.Bar.Zone, Price: p.Price}
			switch p.Bar.Pricing {
			case schemas.OnDemand:
				od[p.Bar.Provider] = append(od[p.Bar.Provider], o)
			case schemas.Reserved1Y:
				res[p.Bar.Provider] = append(res[p.Bar.Provider], o)
			}
		}
		if p.Bar.Pricing != pricing {
			return
		}
		g := per[p.Bar.Provider]
		if g == nil {
			g = newGroup()
			per[p.Bar.Provider] = g
		}
		tg := tiers[p.Bar.Tier]
		if tg == nil {
			tg = newGroup()
			tiers[p.Bar.Tier] = tg
		}
		tg.byDay[p.Day.Unix()] = append(tg.byDay[p.Day.Unix()], p.Price)
		tg.provs[p.Day.Unix()] = append(tg.provs[p.Day.Unix()], p.Bar.Provider)
		for _, g := range []*group{all, g, tg} {
			sg := g.seen[p.Day.Unix()]
			if sg == nil {
				sg = &sighting{}
				g.seen[p.Day.Unix()] = sg
			}
			if Carried(p.Day, p.LastSeen) {
				sg.carried++
			}
			if p.LastSeen.After(sg.seen) {
				sg.seen = p.LastSeen
			}
		}
		for _, g := range []*group{all, g} {
			g.vals = append(g.vals, p.Price)
			g.byDay[p.Day.Unix()] = append(g.byDay[p.Day.Unix()], p.Price)
			g.provs[p.Day.Unix()] = append(g.provs[p.Day.Unix()], p.Bar.Provider)
			g.series[p.Series] = true
			if g.daySeries[p.Day.Unix()] == nil {
				g.daySeries[p.Day.Unix()] = map[string]float64{}
			}
			g.daySeries[p.Day.Unix()][p.Series] = p.Price
			if p.Day.Equal(lastDay) {
				g.latest[p.Series] = p.Price
			}
		}
		if p.Day.Equal(lastDay) {
			b := p.Bar
			offers = append(offers, Offer{Provider: b.Provider, SKU: b.SKU, Region: b.Region, Zone: b.Zone,
				Pricing: b.Pricing, Tier: b.Tier, Price: p.Price, Since: b.Start, LastSeen: p.LastSeen})
		}
	})
	stats := func(name string, g *group, odv, resv []Offer) HistoryStats {
		s := HistoryStats{Provider: name, Series: len(g.series), Samples: len(g.vals)}
		// Days in order: the same answer to the last bit every time (a map's order
		// would move the sums' rounding).
		days := make([]int64, 0, len(g.byDay))
		for d := range g.byDay {
			days = append(days, d)
		}
		slices.Sort(days)
		s.Days = len(days)
		// Each day's cross-section; the window's percentile is the median of the
		// days' (MarketMethod).
		qs := []float64{.10, .25, .50, .75, .90}
		perQ := make([][]float64, len(qs))
		var ys []float64
		for _, d := range days {
			cs := CrossSection(g.byDay[d], g.provs[d], weight)
			for i, q := range qs {
				perQ[i] = append(perQ[i], percentileSorted(cs, q))
			}
			ys = append(ys, percentileSorted(cs, .5))
			// The lowest offer of any day, whatever the weighting (as Latest is).
			if lo := slices.Min(g.byDay[d]); s.Min == nil || lo < *s.Min {
				s.Min = Opt(lo)
			}
		}
		win := func(i int) *float64 {
			if len(perQ[i]) == 0 {
				return nil
			}
			return Opt(Median(perQ[i]))
		}
		s.P10, s.P25, s.P50, s.P75, s.P90 = win(0), win(1), win(2), win(3), win(4)
		keys := make([]string, 0, len(g.latest))
		for k := range g.latest {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var latest []float64
		var latestProvs []string
		for _, k := range keys {
			latest, latestProvs = append(latest, g.latest[k]), append(latestProvs, providerOf(k))
		}
		if cs := CrossSection(latest, latestProvs, weight); len(cs) > 0 {
			s.Latest, s.LatestMedian = Opt(cs[0]), Opt(percentileSorted(cs, .5))
			if weight == WeightProvider {
				s.Latest = Opt(slices.Min(latest)) // the lowest offer, not a provider's median
			}
		}
		s.TrendPer30d, s.TrendPctPer30d, s.SeriesEntered, s.SeriesLeft = MatchedTrend(days, g.daySeries, Mean(ys))
		s.FirstDayOffers, s.LastDayOffers, s.MatchedOffers, s.MatchedP50, s.MatchedLatestMedian = MatchedLevel(days,
			g.daySeries, weight)
		if d := CommitmentDiscount(odv, resv); len(d) > 0 {
			s.ReservedDiscountPct = Opt(Median(d))
		}
		return s
	}
	// Overall, over every pair (CommitmentDiscount pairs within a provider).
	var allOD, allRes []Offer
	for p, v := range od {
		allOD, allRes = append(allOD, v...), append(allRes, res[p]...)
	}
	h.Overall = stats("*", all, allOD, allRes)
	var names []string
	for n := range per {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h.Providers = append(h.Providers, stats(n, per[n], od[n], res[n]))
	}
	daily := func(kind, name string, g *group) {
		days := make([]int64, 0, len(g.byDay))
		for d := range g.byDay {
			days = append(days, d)
		}
		slices.Sort(days)
		for _, d := range days {
			v := CrossSection(g.byDay[d], g.provs[d], weight)
			sg := g.seen[d]
			h.Daily = append(h.Daily, HistoryDay{Day: time.Unix(d, 0).UTC(), Group: kind, Name: name, Series: len(g.byDay[d]),
				Median: percentileSorted(v, .5), P10: percentileSorted(v, .1), P90: percentileSorted(v, .9), Min: v[0],
				Carried: sg.carried, LastSeen: sg.seen.UTC()})
		}
	}
	daily("all", "*", all)
	for _, n := range names {
		daily("provider", n, per[n])
	}
	var tierNames []string
	for n := range tiers {
		tierNames = append(tierNames, n)
	}
	sort.Strings(tierNames)
	for _, n := range tierNames {
		daily("tier", n, tiers[n])
	}
	sort.SliceStable(offers, func(i, j int) bool {
		if offers[i].Price != offers[j].Price {
			return offers[i].Price < offers[j].Price
		}
		return offers[i].Provider+offers[i].SKU+offers[i].Region+offers[i].Zone < offers[j].Provider+offers[j].SKU+
			offers[j].Region+offers[j].Zone
	})
	if cheapest >= 0 && len(offers) > cheapest {
		offers = offers[:cheapest]
	}
	h.Cheapest = offers
	return h
}

// MatchedTrend is the change of the same series between days, never the change of
// the sample: for each pair of consecutive days (Unix seconds, ascending) the mean
// log change of the series priced on both, chained over the days (the chained
// index's method). The percent per 30 days compounds that rate, (exp(L / days × 30)
// − 1) × 100, and the $/GPU-hour per 30 days is that percent of level (the mean
// daily median). entered and left count the series on the last day that were not on
// the first, and the other way round: composition, reported beside the trend. The
// trend is nil with fewer than two days or no series priced on two consecutive days.
func MatchedTrend(days []int64, daySeries map[int64]map[string]float64, level float64) (
	per30, pct30 *float64, entered, left int) {
	if len(days) == 0 {
		return nil, nil, 0, 0
	}
	first, last := daySeries[days[0]], daySeries[days[len(days)-1]]
	for k := range last {
		if _, ok := first[k]; !ok {
			entered++
		}
	}
	for k := range first {
		if _, ok := last[k]; !ok {
			left++
		}
	}
	var logSum float64
	matched := false
	for i := 1; i < len(days); i++ {
		prev, cur := daySeries[days[i-1]], daySeries[days[i]]
		// Sorted keys: the same sum to the last bit every time.
		var keys []string
		for k := range cur {
			if p, ok := prev[k]; ok && p > 0 && cur[k] > 0 {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			continue
		}
		sort.Strings(keys)
		var l float64
		for _, k := range keys {
			l += math.Log(cur[k] / prev[k])
		}
		logSum += l / float64(len(keys))
		matched = true
	}
	span := float64(days[len(days)-1]-days[0]) / 86400
	if !matched || span <= 0 {
		return nil, nil, entered, left
	}
	pct := (math.Exp(logSum/span*30) - 1) * 100
	return Opt(pct / 100 * level), Opt(pct), entered, left
}

// MatchedLevel is the window's market level like for like: of the series priced on
// both the first and the last of days (Unix seconds, ascending; daySeries each
// day's price of each series by key, provider|sku|region|zone|pricing), each day's
// median of those of them in force that day (CrossSection as weight says), and the
// median over the days; latest is their median on the last day. first and last
// count the series priced on the first and the last day, matched those on both.
// The levels are nil without matched series. Set beside the whole market's window
// p50 and today's median, it tells composition (offers entering, leaving) from price.
func MatchedLevel(days []int64, daySeries map[int64]map[string]float64, weight string) (first, last, matched int, p50,
	latest *float64) {
	if len(days) == 0 {
		return 0, 0, 0, nil, nil
	}
	a, b := daySeries[days[0]], daySeries[days[len(days)-1]]
	var keys []string
	for k := range b {
		if _, ok := a[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	first, last, matched = len(a), len(b), len(keys)
	if matched == 0 {
		return first, last, 0, nil, nil
	}
	var meds []float64
	for _, d := range days {
		var prices []float64
		var provs []string
		for _, k := range keys {
			if p, ok := daySeries[d][k]; ok {
				prices, provs = append(prices, p), append(provs, providerOf(k))
			}
		}
		if len(prices) == 0 {
			continue
		}
		m := percentileSorted(CrossSection(prices, provs, weight), .5)
		meds = append(meds, m)
		if d == days[len(days)-1] {
			latest = Opt(m)
		}
	}
	return first, last, matched, Opt(Median(meds)), latest
}

package analytics

import (
	"slices"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// HistoryStats is what a buyer brings to a negotiation, for one provider or for all
// ("*"), over the day prices of one GPU and pricing kind in a window.
type HistoryStats struct {
	Provider string `json:"provider"`
	Series   int    `json:"series"`
	Samples  int    `json:"samples"` // series-days
	// Percentiles (type 7) and minimum of the series-day prices. Every figure of
	// HistoryStats is nil when it is undefined (no samples; a trend needs two days;
	// a discount needs both prices).
	P10 *float64 `json:"p10"`
	P25 *float64 `json:"p25"`
	P50 *float64 `json:"p50"`
	P75 *float64 `json:"p75"`
	P90 *float64 `json:"p90"`
	Min *float64 `json:"min"`
	// Latest is the lowest price in force on the window's last day among the
	// series; LatestMedian their median.
	Latest       *float64 `json:"latest"`
	LatestMedian *float64 `json:"latest_median"`
	// TrendPer30d is the least-squares slope of the daily median price against time,
	// in $/GPU-hour per 30 days, and TrendPctPer30d that slope over the mean of the
	// daily medians, in percent.
	TrendPer30d    *float64 `json:"trend_per_30d"`
	TrendPctPer30d *float64 `json:"trend_pct_per_30d"`
	// ReservedDiscountPct is 1 − median(latest reserved_1y) / median(latest
	// on_demand) of the same GPU at the same providers, in percent; nil when either
	// is missing.
	ReservedDiscountPct *float64 `json:"reserved_discount_pct"`
}

// Offer is one series' price in force on the window's last day.
type Offer struct {
	Provider string    `json:"provider"`
	SKU      string    `json:"sku"`
	Region   string    `json:"region"`
	Zone     string    `json:"zone"`
	Pricing  string    `json:"pricing"`
	Tier     string    `json:"tier"`
	Price    float64   `json:"price_usd_gpu_hour"`
	Since    time.Time `json:"since"` // start of the bar the price comes from
	// LastSeen is when a collection last saw the offer (zero when unknown).
	LastSeen time.Time `json:"last_seen"`
}

// History is the negotiation report.
type History struct {
	GPU       string         `json:"gpu"`
	Pricing   string         `json:"pricing"`
	From      time.Time      `json:"from"`
	To        time.Time      `json:"to"`
	Overall   HistoryStats   `json:"overall"`
	Providers []HistoryStats `json:"providers"`
	Cheapest  []Offer        `json:"cheapest"`
	// Daily is the price of each day of the window: of all series (Group "all"),
	// of each provider's and of each tier's, for charts of the market over time.
	Daily []HistoryDay `json:"daily"`
}

// HistoryDay is one day's prices of one group of series: their median, the
// p10 and p90 (type 7) and the lowest, over the series priced that day.
type HistoryDay struct {
	Day    time.Time `json:"day"`
	Group  string    `json:"group"` // all, provider or tier
	Name   string    `json:"name"`  // "*", the provider's or the tier's name
	Series int       `json:"series"`
	Median float64   `json:"median"`
	P10    float64   `json:"p10"`
	P90    float64   `json:"p90"`
	Min    float64   `json:"min"`
}

// HistoryOf computes the report of one pricing kind from the day prices of one GPU
// over all pricing kinds (the other kinds give the reserved discount). cheapest
// bounds the offers listed.
func HistoryOf(gpu, pricing string, prices []DayPrice, from, to time.Time, cheapest int) History {
	h := History{GPU: gpu, Pricing: pricing, From: from, To: to}
	lastDay := to.UTC().Truncate(store.Daily)
	if lastDay.Equal(to.UTC()) {
		lastDay = lastDay.Add(-store.Daily)
	}
	type group struct {
		vals   []float64
		byDay  map[int64][]float64
		series map[string]bool
		latest map[string]float64
	}
	newGroup := func() *group {
		return &group{byDay: map[int64][]float64{}, series: map[string]bool{}, latest: map[string]float64{}}
	}
	all := newGroup()
	per := map[string]*group{}
	tiers := map[string]*group{}
	// latest on-demand and reserved_1y prices per provider, for the discount.
	od, res := map[string][]float64{}, map[string][]float64{}
	var offers []Offer
	for _, p := range prices {
		if p.Day.Equal(lastDay) {
			switch p.Bar.Pricing {
			case schemas.OnDemand:
				od[p.Bar.Provider] = append(od[p.Bar.Provider], p.Price)
			case schemas.Reserved1Y:
				res[p.Bar.Provider] = append(res[p.Bar.Provider], p.Price)
			}
		}
		if p.Bar.Pricing != pricing {
			continue
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
		for _, g := range []*group{all, g} {
			g.vals = append(g.vals, p.Price)
			g.byDay[p.Day.Unix()] = append(g.byDay[p.Day.Unix()], p.Price)
			g.series[p.Series] = true
			if p.Day.Equal(lastDay) {
				g.latest[p.Series] = p.Price
			}
		}
		if p.Day.Equal(lastDay) {
			b := p.Bar
			offers = append(offers, Offer{Provider: b.Provider, SKU: b.SKU, Region: b.Region, Zone: b.Zone,
				Pricing: b.Pricing, Tier: b.Tier, Price: p.Price, Since: b.Start, LastSeen: p.LastSeen})
		}
	}
	stats := func(name string, g *group, odv, resv []float64) HistoryStats {
		s := HistoryStats{Provider: name, Series: len(g.series), Samples: len(g.vals)}
		sorted := append([]float64(nil), g.vals...)
		sort.Float64s(sorted)
		s.P10, s.P25, s.P50 = Opt(percentileSorted(sorted, .10)), Opt(percentileSorted(sorted, .25)), Opt(percentileSorted(sorted, .50))
		s.P75, s.P90 = Opt(percentileSorted(sorted, .75)), Opt(percentileSorted(sorted, .90))
		if len(sorted) > 0 {
			s.Min = Opt(sorted[0])
		}
		var latest []float64
		for _, v := range g.latest {
			latest = append(latest, v)
		}
		sort.Float64s(latest)
		if len(latest) > 0 {
			s.Latest = Opt(latest[0])
		}
		s.LatestMedian = Opt(Median(latest))
		// Days in order: the same answer to the last bit every time (a map's order
		// would move the sums' rounding).
		days := make([]int64, 0, len(g.byDay))
		for d := range g.byDay {
			days = append(days, d)
		}
		slices.Sort(days)
		var xs, ys []float64
		for _, d := range days {
			xs = append(xs, float64(d)/86400)
			ys = append(ys, Median(g.byDay[d]))
		}
		slope := OLSSlope(xs, ys)
		s.TrendPer30d = Opt(slope * 30)
		s.TrendPctPer30d = Opt(slope * 30 / Mean(ys) * 100)
		if m, r := Median(odv), Median(resv); m > 0 && r > 0 {
			s.ReservedDiscountPct = Opt((1 - r/m) * 100)
		}
		return s
	}
	// Overall, the providers that publish both: a provider without reserved prices
	// would make the discount one provider's reserved price against another's
	// on-demand price.
	var allOD, allRes []float64
	for p, v := range od {
		if len(res[p]) > 0 {
			allOD, allRes = append(allOD, v...), append(allRes, res[p]...)
		}
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
			v := append([]float64(nil), g.byDay[d]...)
			sort.Float64s(v)
			h.Daily = append(h.Daily, HistoryDay{Day: time.Unix(d, 0).UTC(), Group: kind, Name: name, Series: len(v),
				Median: percentileSorted(v, .5), P10: percentileSorted(v, .1), P90: percentileSorted(v, .9), Min: v[0]})
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
		return offers[i].Provider+offers[i].SKU+offers[i].Region+offers[i].Zone < offers[j].Provider+offers[j].SKU+offers[j].Region+offers[j].Zone
	})
	if cheapest >= 0 && len(offers) > cheapest {
		offers = offers[:cheapest]
	}
	h.Cheapest = offers
	return h
}

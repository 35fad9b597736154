package analytics

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// SeriesVolatility is the volatility of one series over a window, from its bars
// (defined in store, so that a store can compute it where the data is; see
// VolatilitiesOf).
type SeriesVolatility = store.SeriesVolatility

// SeriesVolatilityOf computes the volatility of one series from its bars of width
// w, sorted by start (as store.Rollups.Bars returns them). end is the window's end
// (exclusive); below > 0 sets the ShareBelow threshold.
func SeriesVolatilityOf(bars []store.Bar, w time.Duration, end time.Time, below float64) SeriesVolatility {
	if len(bars) == 0 {
		return SeriesVolatility{}
	}
	b0 := bars[len(bars)-1]
	v := SeriesVolatility{Provider: b0.Provider, SKU: b0.SKU, Region: b0.Region, Zone: b0.Zone,
		Pricing: b0.Pricing, GPU: b0.GPU, Tier: b0.Tier, Bars: len(bars)}
	closes := make([]float64, len(bars))
	var rets []float64
	hi, lo := math.Inf(-1), math.Inf(1)
	peak := math.Inf(-1)
	for i, b := range bars {
		closes[i] = b.Close
		hi, lo = math.Max(hi, b.High), math.Min(lo, b.Low)
		if i > 0 {
			if b.Close > 0 && bars[i-1].Close > 0 {
				rets = append(rets, math.Log(b.Close/bars[i-1].Close))
			}
			if b.Close != bars[i-1].Close {
				v.Changes++
			}
		}
		peak = math.Max(peak, b.Close)
		if peak > 0 {
			v.MaxDrawdown = math.Max(v.MaxDrawdown, 1-b.Close/peak)
		}
	}
	v.Returns = len(rets)
	v.StdLogReturn = finite(SampleStd(rets))
	v.Annualised = v.StdLogReturn * math.Sqrt(float64(365*24*time.Hour)/float64(w))
	v.Mean = Mean(closes)
	v.CV = finite(SampleStd(closes) / v.Mean)
	if lo > 0 {
		v.Range = hi/lo - 1
	}
	v.Min, v.Max, v.Close = lo, hi, b0.Close
	if below > 0 {
		v.ShareBelow = Opt(shareBelow(bars, w, end, below))
	}
	return v
}

// shareBelow steps from the first bar's start to end by w, carrying the last
// close forward, and returns the share of steps below the threshold.
func shareBelow(bars []store.Bar, w time.Duration, end time.Time, below float64) float64 {
	var steps, under int
	i := 0
	for t := bars[0].Start; t.Before(end); t = t.Add(w) {
		for i+1 < len(bars) && !bars[i+1].Start.After(t) {
			i++
		}
		steps++
		if bars[i].Close < below {
			under++
		}
	}
	if steps == 0 {
		return 0
	}
	return float64(under) / float64(steps)
}

// SplitSeries splits bars sorted by series (as the stores return them) into one
// slice per series.
func SplitSeries(bars []store.Bar) [][]store.Bar {
	var out [][]store.Bar
	for i := 0; i < len(bars); {
		j := i + 1
		for j < len(bars) && sameSeries(&bars[j], &bars[i]) {
			j++
		}
		out = append(out, bars[i:j])
		i = j
	}
	return out
}

// sameSeries reports whether two bars are of one series, as equal SeriesKeys
// would, without building the keys.
func sameSeries(a, b *store.Bar) bool {
	return a.Provider == b.Provider && a.SKU == b.SKU && a.Region == b.Region && a.Zone == b.Zone &&
		a.Pricing == b.Pricing
}

// VolatilitiesOf returns the volatility of every series among the bars of width
// q.Width that q selects (q.CarryIn is ignored), ordered by series, as
// Volatilities computes it: on the store when it can (store.VolatilityStats: the
// per-series figures are computed where the bars are and only they are read), else
// from the bars read.
func VolatilitiesOf(ctx context.Context, r store.Rollups, q store.BarQuery, end time.Time,
	below float64) ([]SeriesVolatility, error) {
	q.CarryIn = false
	if vs, ok := r.(store.VolatilityStats); ok {
		return vs.Volatilities(ctx, q, end, below)
	}
	bars, err := r.Bars(ctx, q)
	if err != nil {
		return nil, err
	}
	return Volatilities(bars, q.Width, end, below), nil
}

// Volatilities computes SeriesVolatilityOf for every series among bars.
func Volatilities(bars []store.Bar, w time.Duration, end time.Time, below float64) []SeriesVolatility {
	var out []SeriesVolatility
	for _, s := range SplitSeries(bars) {
		out = append(out, SeriesVolatilityOf(s, w, end, below))
	}
	return out
}

// GroupVolatility summarises the series of one group (e.g. a GPU × provider ×
// pricing kind, or one AWS zone): the median of each figure over its series, the
// sum of their changes, and how many series it holds.
type GroupVolatility struct {
	GPU          string   `json:"gpu"`
	Provider     string   `json:"provider"`
	Pricing      string   `json:"pricing"`
	Region       string   `json:"region,omitempty"`
	Zone         string   `json:"zone,omitempty"`
	Series       int      `json:"series"`
	StdLogReturn float64  `json:"std_log_return"`
	Annualised   float64  `json:"annualised"`
	CV           float64  `json:"cv"`
	Range        float64  `json:"range"`
	MaxDrawdown  float64  `json:"max_drawdown"`
	Changes      int      `json:"changes"`
	ShareBelow   *float64 `json:"share_below"` // nil (null) without a threshold
	MedianClose  float64  `json:"median_close"`
	// undefined marks the figures none of the group's series has (too few bars):
	// null in JSON, 0 in the fields above (see volatility_json.go).
	undefined undefinedFigures
}

// Grouping names how Group aggregates series.
type Grouping string

// Groupings.
const (
	BySeries   Grouping = "series"   // no aggregation
	ByOffering Grouping = "offering" // GPU × provider × pricing kind
	ByZone     Grouping = "zone"     // GPU × provider × pricing × region × zone
)

// Group aggregates series volatilities by g (ByOffering or ByZone), sorted by GPU,
// provider, pricing, region, zone. A figure a series lacks (too few bars: see
// store.SeriesVolatility's StdDefined, CVDefined, …) takes no part in that
// median; a figure no series of the group has is undefined (JSON null).
func Group(vs []SeriesVolatility, g Grouping) []GroupVolatility {
	type acc struct {
		gv                                  GroupVolatility
		std, ann, cv, rng, dd, below, close []float64
	}
	groups := map[string]*acc{}
	var order []string
	for _, v := range vs {
		gv := GroupVolatility{GPU: v.GPU, Provider: v.Provider, Pricing: v.Pricing}
		if g == ByZone {
			gv.Region, gv.Zone = v.Region, v.Zone
		}
		k := gv.GPU + "|" + gv.Provider + "|" + gv.Pricing + "|" + gv.Region + "|" + gv.Zone
		a, ok := groups[k]
		if !ok {
			a = &acc{gv: gv}
			groups[k] = a
			order = append(order, k)
		}
		a.gv.Series++
		a.gv.Changes += v.Changes
		// A figure a series lacks (too few bars) takes no part in its median.
		if v.StdDefined() {
			a.std = append(a.std, v.StdLogReturn)
			a.ann = append(a.ann, v.Annualised)
		}
		if v.CVDefined() {
			a.cv = append(a.cv, v.CV)
		}
		if v.RangeDefined() {
			a.rng = append(a.rng, v.Range)
		}
		if v.DrawdownDefined() {
			a.dd = append(a.dd, v.MaxDrawdown)
		}
		a.close = append(a.close, v.Close)
		if v.ShareBelow != nil {
			a.below = append(a.below, *v.ShareBelow)
		}
	}
	sort.Strings(order)
	out := make([]GroupVolatility, 0, len(order))
	for _, k := range order {
		a := groups[k]
		a.gv.StdLogReturn, a.gv.Annualised = finite(Median(a.std)), finite(Median(a.ann))
		a.gv.CV, a.gv.Range, a.gv.MaxDrawdown = finite(Median(a.cv)), finite(Median(a.rng)), finite(Median(a.dd))
		a.gv.MedianClose = finite(Median(a.close))
		a.gv.undefined = undefinedIf(len(a.std) == 0, undefStd) | undefinedIf(len(a.cv) == 0, undefCV) |
			undefinedIf(len(a.rng) == 0, undefRange) | undefinedIf(len(a.dd) == 0, undefDrawdown)
		if len(a.below) > 0 {
			a.gv.ShareBelow = Opt(Median(a.below))
		}
		out = append(out, a.gv)
	}
	return out
}

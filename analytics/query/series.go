package query

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// SeriesQuery is `gpuprice series` and GET /api/v1/series: one series (provider,
// sku, region, zone, pricing kind) over a window.
type SeriesQuery struct {
	Provider, SKU, Region, Zone, Pricing string
	Since                                time.Duration
	At                                   time.Time
	Bar                                  time.Duration
	Limit                                int
	// Weight is how each day's market band counts its offers: "" (each offer
	// once, the default) or analytics.WeightProvider.
	Weight string
}

// ParseSeries reads a SeriesQuery's parameters.
func ParseSeries(v url.Values, caps Caps) (SeriesQuery, error) {
	p := newParams(v, caps)
	var q SeriesQuery
	q.Provider, q.SKU, q.Region, q.Zone, q.Pricing = p.str("provider"), p.str("sku"), p.str("region"), p.str("zone"),
		p.str("pricing")
	for _, need := range []struct{ name, v string }{{"provider", q.Provider}, {"sku", q.SKU}, {"pricing", q.Pricing}} {
		if need.v == "" && p.err == nil {
			p.fail(need.name, "is required: a series is provider, sku, region, zone and pricing (see prices)")
		}
	}
	q.Since = p.span("since", "30d")
	q.At = p.at("at")
	q.Bar = barWidth(p, "bar")
	q.Limit = p.limit("limit")
	q.Weight = weightParam(p)
	return q, p.done("format")
}

// Values are the query's parameters.
func (q SeriesQuery) Values() url.Values {
	v := vals("provider", q.Provider, "sku", q.SKU, "region", q.Region, "zone", q.Zone, "pricing", q.Pricing,
		"since", FormatSpan(q.Since), "at", q.At.UTC().Format(time.RFC3339), "bar", barName(q.Bar))
	setInt(v, "limit", q.Limit)
	setWeight(v, q.Weight)
	return v
}

// Series is one series over a window: its observations (collected and imported)
// and its bars of one width.
type Series struct {
	Provider     string                `json:"provider"`
	SKU          string                `json:"sku"`
	Region       string                `json:"region"`
	Zone         string                `json:"zone"`
	Pricing      string                `json:"pricing"`
	GPU          string                `json:"gpu"`
	Tier         string                `json:"tier"`
	From         time.Time             `json:"from"`
	To           time.Time             `json:"to"`
	Bar          string                `json:"bar"`
	Observations []schemas.Observation `json:"observations"`
	Bars         []store.Bar           `json:"bars"`
	// CarriedIn is the series' last bar before the window, whose close was the
	// price in force when the window opened (a price that has not changed since
	// has no bar in the window); null when the series has none.
	CarriedIn *store.Bar `json:"carried_in"`
	Truncated bool       `json:"truncated"` // observations beyond the limit were left out (the oldest are kept)
	// Band is the market around the series, day by day: the p10, p50 and p90 of
	// each day's cross-section of this GPU and pricing kind (listed instance prices
	// in force, each offer once or each provider once as BandWeight says: the
	// market at a time of `history`), for each day of the window with one.
	Band       []BandDay `json:"band"`
	BandWeight string    `json:"band_weight"`
	// LastSeen is when a collection last saw the series, up to the window's end
	// (null when unknown): after it the series' price is carried, not observed, and
	// a chart draws it dashed, "last seen …". Withdrawn is the first UTC day the
	// series has no price because its provider was collected since and no longer
	// listed it (null while it is on offer): its line stops there. Both follow the
	// rule of every day price (analytics.Sightings, PriceEnd), over the provider's
	// series of this region and pricing kind.
	LastSeen  *time.Time `json:"last_seen"`
	Withdrawn *time.Time `json:"withdrawn"`
	// Newest is the series' newest stored observation when the window holds no bar
	// (null when it has bars, or when the store holds no such series).
	Newest *time.Time `json:"newest,omitempty"`
}

// emptyNote says why a window without bars is empty and what to ask instead;
// others is how many series the provider has of this pricing kind (and region).
func (s Series) emptyNote(others int) string {
	span := "from " + s.From.UTC().Format(time.RFC3339) + " to " + s.To.UTC().Format(time.RFC3339)
	switch {
	case len(s.Observations) > 0:
		return fmt.Sprintf("no bars %s but %d observations: run `gpuprice rollup`", span, len(s.Observations))
	case s.Newest == nil:
		return fmt.Sprintf("the store holds no series provider %s, sku %s, region %q, zone %q, pricing %s "+
			"(%d series of the provider and pricing kind: `gpuprice prices --provider %s --all-series` lists them)",
			s.Provider, s.SKU, s.Region, s.Zone, s.Pricing, others, s.Provider)
	case s.Newest.Before(s.From):
		inForce := ""
		if s.CarriedIn != nil {
			inForce = fmt.Sprintf(" (its close %s is still the price in force)", f4(s.CarriedIn.Close))
		}
		return fmt.Sprintf("no bars %s: the series' newest observation is %s%s; try --at %s", span,
			s.Newest.Format(time.RFC3339), inForce, s.Newest.Add(24*time.Hour).Format(time.DateOnly))
	default:
		return fmt.Sprintf("no bars %s: the series has observations up to %s, none in this window; "+
			"try a longer --since or a later --at", span, s.Newest.Format(time.RFC3339))
	}
}

// BandDay is one day of a series' market band.
type BandDay struct {
	Day    time.Time `json:"day"`
	P10    float64   `json:"p10"`
	P50    float64   `json:"p50"`
	P90    float64   `json:"p90"`
	Series int       `json:"series"` // day prices in force (offers) the percentiles are of
}

// band computes the market band of gpu and pricing over the days of the window
// ending at, from each day's cross-section of every provider's day prices weighted
// as weight says (analytics.CrossSection).
func (r *Reader) band(ctx context.Context, gpu, pricing string, span time.Duration, at time.Time,
	weight string) ([]BandDay, error) {
	if _, err := r.rollups(); gpu == "" || err != nil {
		return []BandDay{}, nil
	}
	prices, _, _, err := r.dayPrices(ctx, Selection{Filter: store.Filter{GPU: gpu, Pricing: pricing}}, span, at)
	if err != nil {
		return nil, err
	}
	byDay, provs := map[time.Time][]float64{}, map[time.Time][]string{}
	var days []time.Time
	for _, p := range prices {
		d := p.Day.UTC()
		if _, ok := byDay[d]; !ok {
			days = append(days, d)
		}
		byDay[d], provs[d] = append(byDay[d], p.Price), append(provs[d], p.Bar.Provider)
	}
	slices.SortFunc(days, func(a, b time.Time) int { return a.Compare(b) })
	out := make([]BandDay, 0, len(days))
	for _, d := range days {
		xs := analytics.CrossSection(byDay[d], provs[d], weight)
		out = append(out, BandDay{Day: d, P10: analytics.Percentile(xs, .10), P50: analytics.Percentile(xs, .50),
			P90: analytics.Percentile(xs, .90), Series: len(byDay[d])})
	}
	return out, nil
}

// Series reads one series over the window ending At.
func (r *Reader) Series(ctx context.Context, q SeriesQuery) (Result[Series], error) {
	var res Result[Series]
	sel, err := r.Resolve(ctx, Filter{Provider: q.Provider, Pricing: q.Pricing})
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	if sel.Pricing == "" {
		return res, &ParamError{Param: "pricing", Msg: "needs one pricing kind", Suggestions: sel.pricing}
	}
	s := Series{Provider: sel.Provider, SKU: q.SKU, Region: q.Region, Zone: q.Zone, Pricing: sel.Pricing,
		From: q.At.Add(-q.Since), To: q.At, Bar: barName(q.Bar)}
	f := store.Filter{Provider: s.Provider, Region: s.Region, Pricing: s.Pricing, Since: s.From, Until: s.To}
	obs, err := r.Store.Observations(ctx, f)
	if err != nil {
		return res, err
	}
	for _, o := range obs {
		if o.SKU == s.SKU && o.Zone == s.Zone && o.Region == s.Region {
			if q.Limit > 0 && len(s.Observations) == q.Limit {
				s.Truncated = true
				break
			}
			s.Observations = append(s.Observations, o)
			s.GPU, s.Tier = o.GPU, o.Tier
		}
	}
	if ro, err := r.rollups(); err == nil {
		bars, err := ro.Bars(ctx, store.BarQuery{Filter: f, Width: q.Bar, CarryIn: true})
		if err != nil {
			return res, err
		}
		var key string
		for _, b := range bars {
			if b.SKU == s.SKU && b.Zone == s.Zone && b.Region == s.Region {
				key = b.SeriesKey()
				if b.Start.Before(s.From) {
					s.CarriedIn = &b
				} else {
					s.Bars = append(s.Bars, b)
				}
				s.GPU, s.Tier = b.GPU, b.Tier
			}
		}
		if sg, ok := analytics.Sightings(bars)[key]; ok && key != "" {
			s.LastSeen, s.Withdrawn = optTime(sg.LastSeen), optTime(sg.Withdrawn)
		}
	}
	s.Observations, s.Bars = nonNil(s.Observations), nonNil(s.Bars)
	if len(s.Bars) == 0 {
		latest, err := r.Store.Latest(ctx, store.Filter{Provider: s.Provider, Region: s.Region, Pricing: s.Pricing})
		if err != nil {
			return res, err
		}
		for _, o := range latest {
			if o.SKU == s.SKU && o.Zone == s.Zone && o.Region == s.Region {
				at := o.EffectiveAt.UTC()
				s.Newest = &at
			}
		}
		res.Empty = s.emptyNote(len(latest))
	}
	s.BandWeight = analytics.WeightOffer
	if q.Weight == analytics.WeightProvider {
		s.BandWeight = q.Weight
	}
	if s.Band, err = r.band(ctx, s.GPU, s.Pricing, q.Since, q.At, s.BandWeight); err != nil {
		return res, err
	}
	res.Data = s
	// The series' own rows, and the market band's (every provider's series of the GPU).
	if res.Recorded, err = r.recorded(ctx, f); err != nil || s.GPU == "" {
		return res, err
	}
	band := store.Filter{GPU: s.GPU, Pricing: s.Pricing}
	band.Since, band.Until = dayWindow(q.Since, q.At)
	m, err := r.recorded(ctx, band)
	for p, n := range m {
		if res.Recorded == nil {
			res.Recorded = map[string]int{}
		}
		res.Recorded[p] = max(res.Recorded[p], n)
	}
	return res, err
}

// optTime is t in UTC, nil when t is zero.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// Table is the series' bars as table rows, each with the market band of its day.
func (s Series) Table() ([]string, [][]string) {
	band := map[int64]BandDay{}
	for _, d := range s.Band {
		band[d.Day.Unix()] = d
	}
	var rows [][]string
	for _, b := range s.Bars {
		p10, p90 := Missing, Missing
		if d, ok := band[b.Start.UTC().Truncate(store.Daily).Unix()]; ok {
			p10, p90 = f4(d.P10), f4(d.P90)
		}
		rows = append(rows, []string{b.Start.UTC().Format(time.RFC3339), f4(b.Open), f4(b.High), f4(b.Low), f4(b.Close),
			f4(b.Mean),
			Num(float64(b.Count)), p10, p90})
	}
	return []string{"start", "open", "high", "low", "close", "mean", "observations", "market_p10", "market_p90"}, rows
}

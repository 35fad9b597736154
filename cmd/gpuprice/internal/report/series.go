package report

import (
	"context"
	"net/url"
	"time"

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
}

// ParseSeries reads a SeriesQuery's parameters.
func ParseSeries(v url.Values, caps Caps) (SeriesQuery, error) {
	p := newParams(v, caps)
	var q SeriesQuery
	q.Provider, q.SKU, q.Region, q.Zone, q.Pricing = p.str("provider"), p.str("sku"), p.str("region"), p.str("zone"), p.str("pricing")
	for _, need := range []struct{ name, v string }{{"provider", q.Provider}, {"sku", q.SKU}, {"pricing", q.Pricing}} {
		if need.v == "" && p.err == nil {
			p.fail(need.name, "is required: a series is provider, sku, region, zone and pricing (see prices)")
		}
	}
	q.Since = p.span("since", "30d")
	q.At = p.at("at")
	q.Bar = barWidth(p, "bar")
	q.Limit = p.limit("limit")
	return q, p.done("format")
}

// Values are the query's parameters.
func (q SeriesQuery) Values() url.Values {
	v := vals("provider", q.Provider, "sku", q.SKU, "region", q.Region, "zone", q.Zone, "pricing", q.Pricing,
		"since", FormatSpan(q.Since), "at", q.At.UTC().Format(time.RFC3339), "bar", barName(q.Bar))
	setInt(v, "limit", q.Limit)
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
	Truncated    bool                  `json:"truncated"` // observations beyond the limit were left out (the oldest are kept)
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
		bars, err := ro.Bars(ctx, store.BarQuery{Filter: f, Width: q.Bar})
		if err != nil {
			return res, err
		}
		for _, b := range bars {
			if b.SKU == s.SKU && b.Zone == s.Zone && b.Region == s.Region {
				s.Bars = append(s.Bars, b)
				s.GPU, s.Tier = b.GPU, b.Tier
			}
		}
	}
	s.Observations, s.Bars = nonNil(s.Observations), nonNil(s.Bars)
	res.Data = s
	return res, nil
}

// Table is the series' bars as table rows.
func (s Series) Table() ([]string, [][]string) {
	var rows [][]string
	for _, b := range s.Bars {
		rows = append(rows, []string{b.Start.UTC().Format(time.RFC3339), f4(b.Open), f4(b.High), f4(b.Low), f4(b.Close), f4(b.Mean),
			Num(float64(b.Count))})
	}
	return []string{"start", "open", "high", "low", "close", "mean", "observations"}, rows
}

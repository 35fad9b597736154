package query

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// ---- the term curve: `gpuprice terms`, GET /api/v1/terms

// TermsQuery is `gpuprice terms` and GET /api/v1/terms: the term curve of one GPU
// at one time.
type TermsQuery struct {
	Filter // GPU (one), Region, Provider (comma-separated), Scope
	At     time.Time
}

// ParseTerms reads a TermsQuery's parameters.
func ParseTerms(v url.Values, caps Caps) (TermsQuery, error) {
	p := newParams(v, caps)
	var q TermsQuery
	q.read(p, "gpu", "region", "provider", "scope")
	if q.GPU == "" && p.err == nil {
		p.fail("gpu", "is required (see `gpuprice gpus` or /api/v1/gpus)")
	}
	q.At = p.at("at")
	return q, p.done("format")
}

// Values are the query's parameters.
func (q TermsQuery) Values() url.Values {
	return vals("gpu", q.GPU, "region", q.Region, "provider", q.Provider, "scope", q.Scope,
		"at", q.At.UTC().Format(time.RFC3339))
}

// Terms is a GPU's term curve: the market's points and each provider's.
type Terms struct {
	GPU       string                `json:"gpu"`
	Scope     string                `json:"scope"`
	Day       time.Time             `json:"day"` // the day whose offers in force the curve is of
	Market    []analytics.TermPoint `json:"market"`
	Providers []analytics.TermPoint `json:"providers"`
}

// termWindow is the window the market at a time is read over: the offers in force
// on the last day are the ones a curve is drawn from.
const termWindow = 7 * 24 * time.Hour

// marketAt is every offer of each pricing kind of one GPU in force on the day of at
// (the history's offers on its last day, as the report reads them): pricing kind →
// offers. It answers the canonical GPU too.
func (r *Reader) marketAt(ctx context.Context, f Filter, at time.Time, rec map[string]int) (
	map[string][]analytics.Offer, string, []schemas.Match, time.Time, error) {
	sel, err := r.Resolve(ctx, f)
	if err != nil {
		return nil, "", nil, time.Time{}, err
	}
	if sel.GPU == "" {
		return nil, "", sel.Matches, time.Time{}, &ParamError{Param: "gpu",
			Msg: fmt.Sprintf("%q: matches %s; give one GPU", f.GPU, strings.Join(sel.gpus, ", ")), Suggestions: sel.gpus}
	}
	rows, err := r.latest(ctx, sel.Filter)
	if err != nil {
		return nil, "", nil, time.Time{}, err
	}
	kinds := map[string]bool{}
	for _, o := range sel.KeepObservations(rows) {
		if onTermCurve(o.Pricing) {
			kinds[o.Pricing] = true
		}
	}
	out := map[string][]analytics.Offer{}
	var day time.Time
	for k := range kinds {
		hq := HistoryQuery{Filter: Filter{GPU: sel.GPU, Pricing: k, Region: f.Region, Provider: f.Provider, Scope: f.Scope},
			Since: termWindow, At: at, Cheapest: 100000}
		h, err := r.History(ctx, hq)
		if err != nil {
			return nil, "", nil, time.Time{}, err
		}
		if len(h.Data.Cheapest) > 0 {
			out[k] = h.Data.Cheapest
		}
		for p, n := range h.Recorded { // provenance by row (Result.Recorded)
			rec[p] = max(rec[p], n)
		}
		day = h.Data.To.Add(-24 * time.Hour)
	}
	if day.IsZero() {
		day = at.UTC().Truncate(24 * time.Hour)
	}
	return out, sel.GPU, sel.Matches, day, nil
}

// marketInto reads the market at a time (marketAt) for a result: its matches and
// the recorded rows it read go to res.
func marketInto[T any](ctx context.Context, r *Reader, f Filter, at time.Time, res *Result[T]) (
	map[string][]analytics.Offer, string, time.Time, error) {
	res.Recorded = map[string]int{}
	kinds, gpu, matched, day, err := r.marketAt(ctx, f, at, res.Recorded)
	res.Matched = matched
	if len(res.Recorded) == 0 {
		res.Recorded = nil
	}
	return kinds, gpu, day, err
}

func onTermCurve(p string) bool {
	return p == schemas.OnDemand || p == schemas.Spot || schemas.TermHours(p) > 0
}

// Terms computes the term curve of one GPU from the offers in force on the day of At.
func (r *Reader) Terms(ctx context.Context, q TermsQuery) (Result[Terms], error) {
	var res Result[Terms]
	kinds, gpu, day, err := marketInto(ctx, r, q.Filter, q.At, &res)
	if err != nil {
		return res, err
	}
	m, p := analytics.TermCurve(kinds)
	res.Data = Terms{GPU: gpu, Scope: schemas.ScopeOf(q.Scope), Day: day, Market: nonNil(m), Providers: nonNil(p)}
	return res, nil
}

// Table is the curve as table rows: the market's points, then each provider's.
func (t Terms) Table() ([]string, [][]string) {
	header := []string{"provider", "pricing", "term_months", "offers", "min_usd_gpu_hour", "median_usd_gpu_hour",
		"cheapest", "vs_on_demand_median_pct", "discount_pct", "pairs"}
	var rows [][]string
	for _, pt := range append(append([]analytics.TermPoint(nil), t.Market...), t.Providers...) {
		who := pt.Provider
		if who == "" {
			who = "market"
		}
		rows = append(rows, []string{who, pt.Pricing, analytics.FormatNumber(pt.Months, 2), strconv.Itoa(pt.Offers),
			f4(pt.Min),
			f4(pt.Median), pt.Cheapest.Provider + " " + pt.Cheapest.SKU, optf(pt.VsOnDemandPct, 2), optf(pt.DiscountPct, 2),
			strconv.Itoa(pt.Pairs)})
	}
	return header, rows
}

// ---- break-even utilisation: `gpuprice breakeven`, GET /api/v1/breakeven

// BreakEvenQuery is `gpuprice breakeven` and GET /api/v1/breakeven.
type BreakEvenQuery struct {
	Filter // GPU (one), Region, Provider, Scope
	At     time.Time
	// Term is 1y, 3y or <n>m (a commitment of n months).
	Term string
	// Utilisation is the share of the term's hours the GPUs are used (0–1).
	Utilisation float64
	// Quote, when above 0, is a quoted $/GPU-hour for the term, placed as an offer.
	Quote float64
	// Weight is how the quote's verdict counts the offers: "" (each offer once, the
	// default) or analytics.WeightProvider (each provider once, its median).
	Weight string
}

// TermKinds are the pricing kinds of a term: 1y and 3y are the reservation and the
// 12- or 36-month commitment; <n>m a commitment of n months (12m is 1y, 36m 3y).
func TermKinds(term string) ([]string, error) {
	switch term {
	case "1y", "12m":
		return TermPricing("1y"), nil
	case "3y", "36m":
		return TermPricing("3y"), nil
	}
	if n, ok := strings.CutSuffix(term, "m"); ok {
		if k, err := strconv.Atoi(n); err == nil && k > 0 && k <= 120 {
			return []string{schemas.CommitmentPricing(k)}, nil
		}
	}
	return nil, fmt.Errorf("%q: use 1y, 3y or a number of months (6m)", term)
}

// ParseBreakEven reads a BreakEvenQuery's parameters. The utilisation may be a
// fraction (0.6) or a percentage (60%).
func ParseBreakEven(v url.Values, caps Caps) (BreakEvenQuery, error) {
	p := newParams(v, caps)
	var q BreakEvenQuery
	q.read(p, "gpu", "region", "provider", "scope")
	if q.GPU == "" && p.err == nil {
		p.fail("gpu", "is required (see `gpuprice gpus` or /api/v1/gpus)")
	}
	q.At = p.at("at")
	if q.Term = p.str("term"); q.Term == "" {
		q.Term = "1y"
	}
	if _, err := TermKinds(q.Term); err != nil {
		p.fail("term", "%v", err)
	}
	q.Utilisation = 1
	if s := p.str("utilisation"); s != "" {
		u, err := ParseUtilisation(s)
		if err != nil {
			p.fail("utilisation", "%q: %v", s, err)
		}
		q.Utilisation = u
	}
	q.Quote = p.number("quote", 0, 0, 1e4)
	q.Weight = weightParam(p)
	return q, p.done("format")
}

// ParseUtilisation reads 60%, 60 % or 0.6 as 0.6.
func ParseUtilisation(s string) (float64, error) {
	t := strings.TrimSpace(s)
	div := 1.0
	if n, ok := strings.CutSuffix(t, "%"); ok {
		t, div = strings.TrimSpace(n), 100
	}
	u, err := strconv.ParseFloat(t, 64)
	if err != nil || u/div < 0 || u/div > 1 || (div == 1 && u > 1) {
		return 0, fmt.Errorf("a share of the term's hours: 60%% or 0.6")
	}
	return u / div, nil
}

// Values are the query's parameters.
func (q BreakEvenQuery) Values() url.Values {
	v := vals("gpu", q.GPU, "region", q.Region, "provider", q.Provider, "scope", q.Scope,
		"at", q.At.UTC().Format(time.RFC3339),
		"term", q.Term, "utilisation", strconv.FormatFloat(q.Utilisation, 'g', -1, 64))
	if q.Quote > 0 {
		v.Set("quote", strconv.FormatFloat(q.Quote, 'g', -1, 64))
	}
	setWeight(v, q.Weight)
	return v
}

// BreakEvens are the break-even utilisations of every offer of a term.
type BreakEvens struct {
	GPU         string                `json:"gpu"`
	Term        string                `json:"term"`
	Hours       float64               `json:"hours"`
	Utilisation float64               `json:"utilisation"`
	Day         time.Time             `json:"day"`
	Offers      []analytics.BreakEven `json:"offers"`
	// Quote is the quote's break-even (Quote > 0), its offer named "quote".
	Quote *analytics.BreakEven `json:"quote"`
	// Verdict is the quote's place among the term's offers (Quote > 0).
	Verdict *analytics.Verdict `json:"verdict"`
}

// BreakEven computes the break-even utilisation of every offer of the term in force
// on the day of At (and of a quote), against on-demand and spot then.
func (r *Reader) BreakEven(ctx context.Context, q BreakEvenQuery) (Result[BreakEvens], error) {
	var res Result[BreakEvens]
	kinds, gpu, day, err := marketInto(ctx, r, q.Filter, q.At, &res)
	if err != nil {
		return res, err
	}
	tk, err := TermKinds(q.Term)
	if err != nil {
		return res, &ParamError{Param: "term", Msg: err.Error()}
	}
	hours := schemas.TermHours(tk[0])
	var offers []analytics.Offer
	for _, k := range tk {
		offers = append(offers, kinds[k]...)
	}
	od, spot := kinds[schemas.OnDemand], kinds[schemas.Spot]
	bes, err := analytics.BreakEvens(q.Term, hours, q.Utilisation, offers, od, spot)
	if err != nil {
		return res, err
	}
	if err := r.upfronts(ctx, gpu, hours, bes); err != nil {
		return res, err
	}
	res.Data = BreakEvens{GPU: gpu, Term: q.Term, Hours: hours, Utilisation: q.Utilisation, Day: day, Offers: nonNil(bes)}
	if q.Quote > 0 {
		quote := analytics.Offer{Provider: "quote", Pricing: tk[0], Price: q.Quote}
		qb, err := analytics.BreakEvens(q.Term, hours, q.Utilisation, []analytics.Offer{quote}, od, spot)
		if err != nil {
			return res, err
		}
		v := analytics.QuoteVerdictWeighted(q.Quote, q.Term, hours, offers, od, spot, q.Weight)
		res.Data.Quote, res.Data.Verdict = &qb[0], &v
	}
	return res, nil
}

// upfronts fills the part of each offer paid before the term, per GPU, where the
// provider publishes it: all-upfront offers are paid whole (price × hours: AWS's
// all-upfront reservations, RunPod's savings plans), partial-upfront ones their
// upfront fee, no-upfront nothing; and the cancellation terms the provider publishes
// (the row's Attrs["cancellation"]: AWS's reservations, RunPod's savings plans).
func (r *Reader) upfronts(ctx context.Context, gpu string, hours float64, bes []analytics.BreakEven) error {
	if len(bes) == 0 {
		return nil
	}
	rows, err := r.latest(ctx, store.Filter{GPU: gpu})
	if err != nil {
		return err
	}
	obs := map[string]schemas.Observation{}
	for _, o := range rows {
		obs[o.SeriesKey()] = o
	}
	for i := range bes {
		b := &bes[i]
		o, ok := obs[b.Offer.Provider+"|"+b.Offer.SKU+"|"+b.Offer.Region+"|"+b.Offer.Zone+"|"+b.Offer.Pricing]
		if !ok {
			continue
		}
		b.Cancellation = o.Attrs["cancellation"]
		switch o.Attrs["purchase_option"] {
		case "All Upfront":
			b.UpfrontUSDPerGPU = analytics.Opt(analytics.Round(b.Offer.Price*hours, 2))
		case "Partial Upfront":
			if f, err := strconv.ParseFloat(o.Attrs["upfront_fee"], 64); err == nil && o.GPUCount > 0 && o.FXRate > 0 {
				b.UpfrontUSDPerGPU = analytics.Opt(analytics.Round(f*o.FXRate/o.GPUCount, 2))
			}
		case "No Upfront":
			b.UpfrontUSDPerGPU = analytics.Opt(0)
		}
	}
	return nil
}

// Table is the break-evens as table rows (the quote first).
func (b BreakEvens) Table() ([]string, [][]string) {
	header := []string{"provider", "pricing", "sku", "region", "price_usd_gpu_hour", "on_demand_median", "break_even_pct",
		"saving_vs_on_demand_usd", "twin_on_demand", "twin_break_even_pct", "saving_vs_twin_usd", "spot_median",
		"spot_break_even_pct", "upfront_usd_per_gpu", "cancellation"}
	cost := func(c *analytics.CostAt) (string, string, string) {
		if c == nil {
			return Missing, Missing, Missing
		}
		return f4(c.Alternative), strconv.FormatFloat(c.BreakEven*100, 'f', 1, 64), strconv.FormatFloat(c.Saving, 'f', 2, 64)
	}
	var rows [][]string
	all := b.Offers
	if b.Quote != nil {
		all = append([]analytics.BreakEven{*b.Quote}, all...)
	}
	for _, e := range all {
		m1, m2, m3 := cost(e.Market)
		t1, t2, t3 := cost(e.Twin)
		s1, s2, _ := cost(e.Spot)
		rows = append(rows, []string{e.Offer.Provider, e.Offer.Pricing, e.Offer.SKU, e.Offer.Region, f4(e.Offer.Price),
			m1, m2, m3, t1, t2, t3, s1, s2, optf(e.UpfrontUSDPerGPU, 2), cmp.Or(e.Cancellation, Missing)})
	}
	return header, rows
}

// Sentences say the quote's (else the cheapest offer's) break-even in words.
func (b BreakEvens) Sentences() []string {
	var out []string
	e, what := b.Quote, "quote"
	if e == nil && len(b.Offers) > 0 {
		e, what = &b.Offers[0], "offer ("+b.Offers[0].Offer.Provider+" "+b.Offers[0].Offer.SKU+", the cheapest)"
	}
	if e == nil {
		return []string{fmt.Sprintf("No %s offer of %s is in force on %s.", analytics.TermWords(b.Term), b.GPU,
			b.Day.Format(time.DateOnly))}
	}
	if e.Market != nil {
		out = append(out, e.Market.Sentence(what, b.Term, "today's on-demand median ($"+f2(e.Market.Alternative)+")"))
	} else {
		out = append(out, "No on-demand offer is in force to compare with.")
	}
	if e.Twin != nil {
		out = append(out, e.Twin.Sentence(what, b.Term, "the same SKU on demand ($"+f2(e.Twin.Alternative)+")"))
	}
	return out
}

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

package query

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Reader computes reports from a store. The command line and the HTTP server both
// use it, so a CLI command and its endpoint give the same numbers.
type Reader struct {
	Store     store.Store
	Catalog   *schemas.Catalog
	Providers []string // provider names --provider resolves among
	// Sources are the sources with their configuration (LastRun is read from the
	// store); --source names resolve among them.
	SourceDefs []SourceRow
	// DryRunAlerts evaluates the alert rules as of a time, sending nothing and
	// keeping the state as it was; nil when no rules are configured.
	DryRunAlerts func(ctx context.Context, at time.Time) (alert.Report, error)
	// Redact removes secrets from run errors, quarantined rows and endpoints; nil:
	// only URLs' credentials (schemas.RedactText).
	Redact func(string) string
	// Current, when set, answers Latest instead of Store: the server's snapshot of
	// the current prices (see Current), so that a request does not re-run
	// the deduplicated latest query.
	Current LatestReader
}

// LatestReader reads the newest observation of every series matching a filter, as
// store.Store.Latest does.
type LatestReader interface {
	Latest(ctx context.Context, f store.Filter) ([]schemas.Observation, error)
}

// latest reads through Current when set, else from the store.
func (r *Reader) latest(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	if r.Current != nil {
		return r.Current.Latest(ctx, f)
	}
	return r.Store.Latest(ctx, f)
}

func (r *Reader) rollups() (store.Rollups, error) {
	ro, ok := r.Store.(store.Rollups)
	if !ok {
		return nil, fmt.Errorf("store %T keeps no bars", r.Store)
	}
	return ro, nil
}

// Result is what every report returns: its data and what the names given matched.
type Result[T any] struct {
	Data    T               `json:"data"`
	Matched []schemas.Match `json:"matched"`
	// Empty says, when a filter left nothing, which one emptied the answer and
	// what the rows before it held ("" otherwise, and left out of the JSON).
	Empty string `json:"empty,omitempty"`
	// Recorded is, per provider, how many of the series the answer read hold rows
	// of a recorded example (attrs origin "recorded": `gpuprice reparse
	// examples/recorded`), counted by row whatever ran since; absent when none. An
	// answer with any is not of today's prices.
	Recorded map[string]int `json:"recorded,omitempty"`
}

// recorded is store.RecordedSeries of f (nil for none): the provenance of an
// answer read from the series f selects over its window.
func (r *Reader) recorded(ctx context.Context, f store.Filter) (map[string]int, error) {
	m, err := store.RecordedSeries(ctx, r.Store, f)
	if err != nil || len(m) == 0 {
		return nil, err
	}
	return m, nil
}

// recordedRows is the provenance of an answer made of rows (nil for none).
func recordedRows(rows []schemas.Observation) map[string]int {
	var m map[string]int
	for _, o := range rows {
		if o.Recorded() {
			if m == nil {
				m = map[string]int{}
			}
			m[o.Provider]++
		}
	}
	return m
}

// ---- prices

// PricesQuery is `gpuprice prices` and GET /api/v1/prices.
type PricesQuery struct {
	Filter
	Limit     int
	Stale     time.Duration
	AllSeries bool
	// IncludeDerived keeps derived prices and "from" floors, which are left out by
	// default: they are no offer one can buy at that price (docs/analytics.md).
	IncludeDerived bool
	// Explain answers each row with how its published figure became $/GPU-hour
	// (GET /api/v1/prices?explain=true; `prices --explain`).
	Explain bool
}

// ParsePrices reads a PricesQuery's parameters.
func ParsePrices(v url.Values, caps Caps) (PricesQuery, error) {
	p := newParams(v, caps)
	var q PricesQuery
	q.read(p, "gpu", "provider", "pricing", "region", "tier", "interconnect")
	q.Limit = p.limit("limit")
	q.Stale = p.span("stale", FormatSpan(analytics.StaleAfter))
	q.AllSeries = p.boolean("all-series")
	q.IncludeDerived = p.boolean("include-derived")
	q.Explain = p.boolean("explain")
	return q, p.done("format")
}

// Values are the query's parameters.
func (q PricesQuery) Values() url.Values {
	v := vals(q.values()...)
	setInt(v, "limit", q.Limit)
	v.Set("stale", FormatSpan(q.Stale))
	if q.AllSeries {
		v.Set("all-series", "true")
	}
	if q.IncludeDerived {
		v.Set("include-derived", "true")
	}
	if q.Explain {
		v.Set("explain", "true")
	}
	return v
}

// ExplainedObservation is a row of `prices --explain` (and GET
// /api/v1/prices?explain=true): the observation and the steps from its published
// figure to its $/GPU-hour.
type ExplainedObservation struct {
	schemas.Observation
	Explain schemas.PriceSteps `json:"explain"`
}

// PricesExplained is Prices with each row's explanation.
func (r *Reader) PricesExplained(ctx context.Context, q PricesQuery) (Result[[]ExplainedObservation], error) {
	var out Result[[]ExplainedObservation]
	res, err := r.Prices(ctx, q)
	if err != nil {
		return out, err
	}
	out.Matched, out.Recorded = res.Matched, res.Recorded
	out.Data = make([]ExplainedObservation, 0, len(res.Data))
	for _, o := range res.Data {
		out.Data = append(out.Data, ExplainedObservation{o, schemas.ExplainPrice(o)})
	}
	return out, nil
}

// Prices is the latest price of every selected series still on offer (every series
// with AllSeries): grouped by pricing kind unless one is asked for, cheapest per
// GPU-hour first within each.
func (r *Reader) Prices(ctx context.Context, q PricesQuery) (Result[[]schemas.Observation], error) {
	var res Result[[]schemas.Observation]
	sel, err := r.Resolve(ctx, q.Filter)
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	rows, err := r.latest(ctx, sel.Filter)
	if err != nil {
		return res, err
	}
	rows = sel.KeepObservations(rows)
	if !q.AllSeries {
		rows = analytics.CurrentOnly(rows, q.Stale)
	}
	if !q.IncludeDerived {
		rows = ListedOnly(rows)
	}
	if q.Pricing == "" {
		// Grouped by pricing kind, cheapest first within each: a spot price is not a
		// cheaper on-demand price.
		sort.SliceStable(rows, func(i, j int) bool {
			return analytics.PricingRank(rows[i].Pricing) < analytics.PricingRank(rows[j].Pricing)
		})
	}
	if q.Limit > 0 && len(rows) > q.Limit {
		rows = rows[:q.Limit]
	}
	if len(rows) == 0 {
		rows = []schemas.Observation{}
		if res.Empty, err = r.emptiedBy(ctx, q, sel); err != nil {
			return res, err
		}
	}
	res.Data, res.Recorded = rows, recordedRows(rows)
	return res, nil
}

// emptiedBy says which of a prices query's filters left no row: it applies them to
// every series' latest price one at a time, in the order gpu, provider, pricing,
// region, tier, then the staleness and listed-price rules, and names the first after
// which nothing is left, with what the rows before it held.
func (r *Reader) emptiedBy(ctx context.Context, q PricesQuery, sel Selection) (string, error) {
	rows, err := r.latest(ctx, store.Filter{})
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return "the store holds no prices yet", nil
	}
	in := func(set []string, v string) bool { return len(set) == 0 || slices.Contains(set, v) }
	one := func(v string) []string {
		if v == "" {
			return nil
		}
		return []string{v}
	}
	pricing, regions := sel.pricing, sel.regions
	if pricing == nil {
		pricing = one(sel.Pricing)
	}
	if regions == nil {
		regions = one(sel.Region)
	}
	steps := []struct {
		name, typed string
		keep        func([]schemas.Observation) []schemas.Observation
		of          func(schemas.Observation) string // what the rows before held
	}{
		{"gpu", q.GPU, keepBy(func(o schemas.Observation) bool { return in(sel.GPUs(), o.GPU) }),
			func(o schemas.Observation) string { return o.GPU }},
		{"provider", q.Provider, keepBy(func(o schemas.Observation) bool { return in(sel.Providers(), o.Provider) }),
			func(o schemas.Observation) string { return o.Provider }},
		{"pricing", q.Pricing, keepBy(func(o schemas.Observation) bool { return in(pricing, o.Pricing) }),
			func(o schemas.Observation) string { return o.Pricing }},
		{"region", q.Region, keepBy(func(o schemas.Observation) bool { return in(regions, o.Region) }),
			func(o schemas.Observation) string { return o.Region }},
		{"tier", q.Tier, keepBy(func(o schemas.Observation) bool { return sel.Tier == "" || o.Tier == sel.Tier }),
			func(o schemas.Observation) string { return o.Tier }},
	}
	var applied []string
	for _, st := range steps {
		if st.typed == "" {
			continue
		}
		kept := st.keep(rows)
		if len(kept) == 0 {
			return fmt.Sprintf("%s %q leaves nothing of the %s (%s there: %s)", st.name, st.typed,
				describeRows(len(rows), applied), pluralName(st.name), listOf(rows, st.of)), nil
		}
		rows = kept
		applied = append(applied, fmt.Sprintf("%s %q", st.name, st.typed))
	}
	if !q.AllSeries {
		current := analytics.CurrentOnly(rows, q.Stale)
		if len(current) == 0 {
			return fmt.Sprintf("every one of the %s was last seen more than stale %s before its provider's newest "+
				"price: withdrawn offers; all-series lists them", describeRows(len(rows), applied), FormatSpan(q.Stale)), nil
		}
		rows = current
	}
	if !q.IncludeDerived && len(ListedOnly(rows)) == 0 {
		return fmt.Sprintf("the %s are derived prices or \"from\" floors: include-derived lists them",
			describeRows(len(rows), applied)), nil
	}
	return "", nil
}

func keepBy(keep func(schemas.Observation) bool) func([]schemas.Observation) []schemas.Observation {
	return func(rows []schemas.Observation) []schemas.Observation {
		var out []schemas.Observation
		for _, o := range rows {
			if keep(o) {
				out = append(out, o)
			}
		}
		return out
	}
}

// describeRows says which rows an emptying filter met: "12 series of gpu "h100"".
func describeRows(n int, applied []string) string {
	s := fmt.Sprintf("%d series", n)
	if len(applied) > 0 {
		s += " of " + strings.Join(applied, " and ")
	}
	return s
}

func pluralName(name string) string {
	if name == "pricing" {
		return "pricing kinds"
	}
	return name + "s"
}

// listOf lists the distinct values rows hold, sorted, at most eight of them.
func listOf(rows []schemas.Observation, of func(schemas.Observation) string) string {
	var vs []string
	for _, o := range rows {
		if v := of(o); v != "" && !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	sort.Strings(vs)
	if len(vs) > 8 {
		return strings.Join(vs[:8], ", ") + fmt.Sprintf(" and %d more", len(vs)-8)
	}
	return strings.Join(vs, ", ")
}

// ---- volatility

// VolatilityQuery is `gpuprice volatility` and GET /api/v1/volatility.
type VolatilityQuery struct {
	Filter
	Window time.Duration
	Bar    time.Duration
	At     time.Time
	By     analytics.Grouping
	Below  float64
}

// ParseVolatility reads a VolatilityQuery's parameters.
func ParseVolatility(v url.Values, caps Caps) (VolatilityQuery, error) {
	p := newParams(v, caps)
	var q VolatilityQuery
	q.read(p, "gpu", "provider", "pricing", "region", "tier")
	q.Window = p.span("window", "7d")
	q.Bar = barWidth(p, "bar")
	q.At = p.at("at")
	q.By = analytics.Grouping(p.enum("by", "series", "series", "offering", "zone"))
	q.Below = p.number("below", 0, 0, 1e6)
	return q, p.done("format")
}

func barWidth(p *params, name string) time.Duration {
	switch s := p.str(name); s {
	case "", "1h", "hour":
		return store.Hourly
	case "1d", "24h", "day":
		return store.Daily
	default:
		p.fail(name, "%q: use 1h or 1d", s)
		return store.Hourly
	}
}

func barName(w time.Duration) string {
	if w == store.Daily {
		return "1d"
	}
	return "1h"
}

// Values are the query's parameters.
func (q VolatilityQuery) Values() url.Values {
	v := vals(q.values()...)
	v.Set("window", FormatSpan(q.Window))
	v.Set("bar", barName(q.Bar))
	v.Set("at", q.At.UTC().Format(time.RFC3339))
	v.Set("by", string(q.By))
	if q.Below > 0 {
		v.Set("below", strconv.FormatFloat(q.Below, 'g', -1, 64))
	}
	return v
}

// Volatility is the volatility of every selected series (By series, most volatile
// first) or of their groups.
type Volatility struct {
	By     analytics.Grouping
	Series []analytics.SeriesVolatility
	Groups []analytics.GroupVolatility
}

// MarshalJSON writes the series, or the groups when grouped: the value of
// `volatility --format json`.
func (v Volatility) MarshalJSON() ([]byte, error) {
	if v.By == analytics.BySeries || v.By == "" {
		return jsonOf(nonNil(v.Series))
	}
	return jsonOf(nonNil(v.Groups))
}

// Volatility computes the volatility over the window ending At.
func (r *Reader) Volatility(ctx context.Context, q VolatilityQuery) (Result[Volatility], error) {
	res := Result[Volatility]{Data: Volatility{By: q.By}}
	sel, ro, f, err := r.windowed(ctx, q.Filter, q.At.Add(-q.Window), q.At)
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	bq := store.BarQuery{Filter: f, Width: q.Bar}
	var vs []analytics.SeriesVolatility
	if sel.KeepsAll() {
		// The store computes the figures where the bars are when it can.
		vs, err = analytics.VolatilitiesOf(ctx, ro, bq, q.At, q.Below)
	} else {
		var bars []store.Bar
		if bars, err = ro.Bars(ctx, bq); err == nil {
			vs = analytics.Volatilities(sel.KeepBars(bars), q.Bar, q.At, q.Below)
		}
	}
	if err != nil {
		return res, err
	}
	if res.Recorded, err = r.recorded(ctx, f); err != nil {
		return res, err
	}
	if q.By == analytics.BySeries {
		// Undefined figures (too few bars) after every defined one, zero included;
		// ties (often: series that never moved) in series order, so that the same
		// store gives the same answer every time.
		sort.SliceStable(vs, func(i, j int) bool {
			if a, b := vs[i].StdDefined(), vs[j].StdDefined(); a != b {
				return a
			}
			if vs[i].Annualised != vs[j].Annualised {
				return vs[i].Annualised > vs[j].Annualised
			}
			a, b := vs[i], vs[j]
			return a.Provider+"\x00"+a.SKU+"\x00"+a.Region+"\x00"+a.Zone+"\x00"+a.Pricing < b.Provider+"\x00"+b.SKU+"\x00"+
				b.Region+"\x00"+b.Zone+"\x00"+b.Pricing
		})
		res.Data.Series = vs
	} else {
		// Most volatile first, as the series are: the question is which moves most.
		groups := analytics.Group(vs, q.By)
		sort.SliceStable(groups, func(i, j int) bool {
			if a, b := groups[i].StdDefined(), groups[j].StdDefined(); a != b {
				return a
			}
			return groups[i].Annualised > groups[j].Annualised
		})
		res.Data.Groups = groups
	}
	return res, nil
}

// Table is the volatility as table rows.
func (v Volatility) Table() ([]string, [][]string) {
	share := func(x *float64) string {
		if x == nil {
			return Missing
		}
		return pct(*x)
	}
	var rows [][]string
	if v.By == analytics.BySeries || v.By == "" {
		header := []string{"gpu", "provider", "pricing", "sku", "region", "zone", "bars", "std_log_return",
			"annualised_pct", "cv_pct", "range_pct", "max_drawdown_pct", "changes", "below_pct", "close"}
		for _, s := range v.Series {
			rows = append(rows, []string{s.GPU, s.Provider, s.Pricing, s.SKU, s.Region, s.Zone,
				strconv.Itoa(s.Bars), optf(store.Figure(s.StdLogReturn, s.StdDefined()), 6), optPct(s.Annualised, s.StdDefined()),
				optPct(s.CV, s.CVDefined()), optPct(s.Range, s.RangeDefined()), optPct(s.MaxDrawdown, s.DrawdownDefined()),
				strconv.Itoa(s.Changes), share(s.ShareBelow), f4(s.Close)})
		}
		return header, rows
	}
	header := []string{"gpu", "provider", "pricing", "region", "zone", "series", "std_log_return",
		"annualised_pct", "cv_pct", "range_pct", "max_drawdown_pct", "changes", "below_pct", "median_close"}
	for _, g := range v.Groups {
		rows = append(rows, []string{g.GPU, g.Provider, g.Pricing, g.Region, g.Zone, strconv.Itoa(g.Series),
			optf(store.Figure(g.StdLogReturn, g.StdDefined()), 6), optPct(g.Annualised, g.StdDefined()),
			optPct(g.CV, g.CVDefined()),
			optPct(g.Range, g.RangeDefined()), optPct(g.MaxDrawdown, g.DrawdownDefined()), strconv.Itoa(g.Changes),
			share(g.ShareBelow), f4(g.MedianClose)})
	}
	return header, rows
}

// optPct is pct of a figure that may not exist (Missing).
func optPct(x float64, defined bool) string {
	if !defined {
		return Missing
	}
	return pct(x)
}

// windowed resolves f, opens the rollups and narrows the selection's filter to
// [since, until): the opening every read over a window of bars shares.
func (r *Reader) windowed(ctx context.Context, f Filter, since, until time.Time) (
	Selection, store.Rollups, store.Filter, error,
) {
	sel, err := r.Resolve(ctx, f)
	if err != nil {
		return sel, nil, store.Filter{}, err
	}
	ro, err := r.rollups()
	if err != nil {
		return sel, nil, store.Filter{}, err
	}
	sf := sel.Filter
	sf.Since, sf.Until = since, until
	return sel, ro, sf, nil
}

// ---- day prices: spreads, history, index

// dayPrices reads the daily bars of sel (with the bar in force before the window)
// and lays them on the days of [end − span, end). A series its provider no longer
// lists stops the day after its last sighting (analytics.PriceEnd), as `prices`
// and `tokens` leave it out.
func (r *Reader) dayPrices(ctx context.Context, sel Selection, span time.Duration, end time.Time) ([]analytics.DayPrice,
	time.Time, time.Time, error) {
	ro, err := r.rollups()
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	from, to := dayWindow(span, end)
	prices, err := DayPrices(ctx, ro, sel, from, to)
	return prices, from, to, err
}

// BarReader reads bars: store.Rollups, or a publish source.
type BarReader interface {
	Bars(ctx context.Context, q store.BarQuery) ([]store.Bar, error)
}

// DayPrices is the one read of day prices: the daily bars sel selects in [from,
// to), with the bar in force before, laid on the days (analytics.ScopedDailyPrices
// in sel's scope). The Reader's spreads, history and index and publish's index and
// spreads all read them here.
func DayPrices(ctx context.Context, ro BarReader, sel Selection, from, to time.Time) ([]analytics.DayPrice,
	error) {
	f := sel.Filter
	f.Since, f.Until = from, to
	bars, err := ro.Bars(ctx, store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
	if err != nil {
		return nil, err
	}
	return analytics.ScopedDailyPrices(sel.KeepBars(bars), from, to, sel.Scope), nil
}

// weightParam reads the weight parameter: "" (each offer once, the default) or
// analytics.WeightProvider.
func weightParam(p *params) string {
	if w := p.enum("weight", analytics.WeightOffer, analytics.WeightOffer,
		analytics.WeightProvider); w != analytics.WeightOffer {
		return w
	}
	return ""
}

// recordedDays is the provenance of an answer over the day prices of sel in the
// window dayPrices reads (the price carried into it included).
func (r *Reader) recordedDays(ctx context.Context, sel Selection, span time.Duration, end time.Time) (map[string]int,
	error) {
	f := sel.Filter
	f.Since, f.Until = dayWindow(span, end)
	return r.recorded(ctx, f)
}

// dayWindow is the window of days dayPrices reads: [end − span, end) in whole UTC
// days, through the day of end.
func dayWindow(span time.Duration, end time.Time) (time.Time, time.Time) {
	to := end.Truncate(store.Daily).Add(store.Daily)
	return to.Add(-span).Truncate(store.Daily), to
}

// SpreadsQuery is `gpuprice spreads` and GET /api/v1/spreads.
type SpreadsQuery struct {
	Filter // GPU and Pricing
	Since  time.Duration
	At     time.Time
	// Weight is how each tier's day cross-section counts its offers: "" (each
	// offer once, the default) or analytics.WeightProvider.
	Weight string
}

// ParseSpreads reads a SpreadsQuery's parameters.
func ParseSpreads(v url.Values, caps Caps) (SpreadsQuery, error) {
	p := newParams(v, caps)
	var q SpreadsQuery
	q.read(p, "gpu", "pricing", "scope")
	q.Since = p.span("since", "90d")
	q.At = p.at("at")
	q.Weight = weightParam(p)
	return q, p.done("format")
}

// Values are the query's parameters.
func (q SpreadsQuery) Values() url.Values {
	v := vals("gpu", q.GPU, "pricing", q.Pricing, "since", FormatSpan(q.Since), "at", q.At.UTC().Format(time.RFC3339),
		"scope", q.Scope)
	setWeight(v, q.Weight)
	return v
}

// setWeight sets the weight parameter when it is not the default.
func setWeight(v url.Values, w string) {
	if w != "" && w != analytics.WeightOffer {
		v.Set("weight", w)
	}
}

// Spreads are the daily tier spreads and how they moved.
type Spreads struct {
	// Weight is how each tier's day cross-section counts: "offer" or "provider".
	Weight  string                    `json:"weight"`
	Days    []analytics.SpreadDay     `json:"days"`
	Summary []analytics.SpreadSummary `json:"summary"`
}

// Spreads computes the tier spreads over the window.
func (r *Reader) Spreads(ctx context.Context, q SpreadsQuery) (Result[Spreads], error) {
	var res Result[Spreads]
	sel, err := r.Resolve(ctx, q.Filter)
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	var days []analytics.SpreadDay
	// The store computes instance spreads, each offer once, only.
	if sel.KeepsAll() && sel.Scope == "" && q.Weight != analytics.WeightProvider {
		// The store computes the spreads where the bars are when it can.
		ro, err := r.rollups()
		if err != nil {
			return res, err
		}
		f := sel.Filter
		f.Since, f.Until = dayWindow(q.Since, q.At)
		if days, err = analytics.SpreadsOf(ctx, ro, f); err != nil {
			return res, err
		}
	} else {
		prices, _, _, err := r.dayPrices(ctx, sel, q.Since, q.At)
		if err != nil {
			return res, err
		}
		days = analytics.SpreadsWeighted(prices, q.Weight)
	}
	w := analytics.WeightOffer
	if q.Weight == analytics.WeightProvider {
		w = q.Weight
	}
	res.Data = Spreads{Weight: w, Days: nonNil(days), Summary: analytics.SummariseSpreads(days)}
	res.Recorded, err = r.recordedDays(ctx, sel, q.Since, q.At)
	return res, err
}

// Table is the spreads as table rows.
func (s Spreads) Table() ([]string, [][]string) {
	header := []string{"gpu", "pricing", "day", "hyperscaler", "specialist", "marketplace", "ratio", "premium_pct",
		"n_hyperscaler", "n_specialist", "n_marketplace",
		"carried", "last_seen"}
	var rows [][]string
	for _, d := range s.Days {
		rows = append(rows, []string{d.GPU, d.Pricing, d.Day.Format(time.DateOnly), opt4(d.Hyperscaler), opt4(d.Specialist),
			opt4(d.Marketplace), opt4(d.Ratio), optf(d.PremiumPct, 2),
			strconv.Itoa(d.NHyperscaler), strconv.Itoa(d.NSpecialist), strconv.Itoa(d.NMarketplace),
			strconv.Itoa(d.Carried), seenText(d.LastSeen)})
	}
	return header, rows
}

// HistoryQuery is `gpuprice history` and GET /api/v1/history.
type HistoryQuery struct {
	Filter   // GPU (one), Pricing (one), Region, Provider (one or several, comma-separated)
	Since    time.Duration
	At       time.Time
	Cheapest int
	// Weight is how each day's cross-section counts its offers: "" (each offer
	// once, the default) or analytics.WeightProvider.
	Weight string
}

// ParseHistory reads a HistoryQuery's parameters.
func ParseHistory(v url.Values, caps Caps) (HistoryQuery, error) {
	p := newParams(v, caps)
	var q HistoryQuery
	q.read(p, "gpu", "pricing", "region", "provider", "scope")
	if q.GPU == "" && p.err == nil {
		p.fail("gpu", "is required (see `gpuprice gpus` or /api/v1/gpus)")
	}
	if q.Pricing == "" {
		q.Pricing = schemas.OnDemand
	}
	q.Since = p.span("since", "180d")
	q.At = p.at("at")
	q.Cheapest = p.integer("cheapest", 5, 0, 1000)
	q.Weight = weightParam(p)
	return q, p.done("format")
}

// Values are the query's parameters.
func (q HistoryQuery) Values() url.Values {
	v := vals("gpu", q.GPU, "pricing", q.Pricing, "region", q.Region, "provider", q.Provider, "since", FormatSpan(q.Since),
		"at", q.At.UTC().Format(time.RFC3339), "scope", q.Scope)
	v.Set("cheapest", strconv.Itoa(q.Cheapest))
	setWeight(v, q.Weight)
	return v
}

// History computes the negotiation report of one GPU and pricing kind.
func (r *Reader) History(ctx context.Context, q HistoryQuery) (Result[analytics.History], error) {
	var res Result[analytics.History]
	sel, err := r.Resolve(ctx, q.Filter)
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	if sel.GPU == "" {
		return res, &ParamError{Param: "gpu", Msg: fmt.Sprintf("%q: matches %s; history needs one GPU", q.GPU,
			strings.Join(sel.gpus, ", ")),
			Suggestions: sel.gpus}
	}
	if sel.Pricing == "" {
		return res, &ParamError{Param: "pricing", Msg: fmt.Sprintf("%q: matches %s; history needs one pricing kind",
			q.Pricing, strings.Join(sel.pricing, ", ")),
			Suggestions: sel.pricing}
	}
	pricing := sel.Pricing
	sel.Pricing = "" // every pricing kind: the others give the reserved discount
	// The store computes instance prices, each offer once, only; GPU-only ones and
	// the provider weighting are laid out here.
	if sel.KeepsAll() && sel.Scope == "" && q.Weight != analytics.WeightProvider {
		// The store computes the report where the bars are when it can.
		ro, err := r.rollups()
		if err != nil {
			return res, err
		}
		f := sel.Filter
		f.Since, f.Until = dayWindow(q.Since, q.At)
		if res.Data, err = analytics.HistoryFor(ctx, ro, f, sel.GPU, pricing, q.Cheapest); err != nil {
			return res, err
		}
	} else {
		prices, from, to, err := r.dayPrices(ctx, sel, q.Since, q.At)
		if err != nil {
			return res, err
		}
		res.Data = analytics.HistoryWeighted(sel.GPU, pricing, prices, from, to, q.Cheapest, q.Weight)
	}
	res.Data.Providers = nonNil(res.Data.Providers)
	res.Data.Cheapest = nonNil(res.Data.Cheapest)
	res.Data.Daily = nonNil(res.Data.Daily)
	res.Recorded, err = r.recordedDays(ctx, sel, q.Since, q.At)
	return res, err
}

// Composition says what the window's market was made of (the overall row o): the
// offers in force on its first and last day, how many entered and left, and, like
// for like, the level of the offers in force on both beside the whole market's: the
// window's p50 and today's median differ by offers entering and leaving as well as
// by price. The report's summary and `history` print it.
func Composition(o analytics.HistoryStats) string {
	price := func(v *float64) string {
		if v == nil {
			return "missing"
		}
		return "$" + f4(*v)
	}
	s := fmt.Sprintf("Composition: %d offers were in force on the window's first day with any and %d on its last; "+
		"%d entered and %d left, %d were in force on both.", o.FirstDayOffers, o.LastDayOffers, o.SeriesEntered, o.SeriesLeft,
		o.MatchedOffers)
	if o.MatchedP50 == nil || o.MatchedLatestMedian == nil {
		return s +
			" No offer was in force on both days: the window's p50 and today's median are of different offers, not comparable."
	}
	s += fmt.Sprintf(" Like for like, those %d offers had a median of %s over the window and %s today", o.MatchedOffers,
		price(o.MatchedP50), price(o.MatchedLatestMedian))
	if *o.MatchedP50 > 0 {
		s += fmt.Sprintf(" (%s %%)", strconv.FormatFloat((*o.MatchedLatestMedian / *o.MatchedP50 - 1)*100, 'f', 1, 64))
	}
	s += "."
	if o.SeriesEntered+o.SeriesLeft > 0 {
		s += fmt.Sprintf(" The whole market's window p50 (%s) and today's median (%s) are of different offers: "+
			"their difference is composition as well as price.", price(o.P50), price(o.LatestMedian))
	}
	return s
}

// HistoryTable is the history's statistics as table rows: days is how many days of
// the window the row's figures rest on (days with offers in force), samples the
// series-days behind them.
func HistoryTable(h analytics.History) ([]string, [][]string) {
	header := []string{"provider", "series", "days", "samples", "p10", "p25", "p50", "p75", "p90", "min", "latest",
		"latest_median", "trend_per_30d", "trend_pct_per_30d", "entered", "left", "reserved_discount_pct"}
	var rows [][]string
	for _, s := range append([]analytics.HistoryStats{h.Overall}, h.Providers...) {
		rows = append(rows, []string{s.Provider, strconv.Itoa(s.Series), strconv.Itoa(s.Days), strconv.Itoa(s.Samples),
			opt4(s.P10), opt4(s.P25),
			opt4(s.P50), opt4(s.P75), opt4(s.P90), opt4(s.Min), opt4(s.Latest), opt4(s.LatestMedian), opt4(s.TrendPer30d),
			optf(s.TrendPctPer30d, 2), strconv.Itoa(s.SeriesEntered), strconv.Itoa(s.SeriesLeft),
			optf(s.ReservedDiscountPct, 2)})
	}
	return header, rows
}

// HistoryRows is the whole history as one table, for CSV: the statistics (row
// "stats") and the cheapest offers now (row "cheapest"), each with the other's
// columns empty.
func HistoryRows(h analytics.History) ([]string, [][]string) {
	sh, srows := HistoryTable(h)
	ch, crows := CheapestTable(h)
	header := append(append([]string{"row"}, sh...), ch[0]) // usd_gpu_hour
	header = append(header, ch[2:]...)                      // tier … last_seen (provider is shared)
	var rows [][]string
	for _, r := range srows {
		row := append(append([]string{"stats"}, r...), make([]string, len(ch)-1)...)
		rows = append(rows, row)
	}
	for _, r := range crows {
		row := append([]string{"cheapest", r[1]}, make([]string, len(sh)-1)...)
		row = append(append(row, r[0]), r[2:]...)
		rows = append(rows, row)
	}
	return header, rows
}

// CheapestTable is the history's cheapest offers as table rows.
func CheapestTable(h analytics.History) ([]string, [][]string) {
	var rows [][]string
	for _, o := range h.Cheapest {
		seen := Missing
		if !o.LastSeen.IsZero() {
			seen = o.LastSeen.Format(time.RFC3339)
		}
		rows = append(rows, []string{f4(o.Price), o.Provider, o.Tier, o.SKU, o.Region, o.Zone, o.Since.Format(time.DateOnly),
			seen})
	}
	return []string{"price_usd_gpu_hour", "provider", "tier", "sku", "region", "zone", "since", "last_seen"}, rows
}

// IndexQuery is `gpuprice index` and GET /api/v1/index.
type IndexQuery struct {
	Filter // GPU and Pricing
	Since  time.Duration
	At     time.Time
	// Explain is a day (YYYY-MM-DD) whose members, exclusions and their reasons
	// are answered instead of the index (GET /api/v1/index?explain=DAY; `index
	// --explain DAY`); it needs a canonical GPU and a pricing kind.
	Explain string
	// Weight is how each day's cross-section counts its offers: "" (each offer
	// once, the default) or analytics.WeightProvider.
	Weight string
}

// ParseIndex reads an IndexQuery's parameters.
func ParseIndex(v url.Values, caps Caps) (IndexQuery, error) {
	p := newParams(v, caps)
	var q IndexQuery
	q.read(p, "gpu", "pricing", "scope")
	q.Since = p.span("since", "30d")
	q.At = p.at("at")
	if q.Explain = p.str("explain"); q.Explain != "" {
		if _, err := time.Parse(time.DateOnly, q.Explain); err != nil {
			p.fail("explain", "%q: a day, YYYY-MM-DD", q.Explain)
		}
	}
	q.Weight = weightParam(p)
	return q, p.done("format")
}

// Values are the query's parameters.
func (q IndexQuery) Values() url.Values {
	v := vals("gpu", q.GPU, "pricing", q.Pricing, "since", FormatSpan(q.Since), "at", q.At.UTC().Format(time.RFC3339),
		"scope", q.Scope)
	if q.Explain != "" {
		v.Set("explain", q.Explain)
	}
	setWeight(v, q.Weight)
	return v
}

// IndexExplained is one day's index members and the series left out, with why
// (q.Explain is the day).
func (r *Reader) IndexExplained(ctx context.Context, q IndexQuery) (Result[[]analytics.IndexMember], error) {
	var res Result[[]analytics.IndexMember]
	d, err := time.Parse(time.DateOnly, q.Explain)
	if err != nil {
		return res, &ParamError{Param: "explain", Msg: fmt.Sprintf("%q: a day, YYYY-MM-DD", q.Explain)}
	}
	if q.GPU == "" || !schemas.ValidPricing(q.Pricing) {
		return res, &ParamError{Param: "explain", Msg: "give a canonical gpu (e.g. H100-SXM-80GB) and a pricing kind"}
	}
	sel, ro, f, err := r.windowed(ctx, q.Filter, d.Add(-store.Daily), d.Add(store.Daily))
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	bars, err := ro.Bars(ctx, store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
	if err != nil {
		return res, err
	}
	res.Data = nonNil(analytics.ExplainIndexDay(bars, d))
	res.Recorded, err = r.recorded(ctx, f)
	return res, err
}

// Index computes the daily reference prices over the window.
func (r *Reader) Index(ctx context.Context, q IndexQuery) (Result[[]analytics.IndexPoint], error) {
	var res Result[[]analytics.IndexPoint]
	sel, err := r.Resolve(ctx, q.Filter)
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	prices, _, _, err := r.dayPrices(ctx, sel, q.Since, q.At)
	if err != nil {
		return res, err
	}
	res.Data = nonNil(analytics.IndexWeighted(prices, q.Weight))
	res.Recorded, err = r.recordedDays(ctx, sel, q.Since, q.At)
	return res, err
}

// IndexTable is the index as table rows.
func IndexTable(idx []analytics.IndexPoint) ([]string, [][]string) {
	var rows [][]string
	for _, p := range idx {
		rows = append(rows, []string{p.GPU, p.Pricing, p.Group, p.Day.Format(time.DateOnly), f4(p.Price),
			strconv.Itoa(p.Offers), strconv.Itoa(p.Dropped), p.Method, f4(p.Chained), strconv.Itoa(p.Matched), p.ChainedMethod,
			strconv.Itoa(p.Carried), seenText(p.LastSeen)})
	}
	return []string{"gpu", "pricing", "group", "day", "price_usd_gpu_hour", "offers", "dropped", "method",
		"chained_usd_gpu_hour", "chained_matched", "chained_method", "carried", "last_seen"}, rows
}

// seenText is a last sighting as table text: its time in RFC 3339, "-" when unknown.
func seenText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func setInt(v url.Values, name string, n int) {
	if n != 0 {
		v.Set(name, strconv.Itoa(n))
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// UnmarshalJSON reads the series or the groups, as v.By says.
func (v *Volatility) UnmarshalJSON(b []byte) error {
	if v.By == analytics.BySeries || v.By == "" {
		return jsonUnmarshal(b, &v.Series)
	}
	return jsonUnmarshal(b, &v.Groups)
}

// ListedOnly drops rows that are not listed prices (derived by a rule, "from"
// floors): they never head a cheapest-first list unless asked for.
func ListedOnly(rows []schemas.Observation) []schemas.Observation {
	out := rows[:0:0]
	for _, o := range rows {
		if o.Comparable() {
			out = append(out, o)
		}
	}
	return out
}

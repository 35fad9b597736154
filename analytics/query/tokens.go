package query

import (
	"cmp"
	"context"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
)

// TokensQuery is `gpuprice tokens` and GET /api/v1/tokens.
type TokensQuery struct {
	Filter
	Params, MFU, Tokens float64
	Precision           string
	Limit               int
	// Job is the training job's shape (GPUs, nodes; default one node): the band of
	// NVLink-class GPUs follows the offer's interconnect only when the job crosses
	// nodes.
	Job analytics.Job
	// Risk, when not nil, prices the job's interruptions in (risk-adjusted=true,
	// checkpoint, restart): each row's $ per 1B tokens times the expected cost factor
	// of its band (query.RiskAdjust; on-demand and reserved: 1), cheapest first on
	// that figure; a spot offer without a band keeps its sticker figure, marked, and
	// is listed after the others.
	Risk *analytics.SpotJob
}

// ParseTokens reads a TokensQuery's parameters.
func ParseTokens(v url.Values, caps Caps) (TokensQuery, error) {
	p := newParams(v, caps)
	var q TokensQuery
	q.read(p, "gpu", "provider", "pricing", "region", "tier", "scope", "interconnect")
	if !p.has("params") && p.err == nil {
		p.fail("params", "is required: the model's parameter count, e.g. 7e9")
	}
	q.Params = p.number("params", 0, 1, 1e15)
	q.MFU = p.number("mfu", 0, 0, 1)
	if p.has("mfu") && q.MFU == 0 {
		p.fail("mfu", "%q: a fraction in (0, 1], e.g. 0.45", p.str("mfu"))
	}
	q.Tokens = p.number("tokens", 0, 0, 1e18)
	q.Precision = p.enum("precision", analytics.BF16, analytics.BF16, analytics.FP8)
	q.Job.GPUs = p.integer("gpus", 0, 1, 1<<20)
	q.Job.Nodes = p.integer("nodes", 0, 1, 1<<16)
	q.Limit = p.limit("limit")
	job := analytics.SpotJob{CheckpointMin: p.span("checkpoint", "30m").Minutes(),
		RestartMin: p.span("restart", "10m").Minutes()}
	if p.boolean("risk-adjusted") {
		q.Risk = &job
	} else {
		for _, n := range []string{"checkpoint", "restart"} {
			if p.has(n) && p.err == nil {
				p.fail(n, "is read with risk-adjusted=true (--risk-adjusted)")
			}
		}
	}
	return q, p.done("format", "explain")
}

// Values are the query's parameters.
func (q TokensQuery) Values() url.Values {
	v := vals(q.values()...)
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	v.Set("params", g(q.Params))
	if q.MFU > 0 {
		v.Set("mfu", g(q.MFU))
	}
	if q.Tokens > 0 {
		v.Set("tokens", g(q.Tokens))
	}
	v.Set("precision", q.Precision)
	setInt(v, "gpus", q.Job.GPUs)
	setInt(v, "nodes", q.Job.Nodes)
	setInt(v, "limit", q.Limit)
	if q.Risk != nil {
		v.Set("risk-adjusted", "true")
		v.Set("checkpoint", FormatSpan(time.Duration(q.Risk.CheckpointMin*float64(time.Minute))))
		v.Set("restart", FormatSpan(time.Duration(q.Risk.RestartMin*float64(time.Minute))))
	}
	return v
}

// TokenRow is one offering's cost of training tokens.
type TokenRow struct {
	Provider     string              `json:"provider"`
	SKU          string              `json:"sku"`
	Region       string              `json:"region"`
	Zone         string              `json:"zone"`
	Pricing      string              `json:"pricing"`
	GPU          string              `json:"gpu"`
	Interconnect string              `json:"interconnect"`
	MFUSource    string              `json:"mfu_source"`
	Cost         analytics.TokenCost `json:"cost"`
	// Risk (risk-adjusted=true): the band read and the expected cost factor of the
	// job's interruptions; RiskAdjustedUSDPer1B is USDPer1BTokens × the factor, 0
	// when the band is unknown (Risk.Known false).
	Risk                 *RiskCost `json:"risk,omitempty"`
	RiskAdjustedUSDPer1B float64   `json:"risk_adj_usd_per_1b_tokens,omitempty"`
}

// Tokens is the cost of training tokens of every offering on offer, cheapest first,
// and how many were left out and why.
type Tokens struct {
	Rows      []TokenRow
	Skipped   map[string]int
	HasTokens bool
	Risk      bool // risk-adjusted: the table has the band and the adjusted figure
}

// MarshalJSON writes the rows: the value of `tokens --format json`.
func (t Tokens) MarshalJSON() ([]byte, error) { return jsonOf(nonNil(t.Rows)) }

// UnmarshalJSON reads the rows.
func (t *Tokens) UnmarshalJSON(b []byte) error { return jsonUnmarshal(b, &t.Rows) }

// pricedOffer is an offer on offer with its GPU's catalog entry.
type pricedOffer struct {
	schemas.Observation
	GPU schemas.GPU
}

// pricedOffers are the latest prices of f still on offer that a cost per token can be
// computed on: listed prices of the scope compared whose GPU the catalog holds; the
// others are counted in skipped with why. Tokens and Inference read them.
func (r *Reader) pricedOffers(ctx context.Context, f Filter, skipped map[string]int) (
	[]pricedOffer, []schemas.Match, error) {
	sel, err := r.Resolve(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	latest, err := r.latest(ctx, sel.Filter)
	if err != nil {
		return nil, sel.Matches, err
	}
	var out []pricedOffer
	for _, o := range analytics.CurrentOnly(sel.KeepObservations(latest), analytics.StaleAfter) { // offers still listed
		if !o.Comparable() {
			skipped["not a listed price ("+schemas.BasisOf(o.PriceBasis)+")"]++
			continue
		}
		if want := cmp.Or(sel.Scope, schemas.ScopeInstance); schemas.ScopeOf(o.PriceScope) != want {
			if want == schemas.ScopeInstance {
				skipped["GPU-only price (the VM it needs is not included; scope=gpu_only compares these)"]++
			} else {
				skipped["instance price (scope=gpu_only compares GPU-only prices only)"]++
			}
			continue
		}
		g, ok := r.Catalog.Lookup(o.GPU)
		if !ok {
			skipped["GPU not in the catalog"]++
			continue
		}
		out = append(out, pricedOffer{o, g})
	}
	return out, sel.Matches, nil
}

// countRecorded counts o in recorded (made when first needed) when it comes from a
// recorded example.
func countRecorded(recorded map[string]int, o schemas.Observation) map[string]int {
	if o.Recorded() {
		if recorded == nil {
			recorded = map[string]int{}
		}
		recorded[o.Provider]++
	}
	return recorded
}

// cheapestFirst orders rows by cost, keeps at most limit (0: all) and is never nil.
func cheapestFirst[T any](rows []T, cost func(T) float64, limit int) []T {
	sort.SliceStable(rows, func(i, j int) bool { return cost(rows[i]) < cost(rows[j]) })
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	return nonNil(rows)
}

// Tokens computes $ per 1B training tokens of the latest prices still on offer.
func (r *Reader) Tokens(ctx context.Context, q TokensQuery) (Result[Tokens], error) {
	res := Result[Tokens]{Data: Tokens{Skipped: map[string]int{}, HasTokens: q.Tokens > 0, Risk: q.Risk != nil}}
	offers, matched, err := r.pricedOffers(ctx, q.Filter, res.Data.Skipped)
	res.Matched = matched
	if err != nil {
		return res, err
	}
	var risks map[string]RiskCost // by series key
	if q.Risk != nil {
		obs := make([]schemas.Observation, len(offers))
		for i, po := range offers {
			obs[i] = po.Observation
		}
		adj, err := RiskAdjust(ctx, r, obs, *q.Risk, false)
		if err != nil {
			return res, err
		}
		risks = make(map[string]RiskCost, len(adj))
		for _, a := range adj {
			risks[a.SeriesKey()] = a.Risk
		}
	}
	var rows []TokenRow
	for _, po := range offers {
		o, g := po.Observation, po.GPU
		peak, err := analytics.PeakTFLOPS(g, q.Precision)
		if err != nil {
			res.Data.Skipped[strings.TrimPrefix(err.Error(), "analytics: ")]++
			continue
		}
		m, src := q.MFU, "--mfu"
		if m == 0 {
			band, why, err := analytics.MFUForJob(g, o.Interconnect, o.GPUCount, q.Job)
			if err != nil {
				res.Data.Skipped["no published MFU band for the class "+band.Class+" (pass --mfu)"]++
				continue
			}
			cites := make([]string, 0, len(band.Sources))
			for _, s := range band.Sources {
				cites = append(cites, s.Cite)
			}
			m, src = band.Mid(), band.String()+" midpoint, because "+why+"; "+strings.Join(cites, "; ")
		}
		c, err := analytics.Tokens(o.PriceUSDGPUHour, q.Params, peak, m, q.Tokens)
		if err != nil {
			return res, err
		}
		row := TokenRow{Provider: o.Provider, SKU: o.SKU, Region: o.Region, Zone: o.Zone, Pricing: o.Pricing, GPU: o.GPU,
			Interconnect: o.Interconnect, MFUSource: src, Cost: c}
		if rc, ok := risks[o.SeriesKey()]; ok {
			row.Risk = &rc
			if rc.Known {
				row.RiskAdjustedUSDPer1B = c.USDPer1BTokens * rc.Factor
			}
		}
		rows = append(rows, row)
		res.Recorded = countRecorded(res.Recorded, o)
	}
	if q.Risk != nil {
		// Risk-adjusted, the offers whose band is unknown cannot be ranked with the
		// others: they come after them, cheapest first on their sticker figure.
		sort.SliceStable(rows, func(i, j int) bool {
			return rows[i].Risk != nil && rows[i].Risk.Known && !(rows[j].Risk != nil && rows[j].Risk.Known)
		})
		known := 0
		for known < len(rows) && rows[known].Risk != nil && rows[known].Risk.Known {
			known++
		}
		cheapestFirst(rows[:known], func(r TokenRow) float64 { return r.RiskAdjustedUSDPer1B }, 0)
		cheapestFirst(rows[known:], func(r TokenRow) float64 { return r.Cost.USDPer1BTokens }, 0)
		res.Data.Rows = cheapestFirst(rows, func(TokenRow) float64 { return 0 }, q.Limit)
	} else {
		res.Data.Rows = cheapestFirst(rows, func(r TokenRow) float64 { return r.Cost.USDPer1BTokens }, q.Limit)
	}
	return res, nil
}

// Table is the token costs as table rows; the whole run's columns only when the
// query gave the run's tokens.
func (t Tokens) Table() ([]string, [][]string) {
	header := []string{"gpu", "provider", "pricing", "sku", "region", "zone", "price_usd_gpu_hour", "mfu",
		"tokens_per_gpu_hour", "usd_per_1b_tokens"}
	if t.HasTokens {
		header = append(header, "gpu_hours", "run_usd")
	}
	if t.Risk {
		header = append(header, "band", "risk_adj_usd_per_1b_tokens")
	}
	var out [][]string
	for _, r := range t.Rows {
		line := []string{r.GPU, r.Provider, r.Pricing, r.SKU, r.Region, r.Zone, f4(r.Cost.PriceUSDGPUHour),
			analytics.FormatNumber(r.Cost.MFU, 4), strconv.FormatFloat(r.Cost.TokensPerGPUHour, 'f', 0, 64),
			f4(r.Cost.USDPer1BTokens)}
		if t.HasTokens {
			line = append(line, strconv.FormatFloat(r.Cost.GPUHours, 'f', 1, 64), strconv.FormatFloat(r.Cost.RunUSD, 'f', 2, 64))
		}
		if t.Risk {
			band, adj := "unknown", Missing
			if r.Risk != nil && r.Risk.Known {
				band, adj = r.Risk.Band, f4(r.RiskAdjustedUSDPer1B)
				if band == "" { // not interrupted: on-demand, reserved
					band = "-"
				}
			}
			line = append(line, band, adj)
		}
		out = append(out, line)
	}
	return header, out
}

package query

import (
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// ReportQuery is `gpuprice report` and GET /api/v1/report: the buyer's report of one
// GPU and pricing kind (see package report/buyer).
type ReportQuery struct {
	Filter // GPU (one), Pricing (one; default on_demand), Region, Provider (comma-separated)
	Since  time.Duration
	At     time.Time
	// Quote is the price quoted to the buyer in $/GPU-hour (0: no target price
	// section); Term its term, "1y" or "3y".
	Quote float64
	Term  string
	// GPUs is how many GPUs the quote is for (the savings over the term scale with it).
	GPUs int
	// Utilisation is the share of the term's hours the GPUs will be used (0–1): the
	// target price section says what the quote saves or loses against on-demand at it.
	Utilisation float64
	// ModelParams is the model size the $ per 1B training tokens are for.
	ModelParams float64
	// Cheapest bounds the cheapest offers listed.
	Cheapest int
	// Weight is how every cross-section of the report counts its offers (the
	// market's percentiles, the spreads, the index and the verdict): "" (each offer
	// once, the default) or analytics.WeightProvider.
	Weight string
}

// ReportTerms are the terms a quote may be for.
var ReportTerms = []string{"1y", "3y"}

// ParseReport reads a ReportQuery's parameters.
func ParseReport(v url.Values, caps Caps) (ReportQuery, error) {
	p := newParams(v, caps)
	var q ReportQuery
	var err0 error
	q.read(p, "gpu", "pricing", "region", "provider")
	if q.GPU == "" && p.err == nil {
		p.fail("gpu", "is required (see `gpuprice gpus` or /api/v1/gpus)")
	}
	if q.Pricing == "" {
		q.Pricing = schemas.OnDemand
	}
	q.Since = p.span("since", "180d")
	q.At = p.at("at")
	q.Quote = p.number("quote", 0, 0, 1e4)
	if p.has("quote") && q.Quote == 0 && p.err == nil {
		p.fail("quote", "%q: a price above 0 in $/GPU-hour, e.g. 2.10", p.str("quote"))
	}
	q.Term = p.enum("term", "1y", ReportTerms...)
	q.GPUs = p.integer("gpus", 1, 1, 1_000_000)
	q.Utilisation = 1
	if u := p.str("utilisation"); u != "" {
		if q.Utilisation, err0 = ParseUtilisation(u); err0 != nil {
			p.fail("utilisation", "%q: %v", u, err0)
		}
	}
	mp := p.str("model-params")
	if mp == "" {
		mp = "70B"
	}
	n, err := ParseCount(mp)
	if err != nil {
		p.fail("model-params", "%q: %v", mp, err)
	}
	q.ModelParams = n
	q.Cheapest = p.integer("cheapest", 10, 1, 1000)
	q.Weight = weightParam(p)
	return q, p.done("format")
}

// Values are the query's parameters.
func (q ReportQuery) Values() url.Values {
	v := vals("gpu", q.GPU, "pricing", q.Pricing, "region", q.Region, "provider", q.Provider,
		"since", FormatSpan(q.Since), "at", q.At.UTC().Format(time.RFC3339), "term", q.Term)
	if q.Quote > 0 {
		v.Set("quote", strconv.FormatFloat(q.Quote, 'f', -1, 64))
	}
	setInt(v, "gpus", q.GPUs)
	if q.Utilisation > 0 && q.Utilisation != 1 {
		v.Set("utilisation", strconv.FormatFloat(q.Utilisation, 'g', -1, 64))
	}
	v.Set("model-params", FormatCount(q.ModelParams))
	setInt(v, "cheapest", q.Cheapest)
	setWeight(v, q.Weight)
	return v
}

// TermPricing are the pricing kinds of a term: its reservations and commitments.
func TermPricing(term string) []string {
	if term == "3y" {
		return []string{schemas.Reserved3Y, schemas.CommitmentPricing(36)}
	}
	return []string{schemas.Reserved1Y, schemas.CommitmentPricing(12)}
}

// TermHours is the length of a term ("1y", "3y") in hours, as schemas.TermHours
// counts a reservation's.
func TermHours(term string) float64 { return schemas.TermHours(TermPricing(term)[0]) }

// ParseCount reads a count such as a model's parameters: 70B, 7e9, 1.5T, 350M.
func ParseCount(s string) (float64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1.0
	for suf, m := range map[string]float64{"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12} {
		if n, ok := strings.CutSuffix(t, suf); ok {
			t, mult = n, m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v*mult < 1 || v*mult > 1e15 {
		return 0, errors.New("a parameter count, e.g. 70B, 7e9 or 1.5T")
	}
	return v * mult, nil
}

// FormatCount writes a count as ParseCount reads it, with the largest exact suffix.
func FormatCount(v float64) string {
	for _, s := range []struct {
		suf string
		m   float64
	}{{"T", 1e12}, {"B", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if v >= s.m {
			return strconv.FormatFloat(v/s.m, 'f', -1, 64) + s.suf
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

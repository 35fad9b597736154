// Package buyer builds the buyer's report (`gpuprice report`, GET /api/v1/report):
// one self-contained document of a GPU's market price history, the analytics a
// negotiation needs and the method behind them, as HTML (charts drawn as inline
// SVG, nothing fetched), Markdown or PDF (the HTML printed by headless Chromium).
//
// Every figure comes from a query.Source, the code behind the CLI's commands and
// the API's endpoints: each section names the command that gives its numbers, and
// the tables are those commands' own rows.
package report

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Options are what the caller knows beyond the query.
type Options struct {
	// Store names the store the report was built from (CiteStore: no path, no
	// password).
	Store string
	// Snapshot, when set, cites the published snapshot (gpuprice publish) that
	// covers the report's window, its first and last day (UTC, inclusive): the CLI's
	// --snapshot DIR sets it to publish.Cite.
	Snapshot func(from, to time.Time) (*Snapshot, error)
	// Now is when the report is built (default time.Now).
	Now time.Time
}

// Snapshot cites a published, immutable snapshot of the data.
type Snapshot struct {
	Dir      string `json:"dir"`
	ID       string `json:"id"` // what publish's citation hashes (its manifests' hashes)
	From     string `json:"from"`
	To       string `json:"to"`
	Days     int    `json:"days"`    // published days of the window
	Missing  int    `json:"missing"` // days of the window not published
	Sentence string `json:"sentence"`
}

// Citation is how the report cites the data it was built from: the store, its
// newest run, and a SHA-256 over the data every section used (the JSON answers of
// the commands it names, in order), so that the same store and query give the same
// hash and any later change shows.
type Citation struct {
	Store      string       `json:"store"`
	NewestRun  *schemas.Run `json:"newest_run"`
	NewestSeen time.Time    `json:"newest_seen"` // newest sighting among the offers used
	DataSHA256 string       `json:"data_sha256"`
	Snapshot   *Snapshot    `json:"snapshot,omitempty"`
}

// Discount is a reservation's or commitment's discount against on-demand at one
// provider, over the like-for-like pairs (same SKU, region and zone priced both
// ways on the window's last day).
type Discount struct {
	Provider string   `json:"provider"`
	Pricing  string   `json:"pricing"`
	Pairs    int      `json:"pairs"`
	Median   *float64 `json:"median_pct"`
	Min      *float64 `json:"min_pct"`
	Max      *float64 `json:"max_pct"`
}

// Target is where a quoted price stands, like for like: among the offers of the
// same term in force on the window's last day, and against on-demand and spot for
// the same hours (never against the window's on-demand series-days).
type Target struct {
	Quote float64 `json:"quote"`
	Term  string  `json:"term"`
	Hours float64 `json:"hours"`
	GPUs  int     `json:"gpus"`
	// Verdict is the quote's place among the term's offers and its break-even
	// utilisations against on-demand and spot.
	Verdict analytics.Verdict `json:"verdict"`
	// Against are the like-for-like references and the quote's difference to each.
	Against []Versus `json:"against"`
	// TermOffers are the cheapest reserved and commitment offers of the same term
	// on the window's last day; TermMin and TermMedian their lowest and median.
	TermOffers []analytics.Offer `json:"term_offers"`
	TermMin    *float64          `json:"term_min"`
	TermMedian *float64          `json:"term_median"`
	// AtUtilisation is the quote against the on-demand median at the buyer's
	// utilisation over the term, per GPU (nil without on-demand offers).
	AtUtilisation *analytics.CostAt `json:"at_utilisation"`
	// SavingPerHour is quote − the term's cheapest offer per GPU-hour and
	// SavingOverTerm that over the term for GPUs GPUs; nil without a term offer;
	// negative when the quote is below it.
	SavingPerHour  *float64 `json:"saving_per_gpu_hour"`
	SavingOverTerm *float64 `json:"saving_over_term"`
}

// Versus is the quote against one reference price.
type Versus struct {
	Name  string   `json:"name"`
	Price *float64 `json:"price"`
	Diff  *float64 `json:"diff"`     // quote − price
	Pct   *float64 `json:"diff_pct"` // (quote − price) / price × 100
}

// Exclusion counts what the report left out and why.
type Exclusion struct {
	Reason string `json:"reason"`
	Rows   int    `json:"rows"`
	What   string `json:"what"`
}

// Report is the buyer's report: every section's data.
type Report struct {
	Query    query.ReportQuery `json:"-"`
	GPU      string            `json:"gpu"`
	Pricing  string            `json:"pricing"`
	Built    time.Time         `json:"built"`
	Matched  []schemas.Match   `json:"matched"`
	History  analytics.History `json:"history"`
	Cheapest []analytics.Offer `json:"cheapest"`
	// Kinds are the pricing kinds stored for the GPU (in the selection).
	Kinds     []string                     `json:"kinds"`
	KindOffer map[string][]analytics.Offer `json:"-"` // every offer of each kind on the last day
	// RecordedRows counts, per provider, the rows of the report's GPU loaded from a
	// recorded example (attrs origin "recorded"): provenance by row, whatever ran since.
	RecordedRows map[string]int `json:"-"`
	// TokensJob is the training job the token costs are of: the quote's GPUs.
	TokensJob analytics.Job `json:"-"`
	// SpotOffers are the spot offers on the last day (with a quote: its verdict).
	SpotOffers []analytics.Offer `json:"-"`
	Discounts  []Discount        `json:"discounts"`
	Spreads    query.Spreads     `json:"spreads"`
	// Spot is the volatility of the spot series (nil when none is stored).
	Spot      *query.Volatility      `json:"spot"`
	SpotQuery query.VolatilityQuery  `json:"-"`
	Tokens    query.Tokens           `json:"tokens"`
	Inference query.Inference        `json:"inference"`
	Index     []analytics.IndexPoint `json:"index"`
	Terms     query.Terms            `json:"terms"`
	// Risk is the interruption band in force at the report's time of each spot
	// series of the GPU; Availability each provider's stock of it over the window
	// (nil: the store keeps no signals).
	Risk         *query.RiskHistory   `json:"risk"`
	Availability *query.Availability  `json:"availability"`
	RiskCommand  string               `json:"-"` // the risk table's command (the section's is availability's)
	Sources      []query.SourceRow    `json:"sources"`
	Excluded     []Exclusion          `json:"excluded"`
	Target       *Target              `json:"target"`
	Citation     Citation             `json:"citation"`
	Commands     map[string]string    `json:"commands"`
	Providers    []string             `json:"providers"` // providers in the history
	NewestSeen   map[string]time.Time `json:"newest_seen"`
}

// Section ids, in the order the report shows them.
const (
	SecSummary    = "summary"
	SecMarket     = "market"
	SecCheapest   = "cheapest"
	SecDiscounts  = "discounts"
	SecTerms      = "terms"
	SecSpreads    = "spreads"
	SecVolatility = "volatility"
	SecTokens     = "tokens"
	SecInference  = "inference"
	SecIndex      = "index"
	SecRisk       = "risk"
	SecTarget     = "target"
	SecMethod     = "method"
)

// Titles are the sections' headings (the PDF's outline has them).
var Titles = map[string]string{
	SecSummary:    "Summary",
	SecMarket:     "Market price over time",
	SecCheapest:   "Cheapest offers now",
	SecDiscounts:  "Reserved and commitment discounts",
	SecTerms:      "Term curve: on-demand, spot and every commitment",
	SecSpreads:    "Hyperscaler and specialist spread",
	SecVolatility: "Spot volatility and drawdowns",
	SecTokens:     "Cost per 1B training tokens",
	SecInference:  "Cost per 1M output tokens (inference)",
	SecIndex:      "Reference index",
	SecRisk:       "Interruption risk and availability",
	SecTarget:     "Target price",
	SecMethod:     "Method and sources",
}

// Sections are the section ids in order (the target price only with a quote).
func (r *Report) Sections() []string {
	s := []string{SecSummary, SecMarket, SecCheapest, SecDiscounts, SecTerms, SecSpreads, SecVolatility, SecTokens,
		SecInference, SecIndex,
		SecRisk}
	if r.Target != nil {
		s = append(s, SecTarget)
	}
	return append(s, SecMethod)
}

// offersAll bounds the offers read per pricing kind for discounts and terms.
const offersAll = 1000

// Build computes the report from src. A parameter error is a *query.ParamError.
func Build(ctx context.Context, src query.Source, q query.ReportQuery, opt Options) (*Report, error) {
	now := opt.Now
	if now.IsZero() {
		now = time.Now().UTC()
	}
	rep := &Report{Query: q, Built: now.UTC().Truncate(time.Second), Commands: map[string]string{},
		KindOffer: map[string][]analytics.Offer{}, RecordedRows: map[string]int{},
		NewestSeen: map[string]time.Time{}}
	hash := sha256.New()
	used := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(hash, "%s\n%s\n", name, b)
		if os.Getenv("GPUPRICE_REPORT_DEBUG") != "" {
			fmt.Fprintf(os.Stderr, "%s %x\n", name, sha256.Sum256(b))
		}
	}
	at := q.At.UTC().Format(time.RFC3339)
	since := query.FormatSpan(q.Since)
	sel := cmdFlags("--region", q.Region, "--provider", q.Provider)

	// The history of the pricing kind asked for: the market chart, the percentiles,
	// the cheapest offers.
	hq := query.HistoryQuery{Filter: query.Filter{GPU: q.GPU, Pricing: q.Pricing, Region: q.Region, Provider: q.Provider},
		Since: q.Since, At: q.At, Cheapest: offersAll, Weight: q.Weight}
	hres, err := src.History(ctx, hq)
	if err != nil {
		return nil, err
	}
	used("history", hres.Data)
	rep.Matched = hres.Matched
	rep.History = hres.Data
	rep.GPU, rep.Pricing = hres.Data.GPU, hres.Data.Pricing
	rep.KindOffer[rep.Pricing] = hres.Data.Cheapest
	rep.Cheapest = hres.Data.Cheapest[:min(q.Cheapest, len(hres.Data.Cheapest))]
	for _, p := range hres.Data.Providers {
		rep.Providers = append(rep.Providers, p.Provider)
	}
	weight := cmdFlags("--weight", q.Weight)
	rep.Commands[SecMarket] = fmt.Sprintf("gpuprice history --gpu %s --pricing %s%s --since %s --at %s%s", rep.GPU,
		rep.Pricing, sel, since, at, weight)
	rep.Commands[SecCheapest] = rep.Commands[SecMarket] + fmt.Sprintf(" --cheapest %d", q.Cheapest)
	gpu := rep.GPU
	base := query.Filter{GPU: gpu, Region: q.Region, Provider: q.Provider}

	// The pricing kinds stored for the GPU, and what `prices` leaves out.
	all, err := src.Prices(ctx, query.PricesQuery{Filter: base, Stale: analytics.StaleAfter, AllSeries: true,
		IncludeDerived: true})
	if err != nil {
		return nil, err
	}
	used("prices-all", all.Data)
	current := analytics.CurrentOnly(slices.Clone(all.Data), analytics.StaleAfter)
	kinds := map[string]bool{}
	derived, floors, gpuOnly := 0, 0, 0
	for _, o := range all.Data {
		kinds[o.Pricing] = true
		if o.Attrs["origin"] == "recorded" {
			rep.RecordedRows[o.Provider]++
		}
	}
	for _, o := range current {
		switch schemas.BasisOf(o.PriceBasis) {
		case schemas.BasisDerived:
			derived++
		case schemas.BasisFloor:
			floors++
		}
		if schemas.ScopeOf(o.PriceScope) == schemas.ScopeGPUOnly {
			gpuOnly++
		}
	}
	for k := range kinds {
		rep.Kinds = append(rep.Kinds, k)
	}
	sort.Slice(rep.Kinds,
		func(i, j int) bool { return analytics.PricingRank(rep.Kinds[i]) < analytics.PricingRank(rep.Kinds[j]) })

	// Every offer of the other kinds on the window's last day: the discounts against
	// on-demand and the reserved offers of a quote's term.
	for _, k := range rep.Kinds {
		if _, done := rep.KindOffer[k]; done || k == schemas.Spot || k == schemas.LowPriority {
			continue
		}
		if k != schemas.OnDemand && schemas.TermHours(k) == 0 {
			continue
		}
		kq := hq
		kq.Pricing = k
		kr, err := src.History(ctx, kq)
		if err != nil {
			return nil, err
		}
		used("history-"+k, kr.Data.Cheapest)
		rep.KindOffer[k] = kr.Data.Cheapest
	}
	if q.Quote > 0 && kinds[schemas.Spot] {
		sq := hq
		sq.Pricing = schemas.Spot
		sr, err := src.History(ctx, sq)
		if err != nil {
			return nil, err
		}
		used("history-spot", sr.Data.Cheapest)
		rep.SpotOffers = sr.Data.Cheapest
	}
	rep.Discounts = discounts(rep.KindOffer)
	rep.Commands[SecDiscounts] = fmt.Sprintf(
		"gpuprice history --gpu %s --pricing KIND%s --since %s --at %s --cheapest %d (KIND: on_demand and each reserved_* "+
			"/ commitment_*)",
		gpu, sel, since, at, offersAll)
	for _, offers := range rep.KindOffer {
		for _, o := range offers {
			if o.LastSeen.After(rep.NewestSeen[o.Provider]) {
				rep.NewestSeen[o.Provider] = o.LastSeen
			}
			if o.LastSeen.After(rep.Citation.NewestSeen) {
				rep.Citation.NewestSeen = o.LastSeen
			}
		}
	}

	// The term curve of the offers in force on the window's last day.
	tres, err := src.Terms(ctx, query.TermsQuery{Filter: query.Filter{GPU: gpu, Region: q.Region, Provider: q.Provider},
		At: q.At})
	if err != nil {
		return nil, err
	}
	used("terms", tres.Data)
	rep.Terms = tres.Data
	rep.Commands[SecTerms] = fmt.Sprintf("gpuprice terms --gpu %s%s --at %s", gpu, sel, at)

	// Spreads and the index: the whole market of the GPU and pricing kind.
	sres, err := src.Spreads(ctx, query.SpreadsQuery{Filter: query.Filter{GPU: gpu, Pricing: rep.Pricing}, Since: q.Since,
		At:     q.At,
		Weight: q.Weight})
	if err != nil {
		return nil, err
	}
	used("spreads", sres.Data)
	rep.Spreads = sres.Data
	rep.Commands[SecSpreads] = fmt.Sprintf("gpuprice spreads --gpu %s --pricing %s --since %s --at %s%s", gpu, rep.Pricing,
		since, at, weight)

	ires, err := src.Index(ctx, query.IndexQuery{Filter: query.Filter{GPU: gpu, Pricing: rep.Pricing}, Since: q.Since,
		At:     q.At,
		Weight: q.Weight})
	if err != nil {
		return nil, err
	}
	used("index", ires.Data)
	rep.Index = ires.Data
	rep.Commands[SecIndex] = fmt.Sprintf("gpuprice index --gpu %s --pricing %s --since %s --at %s%s", gpu, rep.Pricing,
		since, at, weight)

	// Spot volatility over the window: daily bars beyond two weeks, hourly within.
	bar := store.Daily
	if q.Since <= 14*24*time.Hour {
		bar = store.Hourly
	}
	rep.SpotQuery = query.VolatilityQuery{Filter: query.Filter{GPU: gpu, Pricing: schemas.Spot, Region: q.Region,
		Provider: q.Provider},
		Window: q.Since, Bar: bar, At: q.At, By: analytics.BySeries}
	barName := "1d"
	if bar == store.Hourly {
		barName = "1h"
	}
	rep.Commands[SecVolatility] = fmt.Sprintf("gpuprice volatility --gpu %s --pricing spot%s --window %s --bar %s --at %s",
		gpu, sel, since, barName, at)
	if kinds[schemas.Spot] {
		vres, err := src.Volatility(ctx, rep.SpotQuery)
		if err != nil {
			return nil, err
		}
		used("volatility", vres.Data)
		rep.Spot = &vres.Data
	}

	// Interruption risk (the bands in force at the report's time) and availability
	// (each provider's stock over the window) of the GPU's offers.
	atT := q.At
	if atT.IsZero() {
		atT = now
	}
	rk, err := src.Risk(ctx, query.RiskQuery{GPU: gpu, Provider: q.Provider, Region: q.Region, Since: atT,
		Until: atT.Add(time.Second)})
	switch {
	case errors.Is(err, store.ErrNoSignals):
	case err != nil:
		return nil, err
	default:
		used("risk", rk.Data)
		rep.Risk = &rk.Data
		av, err := src.Availability(ctx, query.AvailabilityQuery{GPU: gpu, Provider: q.Provider, Region: q.Region,
			Since: atT.Add(-q.Since), Until: atT, By: "gpu"})
		if err != nil {
			return nil, err
		}
		used("availability", av.Data)
		rep.Availability = &av.Data
	}
	rep.Commands[SecRisk] = fmt.Sprintf("gpuprice availability --gpu %s%s --by gpu --since %s --until %s", gpu, sel,
		atT.Add(-q.Since).UTC().Format(time.RFC3339), at)
	rep.RiskCommand = fmt.Sprintf("gpuprice risk --gpu %s%s --since %s --until %s", gpu, sel, at,
		atT.Add(time.Second).UTC().Format(time.RFC3339))

	// $ per 1B training tokens of the offers now.
	// The job is the quote's GPUs (one node of the offer when they fit it).
	rep.TokensJob = analytics.Job{GPUs: q.GPUs}
	tq := query.TokensQuery{Filter: query.Filter{GPU: gpu, Pricing: rep.Pricing, Region: q.Region, Provider: q.Provider},
		Params: q.ModelParams, Precision: analytics.BF16, Limit: q.Cheapest, Job: rep.TokensJob}
	kres, err := src.Tokens(ctx, tq)
	if err != nil {
		return nil, err
	}
	used("tokens", kres.Data)
	rep.Tokens = kres.Data
	rep.Commands[SecTokens] = fmt.Sprintf(
		"gpuprice tokens --gpu %s --pricing %s%s --params %s --precision bf16 --limit %d --gpus %d",
		gpu, rep.Pricing, sel, strconv.FormatFloat(q.ModelParams, 'g', -1, 64), q.Cheapest, q.GPUs)

	// $ per 1M output tokens of serving the model on the offers now (fp16 weights,
	// batch 1: the bandwidth-bound floor of a single stream).
	iq := query.InferenceQuery{Filter: query.Filter{GPU: gpu, Pricing: rep.Pricing, Region: q.Region,
		Provider: q.Provider},
		Params: q.ModelParams, Precision: analytics.FP16, Batch: 1, Limit: q.Cheapest}
	ires2, err := src.Inference(ctx, iq)
	if err != nil {
		return nil, err
	}
	used("inference", ires2.Data)
	rep.Inference = ires2.Data
	rep.Commands[SecInference] = fmt.Sprintf(
		"gpuprice inference --gpu %s --pricing %s%s --params %s --precision fp16 --limit %d",
		gpu, rep.Pricing, sel, strconv.FormatFloat(q.ModelParams, 'g', -1, 64), q.Cheapest)

	// The method: sources, their last runs, what was left out.
	src2, err := src.Sources(ctx, query.SourcesQuery{})
	if err != nil {
		return nil, err
	}
	rep.Sources = src2.Data
	runs, err := src.Runs(ctx, query.RunsQuery{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(runs.Data) > 0 {
		rep.Citation.NewestRun = &runs.Data[0]
	}
	quar, err := src.Quarantine(ctx, query.QuarantineQuery{Limit: 5000})
	if err != nil {
		return nil, err
	}
	rep.Excluded = exclusions(gpu, quar.Data, len(all.Data)-len(current), derived, floors, gpuOnly)
	used("excluded", rep.Excluded)
	rep.Commands[SecMethod] = fmt.Sprintf(
		"gpuprice sources; gpuprice prices --gpu %s%s --all-series --include-derived; gpuprice quarantine --limit 5000", gpu,
		sel)

	if q.Quote > 0 {
		rep.Target = target(q, rep)
	}
	rep.Citation.Store = opt.Store
	if opt.Snapshot != nil {
		snap, err := opt.Snapshot(rep.History.From, rep.History.To.Add(-time.Second))
		if err != nil {
			return nil, err
		}
		rep.Citation.Snapshot = snap
	}
	rep.Citation.DataSHA256 = hex.EncodeToString(hash.Sum(nil))
	return rep, nil
}

// cmdFlags writes the non-empty flags as command-line text (" --region x").
func cmdFlags(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			fmt.Fprintf(&b, " %s %s", kv[i], kv[i+1])
		}
	}
	return b.String()
}

// discounts pairs each reserved and commitment offer with its on-demand twin
// (analytics.CommitmentDiscount) and summarises the discounts per provider and kind.
func discounts(kinds map[string][]analytics.Offer) []Discount {
	type pk struct{ provider, pricing string }
	acc := map[pk][]float64{}
	for k, offers := range kinds {
		if k == schemas.OnDemand {
			continue
		}
		for _, o := range offers {
			d := analytics.CommitmentDiscount(kinds[schemas.OnDemand], []analytics.Offer{o})
			acc[pk{o.Provider, k}] = append(acc[pk{o.Provider, k}], d...)
		}
	}
	for key, v := range acc {
		if len(v) == 0 {
			delete(acc, key)
		}
	}
	var out []Discount
	for key, v := range acc {
		sort.Float64s(v)
		out = append(out, Discount{Provider: key.provider, Pricing: key.pricing, Pairs: len(v),
			Median: analytics.Opt(analytics.Median(v)), Min: analytics.Opt(v[0]), Max: analytics.Opt(v[len(v)-1])})
	}
	// Providers with reserved offers but no on-demand twin: listed, as missing.
	for k, offers := range kinds {
		if k == schemas.OnDemand {
			continue
		}
		for _, o := range offers {
			if _, ok := acc[pk{o.Provider, k}]; !ok {
				acc[pk{o.Provider, k}] = nil
				out = append(out, Discount{Provider: o.Provider, Pricing: k})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return analytics.PricingRank(out[i].Pricing) < analytics.PricingRank(out[j].Pricing)
	})
	return out
}

// exclusions counts what the report's figures leave out.
func exclusions(gpu string, quarantined []schemas.Quarantined, stale, derived, floors, gpuOnly int) []Exclusion {
	suspect := map[string]int{}
	for _, q := range quarantined {
		var raw struct {
			GPU string `json:"gpu"`
		}
		if json.Unmarshal([]byte(q.Raw), &raw) == nil && raw.GPU == gpu {
			suspect[q.Reason]++
		}
	}
	var out []Exclusion
	var reasons []string
	for r := range suspect {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		out = append(out, Exclusion{Reason: "suspect", Rows: suspect[r], What: "quarantined at ingest, never stored: " + r})
	}
	if len(reasons) == 0 {
		out = append(out,
			Exclusion{Reason: "suspect", Rows: 0,
				What: "no row of this GPU is in the quarantine (rows failing validation are quarantined at ingest, never stored)"})
	}
	out = append(out,
		Exclusion{Reason: "derived", Rows: derived,
			What: "prices computed by a documented rule, not listed by the provider (left out of percentiles, cheapest " +
				"offers, spreads and the index)"},
		Exclusion{Reason: "floor", Rows: floors, What: `"from $X" floors: a lower bound, not the price of one offer`},
		Exclusion{Reason: "gpu-only", Rows: gpuOnly,
			What: "GPU-only prices (the VM they attach to is not included): not comparable with instance prices"},
		Exclusion{Reason: "stale", Rows: stale,
			What: fmt.Sprintf("series last seen more than %s before their provider's newest sighting: no longer on offer",
				query.FormatSpan(analytics.StaleAfter))},
	)
	return out
}

// target places the quote like for like: among the term's offers in force on the
// window's last day, then against today's on-demand and spot offers.
func target(q query.ReportQuery, rep *Report) *Target {
	t := &Target{Quote: q.Quote, Term: q.Term, Hours: query.TermHours(q.Term), GPUs: q.GPUs}
	for _, k := range TermKinds(q.Term) {
		t.TermOffers = append(t.TermOffers, rep.KindOffer[k]...)
	}
	sort.SliceStable(t.TermOffers, func(i, j int) bool { return t.TermOffers[i].Price < t.TermOffers[j].Price })
	t.Verdict = analytics.QuoteVerdictWeighted(q.Quote, q.Term, t.Hours, t.TermOffers, rep.KindOffer[schemas.OnDemand],
		rep.SpotOffers,
		q.Weight)
	t.TermMin, t.TermMedian = nil, t.Verdict.TermMedian
	if c := t.Verdict.Cheapest; c != nil {
		t.TermMin = analytics.Opt(c.Price)
	}
	w := analytics.TermWords(q.Term)
	t.Against = append(t.Against, versus("cheapest "+w+" offer", q.Quote, t.TermMin),
		versus("median "+w+" offer", q.Quote, t.TermMedian),
		versus("on-demand median today", q.Quote, t.Verdict.OnDemand),
		versus("spot median today", q.Quote, t.Verdict.Spot))
	if od := t.Verdict.OnDemand; od != nil && *od > 0 {
		u := q.Utilisation
		if u == 0 {
			u = 1
		}
		if c, err := analytics.CostAtUtilisation(q.Quote, *od, t.Hours, u); err == nil {
			t.AtUtilisation = &c
		}
	}
	if len(t.TermOffers) > q.Cheapest {
		t.TermOffers = t.TermOffers[:q.Cheapest]
	}
	if t.TermMin != nil {
		d := q.Quote - *t.TermMin
		t.SavingPerHour = &d
		total := d * t.Hours * float64(q.GPUs)
		t.SavingOverTerm = &total
	}
	return t
}

// TermKinds are the pricing kinds of a term (query.TermPricing).
func TermKinds(term string) []string { return query.TermPricing(term) }

func versus(name string, quote float64, v *float64) Versus {
	out := Versus{Name: name, Price: v}
	if v != nil {
		d := quote - *v
		out.Diff = &d
		if *v > 0 {
			p := d / *v * 100
			out.Pct = &p
		}
	}
	return out
}

// CiteStore names a store for a report that may leave the building: the scheme
// and, for an embedded file, its name only (no local path); for a server, its
// host and database with any password removed.
func CiteStore(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return "(store)"
	}
	if u.Scheme == "duckdb" {
		return "duckdb:" + path.Base(u.Path)
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

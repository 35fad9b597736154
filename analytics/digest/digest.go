// Package digest builds the weekly digest (`gpuprice digest`, sent by `serve` on
// digest.schedule): for the GPUs a team follows, what moved in the week — median and
// cheapest by tier, the week-over-week change of the matched-sample chained index,
// the largest spot moves, the tier spreads, interruption-band changes, the sources
// that failed — as Markdown, HTML or Slack Block Kit blocks.
//
// Every figure comes from a query.Source (the read model of the CLI and the API),
// and each section names the command that prints its numbers.
package digest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// Query is what a digest is of.
type Query struct {
	// GPUs are the followed GPUs, as people type them ("h100" is every H100).
	GPUs []string
	// Pricing are the pricing kinds shown (default on_demand and spot).
	Pricing []string
	// Since is the week (default 7d), ending At.
	Since time.Duration
	At    time.Time
}

// Options are what the caller knows beyond the query.
type Options struct {
	// PublicURL is the web app's root (serve.public_url): each section links to its
	// chart under it. Empty: no links.
	PublicURL string
	// Risk reads the interruption-band changes of the week (query.Risk over the
	// store); nil when the source keeps no signals (a remote server).
	Risk func(ctx context.Context, q query.RiskQuery) (query.RiskHistory, error)
	// Now is when the digest is built (default time.Now).
	Now time.Time
}

// Digest is the week's digest: every section's figures and commands.
type Digest struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Since string    `json:"since"`
	Built time.Time `json:"built"`
	GPUs  []GPU     `json:"gpus"`
	// Failed are the runs of the week that failed or were degraded.
	Failed        []schemas.Run      `json:"failed_runs"`
	RunsCommand   string             `json:"runs_command"`
	RunsURL       string             `json:"runs_url,omitempty"`
	Risk          []query.RiskChange `json:"risk_changes"`
	RiskCommand   string             `json:"risk_command,omitempty"`
	RiskCollected bool               `json:"risk_collected"`
	// Recorded counts, per provider, the series of a recorded example read: the
	// digest is then not of today's prices.
	Recorded map[string]int `json:"recorded,omitempty"`
}

// GPU is the digest of one followed GPU.
type GPU struct {
	GPU     string                    `json:"gpu"`
	Typed   string                    `json:"typed"`
	Lines   []Line                    `json:"lines"`
	Spreads []analytics.SpreadSummary `json:"spreads"`
	// SpreadsCommand prints the spreads; SpreadsURL is their chart.
	SpreadsCommand string `json:"spreads_command"`
	SpreadsURL     string `json:"spreads_url,omitempty"`
	SpotMoves      []Move `json:"spot_moves"`
	SpotCommand    string `json:"spot_command"`
	SpotURL        string `json:"spot_url,omitempty"`
}

// Line is one pricing kind of a GPU.
type Line struct {
	Pricing string `json:"pricing"`
	// Tiers are the median and cheapest offer of each tier on the week's last day.
	Tiers   []Tier `json:"tiers"`
	Command string `json:"command"` // gpuprice history …
	// Changes are the week-over-week changes of the chained index per group.
	Changes      []Change `json:"changes"`
	IndexCommand string   `json:"index_command"`
	URL          string   `json:"url,omitempty"`
	IndexURL     string   `json:"index_url,omitempty"`
}

// Tier is one tier's figures on the last day.
type Tier struct {
	Tier     string  `json:"tier"`
	Series   int     `json:"series"`
	Median   float64 `json:"median_usd_gpu_hour"`
	Cheapest float64 `json:"cheapest_usd_gpu_hour"`
	Provider string  `json:"cheapest_provider"`
	Region   string  `json:"cheapest_region"`
}

// Change is the chained index of one group (hyperscaler, others) from the first
// day of the week to the last: moved only by the series priced on consecutive days.
type Change struct {
	Group   string    `json:"group"`
	FromDay time.Time `json:"from_day"`
	ToDay   time.Time `json:"to_day"`
	From    float64   `json:"from_usd_gpu_hour"`
	To      float64   `json:"to_usd_gpu_hour"`
	// Pct is (To ÷ From − 1) × 100; nil when no series was priced on two
	// consecutive days of the week (nothing matched: no change can be told).
	Pct *float64 `json:"change_pct"`
	// Matched is the most series matched on one day of the week.
	Matched int `json:"matched"`
}

// Move is one spot series' move in the week (`gpuprice volatility`).
type Move struct {
	Provider    string  `json:"provider"`
	SKU         string  `json:"sku"`
	Region      string  `json:"region"`
	Min         float64 `json:"min"`
	Max         float64 `json:"max"`
	Close       float64 `json:"close"`
	RangePct    float64 `json:"range_pct"`
	DrawdownPct float64 `json:"max_drawdown_pct"`
	Changes     int     `json:"changes"`
}

// DefaultSince is the digest's week.
const DefaultSince = 7 * 24 * time.Hour

// maxMoves and maxRows bound the lists, so that the digest reads in a minute.
const (
	maxMoves = 3
	maxRows  = 5
)

// Build computes the digest from src.
func Build(ctx context.Context, src query.Source, q Query, opt Options) (*Digest, error) {
	if len(q.GPUs) == 0 {
		return nil, &query.ParamError{Param: "gpu",
			Msg: "give the GPUs the digest follows (--gpu, or digest.gpus in the configuration)"}
	}
	if q.Since <= 0 {
		q.Since = DefaultSince
	}
	if len(q.Pricing) == 0 {
		q.Pricing = []string{schemas.OnDemand, schemas.Spot}
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	at := q.At.UTC()
	d := &Digest{To: at, From: at.Add(-q.Since), Since: query.FormatSpan(q.Since), Built: now.UTC().Truncate(time.Second),
		Recorded: map[string]int{}}
	atFlag := at.Format(time.RFC3339)
	since := d.Since
	note := func(m map[string]int) {
		for p, n := range m {
			d.Recorded[p] = max(d.Recorded[p], n)
		}
	}
	var gpus [][2]string // canonical, typed
	for _, typed := range q.GPUs {
		res, err := src.History(ctx, query.HistoryQuery{Filter: query.Filter{GPU: typed, Pricing: q.Pricing[0]},
			Since: q.Since, At: at, Cheapest: 0})
		var pe *query.ParamError
		switch {
		case errors.As(err, &pe) && pe.Param == "gpu" && len(pe.Suggestions) > 0:
			for _, g := range pe.Suggestions { // a family: each of its GPUs
				gpus = append(gpus, [2]string{g, typed})
			}
		case err != nil:
			return nil, err
		default:
			gpus = append(gpus, [2]string{res.Data.GPU, typed})
		}
	}
	for _, g := range gpus {
		gd, err := buildGPU(ctx, src, q, opt, g[0], g[1], atFlag, since, note)
		if err != nil {
			return nil, err
		}
		d.GPUs = append(d.GPUs, gd)
	}
	runs, err := src.Runs(ctx, query.RunsQuery{Since: d.From, Until: d.To})
	if err != nil {
		return nil, err
	}
	d.Failed = []schemas.Run{}
	for _, r := range runs.Data {
		if r.Status == schemas.RunFailed || r.Status == schemas.RunDegraded {
			d.Failed = append(d.Failed, r)
		}
	}
	d.RunsCommand = fmt.Sprintf("gpuprice runs --since %s --until %s --limit 0", d.From.Format(time.RFC3339), atFlag)
	d.RunsURL = link(opt.PublicURL, "/sources", nil)
	d.Risk = []query.RiskChange{}
	if opt.Risk != nil {
		h, err := opt.Risk(ctx, query.RiskQuery{Since: d.From, Until: d.To, ChangesOnly: true})
		if err != nil {
			return nil, err
		}
		d.RiskCollected = true
		d.Risk = h.Changes
		d.RiskCommand = fmt.Sprintf("gpuprice risk --changes --since %s --until %s", d.From.Format(time.RFC3339), atFlag)
	}
	if len(d.Recorded) == 0 {
		d.Recorded = nil
	}
	return d, nil
}

func buildGPU(ctx context.Context, src query.Source, q Query, opt Options, gpu, typed, at, since string,
	note func(map[string]int)) (GPU, error) {
	g := GPU{GPU: gpu, Typed: typed, Spreads: []analytics.SpreadSummary{}, SpotMoves: []Move{}}
	for _, pricing := range q.Pricing {
		hres, err := src.History(ctx, query.HistoryQuery{Filter: query.Filter{GPU: gpu, Pricing: pricing},
			Since: q.Since, At: q.At, Cheapest: 1000})
		if err != nil {
			return g, err
		}
		note(hres.Recorded)
		h := hres.Data
		if h.Overall.Series == 0 {
			continue
		}
		ln := Line{Pricing: pricing, Tiers: tiersOf(h),
			Command: fmt.Sprintf("gpuprice history --gpu %s --pricing %s --since %s --at %s", gpu, pricing, since, at),
			URL:     link(opt.PublicURL, "/series", url.Values{"gpu": {gpu}, "pricing": {pricing}})}
		// The week's first day is compared with the day a week before it: one day more.
		span := q.Since + 24*time.Hour
		ires, err := src.Index(ctx, query.IndexQuery{Filter: query.Filter{GPU: gpu, Pricing: pricing}, Since: span, At: q.At})
		if err != nil {
			return g, err
		}
		note(ires.Recorded)
		ln.Changes = changesOf(ires.Data)
		ln.IndexCommand = fmt.Sprintf("gpuprice index --gpu %s --pricing %s --since %s --at %s", gpu, pricing,
			query.FormatSpan(span), at)
		ln.IndexURL = link(opt.PublicURL, "/index",
			url.Values{"gpu": {gpu}, "pricing": {pricing}, "since": {query.FormatSpan(span)}})
		g.Lines = append(g.Lines, ln)
	}
	sres, err := src.Spreads(ctx, query.SpreadsQuery{Filter: query.Filter{GPU: gpu}, Since: q.Since, At: q.At})
	if err != nil {
		return g, err
	}
	note(sres.Recorded)
	for _, s := range sres.Data.Summary {
		if slices.Contains(q.Pricing, s.Pricing) {
			g.Spreads = append(g.Spreads, s)
		}
	}
	g.SpreadsCommand = fmt.Sprintf("gpuprice spreads --gpu %s --since %s --at %s", gpu, since, at)
	g.SpreadsURL = link(opt.PublicURL, "/spreads", url.Values{"gpu": {gpu}, "since": {since}})
	vres, err := src.Volatility(ctx, query.VolatilityQuery{Filter: query.Filter{GPU: gpu, Pricing: schemas.Spot},
		Window: q.Since, Bar: time.Hour, At: q.At, By: analytics.BySeries})
	if err != nil {
		return g, err
	}
	note(vres.Recorded)
	g.SpotMoves = movesOf(vres.Data.Series)
	g.SpotCommand = fmt.Sprintf("gpuprice volatility --gpu %s --pricing spot --window %s --bar 1h --at %s", gpu, since, at)
	g.SpotURL = link(opt.PublicURL, "/series", url.Values{"gpu": {gpu}, "pricing": {schemas.Spot}})
	return g, nil
}

// tiersOf is the median (History.Daily's tier rows) and the cheapest offer of each
// tier on the history's last day.
func tiersOf(h analytics.History) []Tier {
	var last time.Time
	for _, d := range h.Daily {
		if d.Group == "tier" && d.Day.After(last) {
			last = d.Day
		}
	}
	var out []Tier
	for _, d := range h.Daily {
		if d.Group != "tier" || !d.Day.Equal(last) {
			continue
		}
		t := Tier{Tier: d.Name, Series: d.Series, Median: d.Median, Cheapest: d.Min}
		for _, o := range h.Cheapest { // cheapest first
			if o.Tier == d.Name {
				t.Cheapest, t.Provider, t.Region = o.Price, o.Provider, o.Region
				break
			}
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Tier < out[j].Tier })
	return out
}

// changesOf is each group's chained index from its first day to its last.
func changesOf(points []analytics.IndexPoint) []Change {
	byGroup := map[string][]analytics.IndexPoint{}
	var groups []string
	for _, p := range points { // sorted by group, then day
		if byGroup[p.Group] == nil {
			groups = append(groups, p.Group)
		}
		byGroup[p.Group] = append(byGroup[p.Group], p)
	}
	out := []Change{}
	for _, grp := range groups {
		ps := byGroup[grp]
		first, last := ps[0], ps[len(ps)-1]
		c := Change{Group: grp, FromDay: first.Day, ToDay: last.Day, From: first.Chained, To: last.Chained}
		for _, p := range ps[1:] {
			c.Matched = max(c.Matched, p.Matched)
		}
		if c.Matched > 0 && first.Chained > 0 {
			pct := analytics.Round((last.Chained/first.Chained-1)*100, 4)
			c.Pct = &pct
		}
		out = append(out, c)
	}
	return out
}

// movesOf is the spot series that moved most in the week (by range), at most
// maxMoves of them.
func movesOf(vs []analytics.SeriesVolatility) []Move {
	out := []Move{}
	for _, v := range vs {
		if v.Changes == 0 || !v.RangeDefined() {
			continue
		}
		out = append(out, Move{Provider: v.Provider, SKU: v.SKU, Region: v.Region, Min: v.Min, Max: v.Max, Close: v.Close,
			RangePct: analytics.Round(v.Range*100, 4), DrawdownPct: analytics.Round(v.MaxDrawdown*100, 4), Changes: v.Changes})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].RangePct > out[j].RangePct })
	if len(out) > maxMoves {
		out = out[:maxMoves]
	}
	return out
}

// link is the web app's view path under base, "" without base.
func link(base, path string, v url.Values) string {
	if base == "" {
		return ""
	}
	u := strings.TrimRight(base, "/") + path
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

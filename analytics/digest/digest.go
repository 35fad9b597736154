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
	"github.com/gpuprice/gpuprice/store"
	"mvdan.cc/sh/v3/syntax"
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
}

// Digest is the week's digest: every section's figures and commands.
type Digest struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Since string    `json:"since"`
	GPUs  []GPUWeek `json:"gpus"`
	// Failed are the sources with runs of the week that failed, were degraded or
	// were interrupted.
	Failed        []FailedSource     `json:"failed_sources"`
	RunsCommand   string             `json:"runs_command"`
	RunsURL       string             `json:"runs_url,omitempty"`
	Risk          []query.RiskChange `json:"risk_changes"`
	RiskCommand   string             `json:"risk_command,omitempty"`
	RiskCollected bool               `json:"risk_collected"`
	// Recorded counts, per provider, the series of a recorded example read: the
	// digest is then not of today's prices.
	Recorded map[string]int `json:"recorded,omitempty"`
}

// FailedSource is a source whose runs of the week did not all end ok.
type FailedSource struct {
	Source string `json:"source"`
	// Runs are its runs that started in the week; Failed how many of them failed,
	// were degraded or were interrupted.
	Runs   int `json:"runs"`
	Failed int `json:"failed"`
	// Last is the newest of the failed ones (its status and error).
	Last schemas.Run `json:"last"`
}

// GPUWeek is the digest of one followed GPU.
type GPUWeek struct {
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

// Move is one spot series' move in the week, from the price in force when the
// week began (the one carried in from before it, else the week's first price) to
// its last, as the alerts' spot_move computes it (analytics.SeriesMoveOf).
type Move struct {
	Provider string `json:"provider"`
	SKU      string `json:"sku"`
	Region   string `json:"region"`
	Zone     string `json:"zone"`
	// From is the reference price and FromAt the start of its hourly bar;
	// CarriedIn says it was in force before the week began.
	From      float64   `json:"from_usd_gpu_hour"`
	FromAt    time.Time `json:"from_at"`
	CarriedIn bool      `json:"carried_in"`
	To        float64   `json:"to_usd_gpu_hour"`
	ToAt      time.Time `json:"to_at"`
	// MovePct is (To ÷ From − 1) × 100.
	MovePct float64 `json:"move_pct"`
	// Low and High are the lowest and highest prices from From on; Changes the
	// price changes since it.
	Low     float64 `json:"low_usd_gpu_hour"`
	High    float64 `json:"high_usd_gpu_hour"`
	Changes int     `json:"changes"`
	// Command prints the series (its carried_in bar and the week's bars); URL is
	// its chart.
	Command string `json:"command"`
	URL     string `json:"url,omitempty"`
}

// DefaultSince is the digest's week.
const DefaultSince = 7 * 24 * time.Hour

// maxMoves and maxRows bound the lists, so that the digest reads in a minute.
const (
	maxMoves = 3
	maxRows  = 5
)

// Answer is the digest as the read model answers (the API's /api/v1/digest, the
// MCP tool digest): the digest, what each followed GPU resolved to and whether a
// recorded example was read.
func Answer(ctx context.Context, src query.Source, q Query, opt Options) (query.Result[*Digest], error) {
	if c, ok := query.Unwrap(src).(*query.Client); ok { // a running serve builds it
		var res query.Result[*Digest]
		err := c.Get(ctx, "digest", q.Values(), &res)
		return res, err
	}
	d, matched, err := build(ctx, src, q, opt)
	return query.Result[*Digest]{Data: d, Matched: matched, Recorded: d.recordedOrNil()}, err
}

// Build computes the digest from src: over a store's reader, or the /api/v1/digest
// of the running server src is a client of.
func Build(ctx context.Context, src query.Source, q Query, opt Options) (*Digest, error) {
	res, err := Answer(ctx, src, q, opt)
	return res.Data, err
}

func (d *Digest) recordedOrNil() map[string]int {
	if d == nil || len(d.Recorded) == 0 {
		return nil
	}
	return d.Recorded
}

func build(ctx context.Context, src query.Source, q Query, opt Options) (*Digest, []schemas.Match, error) {
	if len(q.GPUs) == 0 {
		return nil, nil, &query.ParamError{Param: "gpu",
			Msg: "give the GPUs the digest follows (--gpu, or digest.gpus in the configuration)"}
	}
	if q.Since <= 0 {
		q.Since = DefaultSince
	}
	if len(q.Pricing) == 0 {
		q.Pricing = []string{schemas.OnDemand, schemas.Spot}
	}
	at := q.At.UTC()
	q.At = at
	d := &Digest{To: at, From: at.Add(-q.Since), Since: query.FormatSpan(q.Since), Recorded: map[string]int{}}
	atFlag := at.Format(time.RFC3339)
	since := d.Since
	note := func(m map[string]int) {
		for p, n := range m {
			d.Recorded[p] = max(d.Recorded[p], n)
		}
	}
	var matched []schemas.Match
	var gpus [][2]string // canonical, typed
	for _, typed := range q.GPUs {
		res, err := src.History(ctx, query.HistoryQuery{Filter: query.Filter{GPU: typed, Pricing: q.Pricing[0]},
			Since: q.Since, At: at, Cheapest: 0})
		var pe *query.ParamError
		switch {
		case errors.As(err, &pe) && pe.Param == "gpu" && len(pe.Suggestions) > 0:
			matched = append(matched, schemas.Match{Kind: "gpu", Input: typed, Names: pe.Suggestions, How: "family"})
			for _, g := range pe.Suggestions { // a family: each of its GPUs
				gpus = append(gpus, [2]string{g, typed})
			}
		case err != nil:
			return nil, nil, err
		default:
			for _, m := range res.Matched {
				if m.Kind == "gpu" {
					matched = append(matched, m)
				}
			}
			gpus = append(gpus, [2]string{res.Data.GPU, typed})
		}
	}
	for _, g := range gpus {
		gd, err := buildGPU(ctx, src, q, opt, g[0], g[1], atFlag, since, note)
		if err != nil {
			return nil, nil, err
		}
		d.GPUs = append(d.GPUs, gd)
	}
	runs, err := src.Runs(ctx, query.RunsQuery{Since: d.From, Until: d.To})
	if err != nil {
		return nil, nil, err
	}
	d.Failed = failedSources(runs.Data)
	d.RunsCommand = command("runs", "--since", d.From.Format(time.RFC3339), "--until", atFlag, "--limit", "0")
	d.RunsURL = link(opt.PublicURL, "/sources", nil)
	d.Risk = []query.RiskChange{}
	if r, ok := query.Unwrap(src).(*query.Reader); ok {
		if _, ok := r.Store.(store.Signals); ok {
			// Only the offers of the followed GPUs, canonical, as the command names them.
			canon := make([]string, len(gpus))
			for i, g := range gpus {
				canon[i] = g[0]
			}
			h, err := query.Risk(ctx, r.Store, query.RiskQuery{Since: d.From, Until: d.To, ChangesOnly: true}, canon)
			if err != nil {
				return nil, nil, err
			}
			d.RiskCollected = true
			d.Risk = h.Changes
			d.RiskCommand = command("risk", "--changes", "--gpu", strings.Join(canon, ","), "--since",
				d.From.Format(time.RFC3339),
				"--until", atFlag)
		}
	}
	if len(d.Recorded) == 0 {
		d.Recorded = nil
	}
	return d, nonNil(matched), nil
}

// command is the gpuprice command line of args, each argument quoted for bash (and
// zsh, ksh: $'…' for control characters) where it needs it: SKUs, regions and zones are what providers and hosts
// write ("RTX 4090", "$(…)"), and the line is there to be pasted. An argument the
// shell cannot hold (a NUL byte) is dropped from the line with a note in its place.
func command(args ...string) string {
	var b strings.Builder
	b.WriteString("gpuprice")
	for _, a := range args {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = "'<unquotable argument>'"
		}
		b.WriteString(" " + q)
	}
	return b.String()
}

// failedSources are the sources with a run that failed, was degraded or was
// interrupted, in source order, each with its runs counted and its newest failed
// one.
func failedSources(runs []schemas.Run) []FailedSource {
	bySource := map[string]*FailedSource{}
	var order []string
	for _, r := range runs {
		f := bySource[r.Source]
		if f == nil {
			f = &FailedSource{Source: r.Source}
			bySource[r.Source] = f
			order = append(order, r.Source)
		}
		f.Runs++
		switch r.Status {
		case schemas.RunFailed, schemas.RunDegraded, schemas.RunInterrupted:
			f.Failed++
			if f.Failed == 1 || r.StartedAt.After(f.Last.StartedAt) {
				f.Last = r
			}
		}
	}
	sort.Strings(order)
	out := []FailedSource{}
	for _, s := range order {
		if f := bySource[s]; f.Failed > 0 {
			out = append(out, *f)
		}
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func buildGPU(ctx context.Context, src query.Source, q Query, opt Options, gpu, typed, at, since string,
	note func(map[string]int)) (GPUWeek, error) {
	g := GPUWeek{GPU: gpu, Typed: typed, Spreads: []analytics.SpreadSummary{}, SpotMoves: []Move{}}
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
			Command: command("history", "--gpu", gpu, "--pricing", pricing, "--since", since, "--at", at),
			URL:     link(opt.PublicURL, "/series", url.Values{"gpu": {gpu}, "pricing": {pricing}})}
		// The week's first day is compared with the day a week before it: one day more.
		span := q.Since + 24*time.Hour
		ires, err := src.Index(ctx, query.IndexQuery{Filter: query.Filter{GPU: gpu, Pricing: pricing}, Since: span, At: q.At})
		if err != nil {
			return g, err
		}
		note(ires.Recorded)
		ln.Changes = changesOf(ires.Data)
		ln.IndexCommand = command("index", "--gpu", gpu, "--pricing", pricing, "--since", query.FormatSpan(span),
			"--at", at)
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
	g.SpreadsCommand = command("spreads", "--gpu", gpu, "--since", since, "--at", at)
	g.SpreadsURL = link(opt.PublicURL, "/spreads", url.Values{"gpu": {gpu}, "since": {since}})
	ms, ok := query.Unwrap(src).(query.MoveSource)
	if !ok {
		return g, fmt.Errorf("digest: %T computes no moves (ask a server's /api/v1/digest)", query.Unwrap(src))
	}
	mres, err := ms.Moves(ctx, query.MovesQuery{Filter: query.Filter{GPU: gpu, Pricing: schemas.Spot}, Since: q.Since,
		At: q.At})
	if err != nil {
		return g, err
	}
	note(mres.Recorded)
	g.SpotMoves = movesOf(mres.Data, since, at, opt.PublicURL)
	g.SpotCommand = command("volatility", "--gpu", gpu, "--pricing", "spot", "--window", since, "--bar", "1h", "--at", at)
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

// movesOf is the spot series that moved most in the week (by |move|, as ms is
// sorted), at most maxMoves of them; a series that did not move is left out.
func movesOf(ms []analytics.SeriesMove, since, at, base string) []Move {
	out := []Move{}
	for _, m := range ms {
		if len(out) == maxMoves {
			break
		}
		if m.Changes == 0 && m.MovePct == 0 {
			continue
		}
		v := m.Vol
		args := []string{"series", "--provider", v.Provider, "--sku", v.SKU, "--region", v.Region}
		if v.Zone != "" {
			args = append(args, "--zone", v.Zone)
		}
		cmd := command(append(args, "--pricing", "spot", "--since", since, "--at", at, "--bar", "1h")...)
		out = append(out, Move{Provider: v.Provider, SKU: v.SKU, Region: v.Region, Zone: v.Zone,
			From: m.Ref, FromAt: m.RefAt, CarriedIn: m.CarriedIn, To: m.Last, ToAt: m.LastAt,
			MovePct: analytics.Round(m.MovePct, 4), Low: m.Low, High: m.High, Changes: m.Changes, Command: cmd,
			URL: link(base, "/series", url.Values{"provider": {v.Provider}, "sku": {v.SKU}, "region": {v.Region},
				"zone": {v.Zone}, "pricing": {schemas.Spot}})})
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

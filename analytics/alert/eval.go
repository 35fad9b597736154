package alert

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Instance is the outcome of one rule for one subject at one evaluation.
type Instance struct {
	Rule    string `json:"rule"`
	Kind    Kind   `json:"kind"`
	Subject string `json:"subject"`
	Firing  bool   `json:"firing"`
	// Value is the figure compared with Threshold, in Unit: "pct" (spread_shift:
	// change of the ratio; spot_move: price move), "usd_gpu_hour" (price_below:
	// the cheapest offer), "runs" (source_failed: failed runs in a row).
	Value     float64 `json:"value"`
	Threshold float64 `json:"threshold"`
	Unit      string  `json:"unit"`
	Summary   string  `json:"summary"`
	// Detail holds the figures behind Value (e.g. first_ratio, last_ratio).
	Detail map[string]float64 `json:"detail,omitempty"`
	Labels map[string]string  `json:"labels"`
	// Series is what the instance is about, as the web app's series view selects it.
	Series *SeriesRef `json:"series,omitempty"`
	// Compared are the figures the rule compares, each with when it held.
	Compared []Point `json:"compared,omitempty"`
	// URL is the web app's view of Series (Engine.PublicURL set), else "".
	URL string `json:"url,omitempty"`
}

// Key identifies an instance across evaluations: rule and subject.
func (i Instance) Key() string { return i.Rule + "/" + i.Subject }

// labels returns the instance labels: alertname, kind, subject, severity, the
// given pairs and the rule's own labels.
func (r Rule) labels(subject string, kv ...string) map[string]string {
	l := map[string]string{"alertname": r.Name, "kind": string(r.Kind), "subject": subject, "severity": r.severity()}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			l[kv[i]] = kv[i+1]
		}
	}
	for k, v := range r.Labels {
		l[k] = v
	}
	return l
}

// EvalSpreadShift evaluates a spread_shift rule over the daily tier spreads of its
// window (analytics.Spreads of the day prices from the day Window before the last
// day through the last day). Per GPU and pricing kind (the rule's, or all when its
// GPU is empty), the change is (last ratio − first ratio) ÷ first ratio, the first
// and last days with a ratio as analytics.SummariseSpreads finds them; the
// instance fires when |change| × 100 ≥ ThresholdPct.
func EvalSpreadShift(r Rule, days []analytics.SpreadDay) []Instance {
	var out []Instance
	day := func(gpu, pricing string, at time.Time) analytics.SpreadDay {
		for _, d := range days {
			if d.GPU == gpu && d.Pricing == pricing && d.Day.Equal(at) {
				return d
			}
		}
		return analytics.SpreadDay{}
	}
	for _, s := range analytics.SummariseSpreads(days) {
		if (r.GPU != "" && s.GPU != r.GPU) || s.Pricing != r.pricing() {
			continue
		}
		subject := s.GPU + " " + s.Pricing
		change := 0.0
		if s.FirstRatio > 0 {
			change = (s.LastRatio - s.FirstRatio) / s.FirstRatio * 100
		}
		in := Instance{Rule: r.Name, Kind: r.Kind, Subject: subject, Value: change, Threshold: r.ThresholdPct, Unit: "pct",
			Firing: s.Days >= 2 && atLeast(math.Abs(change), r.ThresholdPct),
			Detail: map[string]float64{"first_ratio": s.FirstRatio, "last_ratio": s.LastRatio,
				"premium_moved_points": s.PremiumMoved,
				"days_with_ratio":      float64(s.Days)},
			Labels: r.labels(subject, "gpu", s.GPU, "pricing", s.Pricing),
			Series: &SeriesRef{GPU: s.GPU, Pricing: s.Pricing}}
		first, last := day(s.GPU, s.Pricing, s.First), day(s.GPU, s.Pricing, s.Last)
		for _, p := range []struct {
			label string
			at    time.Time
			v     *float64
			unit  string
		}{
			{"first", s.First, &s.FirstRatio, "ratio"},
			{"first_hyperscaler", s.First, first.Hyperscaler, "usd_gpu_hour"},
			{"first_specialist", s.First, first.Specialist, "usd_gpu_hour"},
			{"last", s.Last, &s.LastRatio, "ratio"},
			{"last_hyperscaler", s.Last, last.Hyperscaler, "usd_gpu_hour"},
			{"last_specialist", s.Last, last.Specialist, "usd_gpu_hour"},
		} {
			if p.v != nil {
				in.Compared = append(in.Compared, Point{Label: p.label, At: p.at, Value: *p.v, Unit: p.unit})
			}
		}
		in.Summary = fmt.Sprintf("%s: hyperscaler/specialist ratio %.4f on %s → %.4f on %s (%+.2f %%, threshold ±%g %%)",
			subject, s.FirstRatio, s.FirstDay, s.LastRatio, s.LastDay, change, r.ThresholdPct)
		out = append(out, in)
	}
	return out
}

// EvalSpotMove evaluates a spot_move rule over hourly bars sorted by series then
// start (store.Rollups.Bars with CarryIn: a series' bar before since is the price
// in force when the window [since, end) opened).
//
// Per series, the move is analytics.SeriesMoveOf's: last close ÷ reference − 1,
// the reference being the close carried in from before the window, else the first
// bar's open; a series counts when it has a bar in the window, or its carried-in
// bar was observed within it (still on offer, unchanged: move 0). The volatility is
// analytics.SeriesVolatilityOf over the window's bars, as `gpuprice volatility
// --bar 1h` computes it. By offering (GPU × provider), the move is the median of
// its series' moves and the volatility analytics.Group's (median annualised
// volatility of the series with two returns or more). An instance fires when
// |move| × 100 ≥ ThresholdPct (when set) or annualised volatility × 100 ≥
// VolatilityPct (when set).
func EvalSpotMove(r Rule, bars []store.Bar, since, end time.Time) []Instance {
	var moves []analytics.SeriesMove
	for _, s := range analytics.SplitSeries(bars) {
		if s[0].Pricing != schemas.Spot || (r.GPU != "" && s[0].GPU != r.GPU) ||
			(r.Provider != "" && s[0].Provider != r.Provider) {
			continue
		}
		if m, ok := analytics.SeriesMoveOf(s, store.Hourly, since, end); ok {
			moves = append(moves, m)
		}
	}
	fire := func(move, annualised float64) bool {
		return (r.ThresholdPct > 0 && atLeast(math.Abs(move), r.ThresholdPct)) ||
			(r.VolatilityPct > 0 && atLeast(annualised*100, r.VolatilityPct))
	}
	summary := func(subject string, move, ann float64, series int) string {
		s := fmt.Sprintf("%s: spot price moved %+.2f %% over the last %s", subject, move, Span(end.Sub(since)))
		if r.ThresholdPct > 0 {
			s += fmt.Sprintf(" (threshold ±%g %%)", r.ThresholdPct)
		}
		s += fmt.Sprintf("; annualised volatility %.1f %%", ann*100)
		if r.VolatilityPct > 0 {
			s += fmt.Sprintf(" (threshold %g %%)", r.VolatilityPct)
		}
		if series > 1 {
			s += fmt.Sprintf("; median of %d series", series)
		}
		return s
	}
	var out []Instance
	if r.By == "series" {
		for _, m := range moves {
			v := m.Vol
			subject := v.GPU + " " + v.Key()
			ann := 0.0
			if v.Returns >= 2 {
				ann = v.Annualised
			}
			out = append(out, Instance{Rule: r.Name, Kind: r.Kind, Subject: subject, Value: m.MovePct, Threshold: r.ThresholdPct,
				Unit: "pct", Firing: fire(m.MovePct, ann), Summary: summary(subject, m.MovePct, ann, 1),
				Detail: map[string]float64{"move_pct": m.MovePct, "annualised_volatility_pct": ann * 100, "close": v.Close},
				Labels: r.labels(subject, "gpu", v.GPU, "provider", v.Provider, "pricing", v.Pricing, "sku", v.SKU,
					"region", v.Region, "zone", v.Zone),
				Series: &SeriesRef{GPU: v.GPU, Provider: v.Provider, Pricing: v.Pricing, Region: v.Region, Zone: v.Zone,
					SKU: v.SKU},
				Compared: []Point{{Label: "before", At: m.RefAt, Value: m.Ref, Unit: "usd_gpu_hour"},
					{Label: "after", At: m.LastAt, Value: m.Last, Unit: "usd_gpu_hour"}}})
		}
		return out
	}
	type group struct {
		gpu, provider string
		moves         []float64
		vols          []analytics.SeriesVolatility
		refs, lasts   []float64
		refAt, lastAt time.Time // earliest reference, latest last price
	}
	groups := map[string]*group{}
	var order []string
	for _, m := range moves {
		k := m.Vol.GPU + " " + m.Vol.Provider
		g := groups[k]
		if g == nil {
			g = &group{gpu: m.Vol.GPU, provider: m.Vol.Provider}
			groups[k] = g
			order = append(order, k)
		}
		g.moves = append(g.moves, m.MovePct)
		g.refs, g.lasts = append(g.refs, m.Ref), append(g.lasts, m.Last)
		if g.refAt.IsZero() || m.RefAt.Before(g.refAt) {
			g.refAt = m.RefAt
		}
		if m.LastAt.After(g.lastAt) {
			g.lastAt = m.LastAt
		}
		if m.Vol.Bars > 0 {
			g.vols = append(g.vols, m.Vol)
		}
	}
	sort.Strings(order)
	for _, k := range order {
		g := groups[k]
		move := analytics.Median(g.moves)
		ann := 0.0
		if gv := analytics.Group(g.vols, analytics.ByOffering); len(gv) == 1 {
			ann = gv[0].Annualised
		}
		subject := k + " " + schemas.Spot
		out = append(out, Instance{Rule: r.Name, Kind: r.Kind, Subject: subject, Value: move, Threshold: r.ThresholdPct,
			Unit: "pct", Firing: fire(move, ann), Summary: summary(subject, move, ann, len(g.moves)),
			Detail: map[string]float64{"move_pct": move, "annualised_volatility_pct": ann * 100,
				"series": float64(len(g.moves))},
			Labels: r.labels(subject, "gpu", g.gpu, "provider", g.provider, "pricing", schemas.Spot),
			Series: &SeriesRef{GPU: g.gpu, Provider: g.provider, Pricing: schemas.Spot},
			// The median of the series' prices before and after (the move is the
			// median of their moves).
			Compared: []Point{{Label: "before", At: g.refAt, Value: analytics.Median(g.refs), Unit: "usd_gpu_hour"},
				{Label: "after", At: g.lastAt, Value: analytics.Median(g.lasts), Unit: "usd_gpu_hour"}}})
	}
	return out
}

// EvalPriceBelow evaluates a price_below rule over the latest prices of series
// still on offer (as `gpuprice prices` lists them). The instance, one per GPU and
// pricing kind, fires when the cheapest matching offer is below BelowUSDGPUHour;
// there is none when nothing matches.
func EvalPriceBelow(r Rule, latest []schemas.Observation) []Instance {
	var best *schemas.Observation
	n := 0
	for i, o := range latest {
		if o.GPU != r.GPU || o.Pricing != r.pricing() || (r.Provider != "" && o.Provider != r.Provider) {
			continue
		}
		n++
		if best == nil || o.PriceUSDGPUHour < best.PriceUSDGPUHour {
			best = &latest[i]
		}
	}
	if best == nil {
		return nil
	}
	subject := r.GPU + " " + r.pricing()
	if r.Provider != "" {
		subject = r.GPU + " " + r.Provider + " " + r.pricing()
	}
	return []Instance{{Rule: r.Name, Kind: r.Kind, Subject: subject, Value: best.PriceUSDGPUHour,
		Threshold: r.BelowUSDGPUHour,
		Unit:      "usd_gpu_hour", Firing: best.PriceUSDGPUHour < r.BelowUSDGPUHour,
		Summary: fmt.Sprintf("%s: cheapest offer $%.4f/GPU-hour at %s %s %s (threshold below $%g; %d offers)", subject,
			best.PriceUSDGPUHour, best.Provider, best.SKU, best.Region, r.BelowUSDGPUHour, n),
		Detail: map[string]float64{"offers": float64(n)},
		Labels: r.labels(subject, "gpu", r.GPU, "pricing", r.pricing(), "provider", best.Provider, "sku", best.SKU,
			"region", best.Region),
		Series: &SeriesRef{GPU: r.GPU, Provider: best.Provider, Pricing: r.pricing(), Region: best.Region, Zone: best.Zone,
			SKU: best.SKU},
		Compared: []Point{{Label: "cheapest", At: best.EffectiveAt, Value: best.PriceUSDGPUHour, Unit: "usd_gpu_hour"}}}}
}

// EvalSourceFailed evaluates a source_failed rule over each source's latest runs,
// newest first. Per source (the rule's, or every source of runs), the value is
// how many of the latest runs failed in a row; the instance fires when it reaches
// Runs (default 3).
func EvalSourceFailed(r Rule, runs map[string][]schemas.Run) []Instance {
	names := make([]string, 0, len(runs))
	for s := range runs {
		if r.Source == "" || s == r.Source {
			names = append(names, s)
		}
	}
	sort.Strings(names)
	var out []Instance
	for _, s := range names {
		failed := 0
		var lastErr string
		var points []Point
		for _, run := range runs[s] {
			if run.Status != schemas.RunFailed {
				break
			}
			if failed == 0 {
				lastErr = run.Error
			}
			failed++
			points = append(points, Point{Label: "failed_run", At: run.StartedAt})
		}
		if len(runs[s]) == 0 {
			continue
		}
		sum := fmt.Sprintf("source %s: the last %d runs failed (threshold %d)", s, failed, r.runs())
		if failed == 0 {
			sum = fmt.Sprintf("source %s: last run %s", s, runs[s][0].Status)
		}
		if lastErr != "" {
			sum += ": " + firstLine(lastErr)
		}
		out = append(out, Instance{Rule: r.Name, Kind: r.Kind, Subject: s, Value: float64(failed),
			Threshold: float64(r.runs()),
			Unit:      "runs", Firing: failed >= r.runs(), Summary: sum, Labels: r.labels(s, "source", s),
			Series: &SeriesRef{Source: s}, Compared: points})
	}
	return out
}

// runsBefore returns the latest n runs of source started by now, newest first:
// it reads n runs, and more when some of them started after now (an evaluation
// as of a past time) or are under way (schemas.RunStarted: no outcome yet, so a
// run in progress neither breaks nor extends a series of failures).
func runsBefore(ctx context.Context, rd Reader, source string, n int, now time.Time) ([]schemas.Run, error) {
	for limit := n; ; limit *= 4 {
		rs, err := rd.Runs(ctx, source, limit)
		if err != nil {
			return nil, err
		}
		var out []schemas.Run
		for _, r := range rs {
			if !r.StartedAt.After(now) && r.Status != schemas.RunStarted {
				out = append(out, r)
			}
		}
		if len(out) >= n || len(rs) < limit {
			return out[:min(n, len(out))], nil
		}
	}
}

// atLeast reports v ≥ threshold, forgiving the rounding of the arithmetic before
// it (a ratio from 1.6 to 1.8 is a change of 12.5 %, computed 12.4999…).
func atLeast(v, threshold float64) bool { return v >= threshold-1e-9*math.Max(1, math.Abs(threshold)) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Reader is what evaluation reads from the store. Latest must return only series
// still on offer (the rule of `gpuprice prices`: seen within 24 h of their
// provider's newest observation).
type Reader interface {
	Bars(ctx context.Context, q store.BarQuery) ([]store.Bar, error)
	Latest(ctx context.Context, f store.Filter) ([]schemas.Observation, error)
	Runs(ctx context.Context, source string, limit int) ([]schemas.Run, error)
}

// Result is the evaluation of one rule: its instances, or the error that kept it
// from being evaluated (its alerts then keep their state).
type Result struct {
	Rule      Rule
	Instances []Instance
	Err       error
}

// SpreadWindow returns the days spread_shift reads for a window ending at now:
// from the UTC day window before now's day through now's day, i.e. what
// `gpuprice spreads --since <window + 1d> --at now` shows.
func SpreadWindow(window time.Duration, now time.Time) (from, to time.Time) {
	to = now.UTC().Truncate(store.Daily).Add(store.Daily)
	from = to.Add(-store.Daily - window).Truncate(store.Daily)
	return from, to
}

// Evaluate evaluates every rule at now. sources are the sources source_failed
// rules look at when they name none. One rule's failure is recorded in its Result
// and the others go on.
func Evaluate(ctx context.Context, rd Reader, rules []Rule, sources []string, now time.Time) []Result {
	out := make([]Result, 0, len(rules))
	for _, r := range rules {
		res := Result{Rule: r}
		res.Instances, res.Err = evalRule(ctx, rd, r, sources, now)
		if res.Err != nil {
			res.Err = fmt.Errorf("alert: rule %s: %w", r.Name, res.Err)
		}
		out = append(out, res)
	}
	return out
}

func evalRule(ctx context.Context, rd Reader, r Rule, sources []string, now time.Time) ([]Instance, error) {
	switch r.Kind {
	case SpreadShift:
		from, to := SpreadWindow(r.window(), now)
		bars,
			err := rd.Bars(ctx, store.BarQuery{Filter: store.Filter{GPU: r.GPU, Pricing: r.pricing(), Since: from, Until: to},
			Width: store.Daily, CarryIn: true})
		if err != nil {
			return nil, err
		}
		return EvalSpreadShift(r, analytics.Spreads(analytics.DailyPrices(bars, from, to))), nil
	case SpotMove:
		since := now.Add(-r.window())
		bars, err := rd.Bars(ctx, store.BarQuery{Filter: store.Filter{GPU: r.GPU, Provider: r.Provider, Pricing: schemas.Spot,
			Since: since, Until: now}, Width: store.Hourly, CarryIn: true})
		if err != nil {
			return nil, err
		}
		return EvalSpotMove(r, bars, since, now), nil
	case PriceBelow:
		// The prices in force at now: each series' latest price effective by then.
		latest, err := rd.Latest(ctx, store.Filter{GPU: r.GPU, Pricing: r.pricing(), Provider: r.Provider,
			Until: now.Add(time.Second)})
		if err != nil {
			return nil, err
		}
		return EvalPriceBelow(r, latest), nil
	case SourceFailed:
		names := sources
		if r.Source != "" {
			names = []string{r.Source}
		}
		runs := map[string][]schemas.Run{}
		for _, s := range names {
			rs, err := runsBefore(ctx, rd, s, r.runs(), now)
			if err != nil {
				return nil, err
			}
			runs[s] = rs
		}
		return EvalSourceFailed(r, runs), nil
	case RiskRise:
		sr, ok := rd.(SignalReader)
		if !ok {
			return nil, fmt.Errorf("risk_rise: the store keeps no interruption signals")
		}
		sigs, err := sr.Signals(ctx, store.SignalQuery{Provider: r.Provider, GPU: r.GPU, Kind: schemas.SignalInterruption,
			Until: now.Add(time.Second)})
		if err != nil {
			return nil, err
		}
		return EvalRiskRise(r, sigs, now.Add(-r.window()), now), nil
	case OutOfStock, BackInStock, CapacityBelow:
		sr, ok := rd.(SignalReader)
		if !ok {
			return nil, fmt.Errorf("%s: the store keeps no stock signals", r.Kind)
		}
		// From one window and one hold back: the signal in force when the window began.
		sigs, err := sr.Signals(ctx, store.SignalQuery{Provider: r.Provider, GPU: r.GPU, Kind: schemas.SignalStock,
			Since: now.Add(-r.window() - analytics.StockHold), Until: now.Add(time.Second)})
		if err != nil {
			return nil, err
		}
		switch r.Kind {
		case OutOfStock:
			return EvalOutOfStock(r, sigs, now), nil
		case BackInStock:
			return EvalBackInStock(r, sigs, now), nil
		}
		return EvalCapacityBelow(r, sigs, now), nil
	}
	return nil, fmt.Errorf("unknown kind %q", r.Kind)
}

// SignalReader is the optional ability of a Reader to read stored signals, which
// risk_rise rules need.
type SignalReader interface {
	Signals(ctx context.Context, q store.SignalQuery) ([]schemas.Signal, error)
}

// EvalRiskRise evaluates a risk_rise rule over interruption signals ordered by
// series (provider, sku, region, zone) then effective time, as the store returns
// them. Per series, the band in force at since (the last signal effective by then)
// is compared with the band in force at now; the instance fires when the band is
// higher now. A series gets an instance when it fires or its band changed within
// the window (a firing one that no longer does resolves); a series whose first
// band falls in the window has no band to rise from and gets none.
func EvalRiskRise(r Rule, sigs []schemas.Signal, since, now time.Time) []Instance {
	var out []Instance
	for i := 0; i < len(sigs); {
		j := i
		for j < len(sigs) && sigs[j].SameSeries(sigs[i]) {
			j++
		}
		// then: the band in force at since; cur: at now; changed: a signal within the
		// window stated another band than the one before it.
		var then, cur *schemas.Signal
		changed := false
		for k := i; k < j && !sigs[k].EffectiveAt.After(now); k++ {
			s := &sigs[k]
			if !s.EffectiveAt.After(since) {
				then = s
			} else if cur != nil && s.Value != cur.Value {
				changed = true
			}
			cur = s
		}
		i = j
		if then == nil || cur == nil || (!changed && cur.Value <= then.Value) {
			continue
		}
		subject := strings.TrimSpace(strings.Join([]string{cur.Provider, cur.SKU, cur.Region, cur.Zone}, " "))
		firing := cur.Value > then.Value
		sum := fmt.Sprintf("%s: interruption band %s → %s since %s", subject, then.Label, cur.Label,
			since.UTC().Format(time.RFC3339))
		if !firing {
			sum = fmt.Sprintf("%s: interruption band %s, as when the window began (%s)", subject, cur.Label,
				since.UTC().Format(time.RFC3339))
		}
		if cur.GPU != "" {
			sum += " (" + cur.GPU + ")"
		}
		out = append(out, Instance{Rule: r.Name, Kind: r.Kind, Subject: subject, Value: cur.Value, Threshold: then.Value,
			Unit: "band", Firing: firing, Summary: sum,
			Detail: map[string]float64{"band_then": then.Value, "band_now": cur.Value},
			Labels: r.labels(subject, "gpu", cur.GPU, "provider", cur.Provider, "sku", cur.SKU, "region", cur.Region,
				"band_then", then.Label, "band_now", cur.Label),
			Series: &SeriesRef{GPU: cur.GPU, Provider: cur.Provider, Pricing: schemas.Spot, Region: cur.Region,
				Zone: cur.Zone, SKU: cur.SKU},
			Compared: []Point{{Label: "band_then", At: then.EffectiveAt, Value: then.Value, Unit: "band"},
				{Label: "band_now", At: cur.EffectiveAt, Value: cur.Value, Unit: "band"}}})
	}
	return out
}

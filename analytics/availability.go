package analytics

import (
	"sort"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// StockHold is how long a stock or depth signal is taken to hold when no later one
// of its series follows: three runs of an hourly source. Past it the series is not
// observed (neither in stock nor out), so a collector that stopped does not read as
// stock that stayed (docs/risk.md, "Availability over a window").
const StockHold = 3 * time.Hour

// OfferAvailability is how available one series (provider, sku, region, zone; stock or
// depth signals), or a group of them, was over a window.
type OfferAvailability struct {
	Provider string `json:"provider"`
	SKU      string `json:"sku,omitempty"` // "" for a group
	Region   string `json:"region,omitempty"`
	Zone     string `json:"zone,omitempty"`
	GPU      string `json:"gpu"`
	Kind     string `json:"kind"`           // stock or depth
	Unit     string `json:"unit,omitempty"` // what Last counts: gpus, instances, regions, offers
	Series   int    `json:"series"`         // the series it covers (1 for one offer)
	Signals  int    `json:"signals"`        // signals that held in the window, the one in force at its start included
	// Observed is the time of the window some signal of it held (StockHold each at
	// most); InStock the part of it in stock (a value > 0; in a group: any of its
	// series). InStockShare = InStock / Observed (0 when nothing was observed).
	Observed     time.Duration `json:"observed_ns"`
	InStock      time.Duration `json:"in_stock_ns"`
	InStockShare float64       `json:"in_stock_share"`
	// Outages counts the observed stretches out of stock; the longest is
	// LongestOutage, from OutageFrom to OutageTo (an unobserved gap ends a stretch).
	Outages       int           `json:"outages"`
	LongestOutage time.Duration `json:"longest_outage_ns"`
	OutageFrom    time.Time     `json:"outage_from,omitzero"`
	OutageTo      time.Time     `json:"outage_to,omitzero"`
	// Last is the newest signal's value (a group: the sum over its series' newest
	// ones), LastAt its time, LastLabel its label (one series only).
	Last      float64   `json:"last"`
	LastAt    time.Time `json:"last_at"`
	LastLabel string    `json:"last_label,omitempty"`
}

// segment is a stretch of one series' timeline: [from, to) in stock or not.
type segment struct {
	from, to time.Time
	in       bool
}

// timeline turns one series' signals (ordered by time) into segments inside
// [since, until): each holds until the next signal, StockHold at most.
func timeline(sigs []schemas.Signal, since, until time.Time) []segment {
	var out []segment
	for i, s := range sigs {
		end := s.EffectiveAt.Add(StockHold)
		if i+1 < len(sigs) && sigs[i+1].EffectiveAt.Before(end) {
			end = sigs[i+1].EffectiveAt
		}
		from := s.EffectiveAt
		if from.Before(since) {
			from = since
		}
		if end.After(until) {
			end = until
		}
		if !end.After(from) {
			continue
		}
		out = append(out, segment{from: from, to: end, in: s.Value > 0})
	}
	return out
}

// StockAvailability is the availability of each series of sigs (stock and depth
// signals, ordered by series then time as a store returns them) over [since,
// until): the share of the observed time in stock, the outages, the newest value.
// A signal before since counts from since (the one in force when the window
// began); series with nothing in the window are left out.
func StockAvailability(sigs []schemas.Signal, since, until time.Time) []OfferAvailability {
	var out []OfferAvailability
	for _, run := range seriesRuns(sigs) {
		segs := timeline(run, since, until)
		a := OfferAvailability{Provider: run[0].Provider, SKU: run[0].SKU, Region: run[0].Region, Zone: run[0].Zone,
			GPU: run[0].GPU, Kind: run[0].Kind, Unit: UnitOf(run[0]), Series: 1}
		last := run[len(run)-1]
		a.Last, a.LastAt, a.LastLabel = last.Value, last.EffectiveAt, last.Label
		a.Signals = len(segs)
		if len(segs) == 0 {
			continue
		}
		fill(&a, segs)
		out = append(out, a)
	}
	return out
}

// GroupAvailability is StockAvailability per (provider, GPU): a group is in stock
// while any of its series is, observed while any is; Last sums the series' newest
// values (of one unit; mixed units give Unit "mixed").
func GroupAvailability(sigs []schemas.Signal, since, until time.Time) []OfferAvailability {
	type key struct{ provider, gpu, kind string }
	groups := map[key]*OfferAvailability{}
	segsOf := map[key][]segment{}
	var order []key
	for _, run := range seriesRuns(sigs) {
		segs := timeline(run, since, until)
		if len(segs) == 0 {
			continue
		}
		k := key{run[0].Provider, run[0].GPU, run[0].Kind}
		g := groups[k]
		if g == nil {
			g = &OfferAvailability{Provider: k.provider, GPU: k.gpu, Kind: k.kind, Unit: UnitOf(run[0])}
			groups[k] = g
			order = append(order, k)
		} else if g.Unit != UnitOf(run[0]) {
			g.Unit = "mixed"
		}
		g.Series++
		last := run[len(run)-1]
		g.Last += last.Value
		if last.EffectiveAt.After(g.LastAt) {
			g.LastAt = last.EffectiveAt
		}
		g.Signals += len(segs)
		segsOf[k] = append(segsOf[k], segs...)
	}
	out := make([]OfferAvailability, 0, len(order))
	for _, k := range order {
		g := groups[k]
		fill(g, union(segsOf[k]))
		out = append(out, *g)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		if out[i].GPU != out[j].GPU {
			return out[i].GPU < out[j].GPU
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// union merges the segments of several series into one timeline: observed while
// any is, in stock while any is.
func union(segs []segment) []segment {
	type edge struct {
		at       time.Time
		obs, ins int
	}
	edges := make([]edge, 0, 2*len(segs))
	for _, s := range segs {
		in := 0
		if s.in {
			in = 1
		}
		edges = append(edges, edge{s.from, 1, in}, edge{s.to, -1, -in})
	}
	sort.Slice(edges, func(i, j int) bool { return edges[i].at.Before(edges[j].at) })
	var out []segment
	obs, ins := 0, 0
	for i := 0; i < len(edges); {
		at := edges[i].at
		for ; i < len(edges) && edges[i].at.Equal(at); i++ {
			obs += edges[i].obs
			ins += edges[i].ins
		}
		if i == len(edges) || obs == 0 {
			continue
		}
		next := edges[i].at
		s := segment{from: at, to: next, in: ins > 0}
		if n := len(out); n > 0 && out[n-1].to.Equal(at) && out[n-1].in == s.in {
			out[n-1].to = next
		} else {
			out = append(out, s)
		}
	}
	return out
}

// fill sets a's observed and in-stock time and its outages from its timeline.
func fill(a *OfferAvailability, segs []segment) {
	var cur time.Duration
	var curFrom time.Time
	var prevTo time.Time
	end := func() {
		if cur > 0 {
			a.Outages++
			if cur > a.LongestOutage {
				a.LongestOutage, a.OutageFrom, a.OutageTo = cur, curFrom, curFrom.Add(cur)
			}
		}
		cur = 0
	}
	for _, s := range segs {
		d := s.to.Sub(s.from)
		a.Observed += d
		if s.in {
			a.InStock += d
			end()
		} else {
			if cur > 0 && !s.from.Equal(prevTo) {
				end() // an unobserved gap ends a stretch
			}
			if cur == 0 {
				curFrom = s.from
			}
			cur += d
		}
		prevTo = s.to
	}
	end()
	if a.Observed > 0 {
		a.InStockShare = float64(a.InStock) / float64(a.Observed)
	}
}

// seriesRuns splits signals ordered by series then time into one run per series
// (and kind).
func seriesRuns(sigs []schemas.Signal) [][]schemas.Signal {
	var out [][]schemas.Signal
	for i := 0; i < len(sigs); {
		j := i + 1
		for j < len(sigs) && sigs[j].SameSeries(sigs[i]) && sigs[j].Kind == sigs[i].Kind {
			j++
		}
		out = append(out, sigs[i:j])
		i = j
	}
	return out
}

// UnitOf is what a stock or depth signal's value counts: its unit attribute, or
// offers for depth, gpus for a stock signal that states none.
func UnitOf(s schemas.Signal) string {
	if u := s.Attrs["unit"]; u != "" {
		return u
	}
	if s.Kind == schemas.SignalDepth {
		return "offers"
	}
	return "gpus"
}

// GPUsAvailable is how many GPUs a stock signal says can be rented now, and
// whether it says: Value itself in gpus; Value × gpu_count (the attribute, or
// perInstance) in instances; unknown for a count of regions or any other unit.
func GPUsAvailable(s schemas.Signal, perInstance int) (float64, bool) {
	switch UnitOf(s) {
	case "gpus":
		return s.Value, true
	case "instances":
		n := perInstance
		if c, err := strconv.Atoi(s.Attrs["gpu_count"]); err == nil && c > 0 {
			n = c
		}
		if n <= 0 {
			return 0, false
		}
		return s.Value * float64(n), true
	}
	return 0, false
}

// StockPoint is one point of a stock timeline: what a provider's offers of a GPU
// (one kind and unit) stated at At, summed over the offers whose signal held then;
// Value nil when none held (not observed).
type StockPoint struct {
	At    time.Time `json:"at"`
	Value *float64  `json:"value"`
}

// StockLine is the timeline of one provider's GPU, kind and unit.
type StockLine struct {
	Provider string       `json:"provider"`
	GPU      string       `json:"gpu"`
	Kind     string       `json:"kind"`
	Unit     string       `json:"unit"`
	Points   []StockPoint `json:"points"`
}

// MaxStockPoints bounds a timeline's points (a window over step).
const MaxStockPoints = 2000

// StockTimeline samples sigs (stock and depth signals ordered by series then
// time) every step from since until before until, per provider, GPU, kind and
// unit: at each time the sum of the values of the series whose signal held then
// (each holds until the next of its series, StockHold at most). A step giving more
// than MaxStockPoints points is widened to fit.
func StockTimeline(sigs []schemas.Signal, since, until time.Time, step time.Duration) []StockLine {
	if step <= 0 || !until.After(since) {
		return nil
	}
	if n := until.Sub(since) / step; n > MaxStockPoints {
		step = until.Sub(since)/MaxStockPoints + time.Nanosecond
	}
	type key struct{ provider, gpu, kind, unit string }
	lines := map[key][]segmentValue{}
	var order []key
	for _, run := range seriesRuns(sigs) {
		k := key{run[0].Provider, run[0].GPU, run[0].Kind, UnitOf(run[0])}
		if _, ok := lines[k]; !ok {
			order = append(order, k)
		}
		for i, s := range run {
			end := s.EffectiveAt.Add(StockHold)
			if i+1 < len(run) && run[i+1].EffectiveAt.Before(end) {
				end = run[i+1].EffectiveAt
			}
			lines[k] = append(lines[k], segmentValue{from: s.EffectiveAt, to: end, v: s.Value})
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.provider != b.provider {
			return a.provider < b.provider
		}
		if a.gpu != b.gpu {
			return a.gpu < b.gpu
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.unit < b.unit
	})
	out := make([]StockLine, 0, len(order))
	for _, k := range order {
		l := StockLine{Provider: k.provider, GPU: k.gpu, Kind: k.kind, Unit: k.unit}
		for t := since; t.Before(until); t = t.Add(step) {
			var sum float64
			held := false
			for _, sv := range lines[k] {
				if !t.Before(sv.from) && t.Before(sv.to) {
					sum += sv.v
					held = true
				}
			}
			p := StockPoint{At: t}
			if held {
				v := sum
				p.Value = &v
			}
			l.Points = append(l.Points, p)
		}
		out = append(out, l)
	}
	return out
}

// segmentValue is a signal's value over the stretch it holds.
type segmentValue struct {
	from, to time.Time
	v        float64
}

package store

import (
	"cmp"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// BarFold folds observations, as a run writes them, into the bars a Rollup over
// them would compute: each series keeps its identities (one per effective_at
// second, the last write winning, as the stores' reads resolve versions) in a few
// numbers, and Bars builds every width from them. A store that keeps bars may then
// write the fold's bars instead of re-reading the observations just written
// (FoldedRollups).
//
// Add the rows in the order they were written, and only rows the store stored. A
// fold holds at most its limit of rows; past it, Overflowed is true and the run
// rebuilds its bars with Rollup. It is safe for concurrent use.
type BarFold struct {
	mu      sync.Mutex
	limit   int
	rows    int
	over    bool
	series  map[[5]string]*foldSeries
	attrs   []foldAttrs
	attrIdx map[foldAttrs]int32
	since   int64 // span of effective_at, Unix seconds; since > until when empty
	until   int64
}

// foldSeries is the rows folded of one series, in write order.
type foldSeries struct {
	rows []foldRow
}

// foldRow is one written row: effective_at and observed_at in Unix seconds (as the
// stores keep them), the price per GPU-hour and the index of its attributes.
type foldRow struct {
	eff, seen int64
	price     float64
	attr      int32
}

// foldAttrs are the columns of a bar taken from its last observation.
type foldAttrs struct {
	gpu, tier, interconnect, scope, basis string
}

// DefaultFoldLimit is the most rows a run folds (about 40 bytes each): a run that
// writes more rebuilds its bars from the store instead.
const DefaultFoldLimit = 4 << 20

// NewBarFold returns an empty fold of at most limit rows (DefaultFoldLimit when
// limit ≤ 0).
func NewBarFold(limit int) *BarFold {
	if limit <= 0 {
		limit = DefaultFoldLimit
	}
	return &BarFold{limit: limit, series: map[[5]string]*foldSeries{}, attrIdx: map[foldAttrs]int32{},
		since: 1, until: 0}
}

// unixSeconds is t in whole Unix seconds, 0 for the zero time (the stores keep a
// zero time as the epoch).
func unixSeconds(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// Add folds rows the store has just written, in their order.
func (f *BarFold) Add(obs []schemas.Observation) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.over {
		return
	}
	if f.rows+len(obs) > f.limit {
		f.overflow()
		return
	}
	f.rows += len(obs)
	var last *foldSeries
	var lastKey [5]string
	for i := range obs {
		o := &obs[i]
		k := [5]string{o.Provider, o.SKU, o.Region, o.Zone, o.Pricing}
		if last == nil || k != lastKey {
			sr := f.series[k]
			if sr == nil {
				sr = &foldSeries{}
				f.series[k] = sr
			}
			last, lastKey = sr, k
		}
		ai := f.intern(foldAttrs{o.GPU, o.Tier, o.Interconnect, o.PriceScope, o.PriceBasis})
		eff := unixSeconds(o.EffectiveAt)
		last.rows = append(last.rows, foldRow{eff: eff, seen: unixSeconds(o.ObservedAt), price: o.PriceUSDGPUHour,
			attr: ai})
		f.widen(eff, eff)
	}
}

// Overflowed reports whether the fold was given more rows than its limit: its
// bars are then unknown.
func (f *BarFold) Overflowed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.over
}

// Empty reports whether no row was folded.
func (f *BarFold) Empty() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.over && f.rows == 0
}

// Span is the span [since, until) of the folded rows' effective_at (until one
// second past the newest); zero when none was folded.
func (f *BarFold) Span() (since, until time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.since > f.until {
		return time.Time{}, time.Time{}
	}
	return time.Unix(f.since, 0).UTC(), time.Unix(f.until+1, 0).UTC()
}

// Providers are the providers of the folded rows, sorted.
func (f *BarFold) Providers() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for k := range f.series {
		if !seen[k[0]] {
			seen[k[0]] = true
			out = append(out, k[0])
		}
	}
	sort.Strings(out)
	return out
}

// Days are the UTC days (Unix seconds of their start) each folded series has rows
// on.
func (f *BarFold) Days() map[[5]string]map[int64]bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	const day = int64(Daily / time.Second)
	out := make(map[[5]string]map[int64]bool, len(f.series))
	for k, sr := range f.series {
		days := map[int64]bool{}
		for _, r := range sr.rows {
			days[r.eff-r.eff%day] = true
		}
		out[k] = days
	}
	return out
}

// Merge folds the rows of g into f, after f's (g's rows were written later).
func (f *BarFold) Merge(g *BarFold) {
	if g == nil || g == f {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.over {
		return
	}
	if g.over || f.rows+g.rows > f.limit {
		f.overflow()
		return
	}
	f.rows += g.rows
	for k, gs := range g.series {
		sr := f.series[k]
		if sr == nil {
			sr = &foldSeries{}
			f.series[k] = sr
		}
		for _, r := range gs.rows {
			r.attr = f.intern(g.attrs[r.attr])
			sr.rows = append(sr.rows, r)
		}
	}
	if g.since <= g.until {
		f.widen(g.since, g.until)
	}
}

// overflow drops what f holds: past its limit its bars are unknown.
func (f *BarFold) overflow() { f.over, f.series, f.attrs, f.attrIdx = true, nil, nil, nil }

// intern is the index of a in f.attrs, added when new.
func (f *BarFold) intern(a foldAttrs) int32 {
	ai, ok := f.attrIdx[a]
	if !ok {
		ai = int32(len(f.attrs))
		f.attrs = append(f.attrs, a)
		f.attrIdx[a] = ai
	}
	return ai
}

// widen widens f's span of effective_at to [lo, hi] (Unix seconds).
func (f *BarFold) widen(lo, hi int64) {
	if f.since > f.until {
		f.since, f.until = lo, hi
		return
	}
	f.since, f.until = min(f.since, lo), max(f.until, hi)
}

// Bars are the bars of every width in Widths (Bars()[i] of width Widths[i]) that a
// Rollup over the folded rows alone would write, by series then start: per bar, the first,
// highest, lowest and last price by effective_at of the identities in it, their
// mean and number, the bar's attributes from its last identity, and the latest
// observed_at. keep, when not nil, selects the series and UTC days (by their daily
// bar) to build.
func (f *BarFold) Bars(keep func(series [5]string, day time.Time) bool) [][]Bar {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([][]Bar, len(Widths))
	if f.over {
		return out
	}
	keys := make([][5]string, 0, len(f.series))
	for k := range f.series {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		for c := range keys[i] {
			if keys[i][c] != keys[j][c] {
				return keys[i][c] < keys[j][c]
			}
		}
		return false
	})
	for _, k := range keys {
		rows := f.series[k].rows
		// By effective_at, the last write of each identity last among its equals.
		slices.SortStableFunc(rows, func(a, b foldRow) int { return cmp.Compare(a.eff, b.eff) })
		idents := rows[:0:0]
		for i, r := range rows {
			if i+1 < len(rows) && rows[i+1].eff == r.eff {
				continue // a later write of the same identity follows
			}
			idents = append(idents, r)
		}
		for i, w := range Widths {
			out[i] = f.appendBars(out[i], k, idents, int64(w/time.Second), keep)
		}
	}
	return out
}

// appendBars appends the bars of width (seconds) of one series' identities, sorted
// by effective_at.
func (f *BarFold) appendBars(out []Bar, k [5]string, idents []foldRow, width int64,
	keep func([5]string, time.Time) bool) []Bar {
	const day = int64(Daily / time.Second)
	for i := 0; i < len(idents); {
		start := idents[i].eff - idents[i].eff%width
		j := i
		for j < len(idents) && idents[j].eff-idents[j].eff%width == start {
			j++
		}
		in := idents[i:j]
		i = j
		if keep != nil && !keep(k, time.Unix(start-start%day, 0).UTC()) {
			continue
		}
		b := Bar{Provider: k[0], SKU: k[1], Region: k[2], Zone: k[3], Pricing: k[4],
			Start: time.Unix(start, 0).UTC(), Open: in[0].price, Close: in[len(in)-1].price,
			High: in[0].price, Low: in[0].price, Count: int64(len(in))}
		a := f.attrs[in[len(in)-1].attr]
		b.GPU, b.Tier, b.Interconnect, b.PriceScope, b.PriceBasis = a.gpu, a.tier, a.interconnect, a.scope, a.basis
		var sum float64
		var seen int64
		for _, r := range in {
			b.High, b.Low = max(b.High, r.price), min(b.Low, r.price)
			sum += r.price
			seen = max(seen, r.seen)
		}
		b.Mean = sum / float64(len(in))
		if seen > 0 {
			b.LastObservedAt = time.Unix(seen, 0).UTC()
		}
		out = append(out, b)
	}
	return out
}

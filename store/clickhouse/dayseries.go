package clickhouse

import (
	"context"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// carryLookback is how far before a window dailyBars reads daily bars for the bar
// carried into it: a series with a bar in these days carries in the latest (the
// usual case: a series collected daily); day_series answers for a series whose
// last bar is older, and only a series with bars on both sides of a longer gap
// needs the older history read (carryBars, for those series alone).
const carryLookback = 7 * store.Daily

// rollupDaySeries adds to day_series the states of the daily bars a rollup just
// wrote (version v, bar_start in [since, until)): their series' first start, last
// bar and attributes (schemas/ddl/clickhouse/0013_day_series.sql). States merge:
// the table's figures are those of every daily bar ever written.
func (s *Store) rollupDaySeries(ctx context.Context, v uint64, since, until time.Time) error {
	const q = `INSERT INTO day_series (provider, sku, region, zone, pricing, first_start, last_bar, attrs)
	SELECT provider, sku, region, zone, pricing, minState(bar_start),
		argMaxState((bar_start, gpu, tier, interconnect, open, high, low, close, mean, count, last_observed_at,
			price_scope, price_basis), (bar_start, version)),
		groupUniqArrayState((attrs_id, gpu, tier, interconnect, price_scope, price_basis))
	FROM bars
	WHERE width = 86400 AND version = ? AND bar_start >= ? AND bar_start < ?
	GROUP BY provider, sku, region, zone, pricing`
	if err := s.conn.Exec(ctx, q, v, clampTime(since), clampTime(until)); err != nil {
		return s.wrap("rollup day_series", err)
	}
	return nil
}

// daySeries is one series of day_series: its key, first daily bar start, last
// daily bar (Start zero when unknown) and the attributes its bars had, by attrs_id.
type daySeries struct {
	key   [5]string
	first time.Time
	last  store.Bar
	attrs map[uint64]barAttrs
}

// barAttrs are the attributes attrs_id hashes.
type barAttrs struct{ gpu, tier, interconnect, scope, basis string }

// daySeriesOf reads day_series for the series q's provider, pricing and region
// select and some bar of which had q's GPU, by series_id. ok is false when two series share a series_id (then only
// the bars table tells their bars apart).
func (s *Store) daySeriesOf(ctx context.Context, q store.BarQuery) (map[uint64]*daySeries, bool, error) {
	conds := []string{"1"}
	var args []any
	for _, c := range []struct{ col, v string }{{"provider", q.Provider}, {"pricing", q.Pricing}, {"region", q.Region}} {
		if c.v != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	where := conds[0]
	for _, c := range conds[1:] {
		where += " AND " + c
	}
	// A series none of whose bars ever had q's GPU has no bar to read (the bars
	// read are those of the GPU; the tier is filtered after their versions).
	having := "1"
	if q.GPU != "" {
		having = "arrayExists(x -> x.2 = ?, as)"
		args = append(args, q.GPU)
	}
	rows, err := s.conn.Query(ctx, `SELECT id, provider, sku, region, zone, pricing, toUInt32(f),
		toUInt32(l.1), l.2, l.3, l.4, l.5, l.6, l.7, l.8, l.9, l.10, toUInt32(l.11), l.12, l.13,
		a.1, a.2, a.3, a.4, a.5, a.6
	FROM (SELECT cityHash64(provider, sku, region, zone, pricing) AS id, provider, sku, region, zone, pricing,
			minMerge(first_start) AS f, argMaxMerge(last_bar) AS l, groupUniqArrayMerge(attrs) AS as
		FROM day_series WHERE `+where+`
		GROUP BY provider, sku, region, zone, pricing
		HAVING `+having+`)
	ARRAY JOIN as AS a`, args...)
	if err != nil {
		return nil, false, s.wrap("bars: day_series", err)
	}
	defer rows.Close()
	out := map[uint64]*daySeries{}
	for rows.Next() {
		var (
			id           uint64
			key          [5]string
			first, start uint32
			b            store.Bar
			n            uint64
			seen         uint32
			aid          uint64
			a            barAttrs
		)
		if err := rows.Scan(&id, &key[0], &key[1], &key[2], &key[3], &key[4], &first,
			&start, &b.GPU, &b.Tier, &b.Interconnect, &b.Open, &b.High, &b.Low, &b.Close, &b.Mean, &n, &seen,
			&b.PriceScope, &b.PriceBasis, &aid, &a.gpu, &a.tier, &a.interconnect, &a.scope, &a.basis); err != nil {
			return nil, false, s.wrap("bars: day_series", err)
		}
		ds := out[id]
		if ds == nil {
			b.Provider, b.SKU, b.Region, b.Zone, b.Pricing = key[0], key[1], key[2], key[3], key[4]
			b.Start, b.Count, b.LastObservedAt = time.Unix(int64(start), 0).UTC(), int64(n), unixOrZero(int64(seen))
			ds = &daySeries{key: key, first: time.Unix(int64(first), 0).UTC(), last: b, attrs: map[uint64]barAttrs{}}
			out[id] = ds
		} else if ds.key != key {
			return nil, false, nil // a series_id collision
		}
		ds.attrs[aid] = a
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.wrap("bars: day_series", err)
	}
	return out, true, nil
}

// dailyBars is Bars for daily bars, reading no string per bar and no history
// before the window but a few days: the bars of [q.Since − carryLookback,
// q.Until) as numbers (series_id, attrs_id, start, version and figures), named
// from day_series. The bar carried in is the latest bar of those before q.Since
// (after the tier filter); for a series with none there, day_series' last bar
// when it is older than the days read and matches the filter; no bar when the
// series' first bar is not before q.Since or no bar of it ever had q's GPU or
// tier; else (bars on both sides of a longer gap, or a last bar of another GPU or
// tier) the series' history before the window is read as TableBars reads it.
//
// The answer is TableBars' (the conformance suite and
// TestIntegrationClickHouseDailyBars check it). ok is false, with no error, when
// day_series cannot name every bar read (a bar written after the states read, or
// a series_id collision): then TableBars answers.
func (s *Store) dailyBars(ctx context.Context, q store.BarQuery) ([]store.Bar, bool, error) {
	// The states and the bars are read at once (two round trips in the time of one).
	type stateRead struct {
		states map[uint64]*daySeries
		ok     bool
		err    error
	}
	stateCh := make(chan stateRead, 1)
	go func() {
		states, ok, err := s.daySeriesOf(ctx, q)
		stateCh <- stateRead{states, ok, err}
	}()
	carry := q.CarryIn && !q.Since.IsZero()
	lo := q.Since
	if carry {
		lo = q.Since.Add(-carryLookback)
	}
	where, args := barConds(q, lo, q.Until)
	rows, err := s.conn.Query(ctx, `SELECT series_id, attrs_id, toUInt32(bar_start), version, open, high, low, close, mean,
		count, toUInt32(last_observed_at)
	FROM bars WHERE `+where, args...)
	if err != nil {
		<-stateCh
		return nil, false, s.wrap("bars", err)
	}
	type row struct {
		attrs                        uint64
		start                        uint32
		version                      uint64
		open, high, low, close, mean float64
		count                        uint64
		seen                         uint32
	}
	byID := map[uint64][]row{}
	var (
		id uint64 // one pair for every row: Scan's pointers would move a pair per row to the heap
		r  row
		n  int
	)
	for rows.Next() {
		if err := rows.Scan(&id, &r.attrs, &r.start, &r.version, &r.open, &r.high, &r.low, &r.close, &r.mean,
			&r.count, &r.seen); err != nil {
			rows.Close()
			<-stateCh
			return nil, false, s.wrap("bars", err)
		}
		byID[id] = append(byID[id], r)
		n++
	}
	rows.Close()
	got := <-stateCh
	if err := rows.Err(); err != nil {
		return nil, false, s.wrap("bars", err)
	}
	if got.err != nil || !got.ok {
		return nil, false, got.err
	}
	states := got.states
	since := uint32(clampTime(q.Since).Unix())
	window := make([]series, 0, len(byID))
	backing := make([]store.Bar, 0, n) // every series' bars, one allocation
	carried := map[[5]string]store.Bar{}
	for id, rs := range byID {
		st := states[id]
		if st == nil {
			return nil, false, nil // written after the states were read
		}
		less := func(a, b row) bool {
			if a.start != b.start {
				return a.start < b.start
			}
			return a.version < b.version
		}
		if !sort.SliceIsSorted(rs, func(i, j int) bool { return less(rs[i], rs[j]) }) {
			sort.Slice(rs, func(i, j int) bool { return less(rs[i], rs[j]) })
		}
		sr := series{key: st.key, bars: backing[len(backing) : len(backing) : len(backing)+len(rs)]}
		var pre store.Bar
		for i, r := range rs {
			if i+1 < len(rs) && rs[i+1].start == r.start {
				continue // a later version of the same bar follows
			}
			a, ok := st.attrs[r.attrs]
			if !ok {
				return nil, false, nil
			}
			if q.Tier != "" && a.tier != q.Tier {
				continue
			}
			b := store.Bar{Provider: st.key[0], SKU: st.key[1], Region: st.key[2], Zone: st.key[3], Pricing: st.key[4],
				Start: time.Unix(int64(r.start), 0).UTC(), GPU: a.gpu, Tier: a.tier, Interconnect: a.interconnect,
				PriceScope: a.scope, PriceBasis: a.basis, Open: r.open, High: r.high, Low: r.low, Close: r.close,
				Mean: r.mean, Count: int64(r.count), LastObservedAt: unixOrZero(int64(r.seen))}
			if carry && r.start < since {
				pre = b
				continue
			}
			sr.bars = append(sr.bars, b)
		}
		if len(sr.bars) > 0 {
			window = append(window, sr)
			backing = backing[:len(backing)+len(sr.bars)]
		}
		if !pre.Start.IsZero() {
			carried[st.key] = pre
		}
	}
	if !carry {
		return flatten(window, nil), true, nil
	}
	// Series without a bar in the days before the window read.
	var deep []uint64
	for id, st := range states {
		if _, ok := carried[st.key]; ok || !st.mayCarry(q) {
			continue
		}
		l := st.last
		if !l.Start.IsZero() && l.Start.Before(lo) && (q.GPU == "" || l.GPU == q.GPU) && (q.Tier == "" || l.Tier == q.Tier) {
			carried[st.key] = l
			continue
		}
		deep = append(deep, id)
	}
	if len(deep) > 0 {
		more, err := s.carryBars(ctx, q, deep)
		if err != nil {
			return nil, false, err
		}
		for k, b := range more {
			carried[k] = b
		}
	}
	return flatten(window, carried), true, nil
}

package clickhouse

import (
	"cmp"
	"context"
	"slices"
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

// daySeries is one series of day_series: its key and the attributes its bars had,
// by attrs_id (shared among the series of one read); with the first daily bar
// start and last daily bar (Start zero when unknown) once read (lastRead).
type daySeries struct {
	key   [5]string
	attrs map[uint64]*store.BarAttrs
	first time.Time
	last  store.Bar
}

// daySeriesConds returns the conditions on day_series of q's provider, pricing and
// region, with their arguments.
func daySeriesConds(q store.BarQuery) (string, []any) {
	where := "1"
	var args []any
	for _, c := range []struct{ col, v string }{{"provider", q.Provider}, {"pricing", q.Pricing}, {"region", q.Region}} {
		if c.v != "" {
			where += " AND " + c.col + " = ?"
			args = append(args, c.v)
		}
	}
	return where, args
}

// daySeriesOf reads the names of day_series for the series q's provider, pricing
// and region select and some bar of which had q's GPU, by series_id: each series'
// key and attributes (first and last are read for the few that need them:
// lastRead). ok is false when two series share a series_id (then only the bars
// table tells their bars apart).
func (s *Store) daySeriesOf(ctx context.Context, q store.BarQuery) (map[uint64]*daySeries, bool, error) {
	where, args := daySeriesConds(q)
	// A series none of whose bars ever had q's GPU has no bar to read (the bars
	// read are those of the GPU; the tier is filtered after their versions).
	having := "1"
	if q.GPU != "" {
		having = "arrayExists(x -> x.2 = ?, as)"
		args = append(args, q.GPU)
	}
	rows, err := s.conn.Query(ctx, `SELECT id, provider, sku, region, zone, pricing, a.1, a.2, a.3, a.4, a.5, a.6
	FROM (SELECT cityHash64(provider, sku, region, zone, pricing) AS id, provider, sku, region, zone, pricing,
			groupUniqArrayMerge(attrs) AS as
		FROM day_series WHERE `+where+`
		GROUP BY provider, sku, region, zone, pricing
		HAVING `+having+`)
	ARRAY JOIN as AS a`, args...)
	if err != nil {
		return nil, false, s.wrap("bars: day_series", err)
	}
	defer rows.Close()
	out := map[uint64]*daySeries{}
	shared := map[uint64]*store.BarAttrs{} // one copy of each attribute set
	for rows.Next() {
		var (
			id, aid uint64
			key     [5]string
			a       store.BarAttrs
		)
		if err := rows.Scan(&id, &key[0], &key[1], &key[2], &key[3], &key[4],
			&aid, &a.GPU, &a.Tier, &a.Interconnect, &a.PriceScope, &a.PriceBasis); err != nil {
			return nil, false, s.wrap("bars: day_series", err)
		}
		ds := out[id]
		if ds == nil {
			ds = &daySeries{key: key, attrs: map[uint64]*store.BarAttrs{}}
			out[id] = ds
		} else if ds.key != key {
			return nil, false, nil // a series_id collision
		}
		p := shared[aid]
		if p == nil || *p != a {
			p = &a
			shared[aid] = p
		}
		ds.attrs[aid] = p
	}
	if err := rows.Err(); err != nil {
		return nil, false, s.wrap("bars: day_series", err)
	}
	return out, true, nil
}

// lastRead reads from day_series the first daily bar start and the last daily bar
// of the series ids (of states, which daySeriesOf read for q) into their states:
// what a series without a bar in the days read before a window needs (the merge
// of every last bar's state costs more than the rest of day_series' read).
func (s *Store) lastRead(ctx context.Context, q store.BarQuery, states map[uint64]*daySeries, ids []uint64) error {
	where, args := daySeriesConds(q)
	rows, err := s.conn.Query(ctx, `SELECT id, provider, sku, region, zone, pricing, toUInt32(f),
		toUInt32(l.1), l.2, l.3, l.4, l.5, l.6, l.7, l.8, l.9, l.10, toUInt32(l.11), l.12, l.13
	FROM (SELECT cityHash64(provider, sku, region, zone, pricing) AS id, provider, sku, region, zone, pricing,
			minMerge(first_start) AS f, argMaxMerge(last_bar) AS l
		FROM day_series WHERE `+where+` AND has(?, cityHash64(provider, sku, region, zone, pricing))
		GROUP BY provider, sku, region, zone, pricing)`, append(args, ids)...)
	if err != nil {
		return s.wrap("bars: day_series", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id           uint64
			b            store.Bar
			first, start uint32
			n            uint64
			seen         uint32
		)
		if err := rows.Scan(&id, &b.Provider, &b.SKU, &b.Region, &b.Zone, &b.Pricing, &first,
			&start, &b.GPU, &b.Tier, &b.Interconnect, &b.Open, &b.High, &b.Low, &b.Close, &b.Mean, &n, &seen,
			&b.PriceScope, &b.PriceBasis); err != nil {
			return s.wrap("bars: day_series", err)
		}
		ds := states[id]
		if ds == nil || ds.key != [5]string{b.Provider, b.SKU, b.Region, b.Zone, b.Pricing} {
			continue // a series written since, sharing a series_id: not one of ids
		}
		b.Start, b.Count, b.LastObservedAt = time.Unix(int64(start), 0).UTC(), int64(n), unixOrZero(int64(seen))
		ds.first, ds.last = time.Unix(int64(first), 0).UTC(), b
	}
	if err := rows.Err(); err != nil {
		return s.wrap("bars: day_series", err)
	}
	return nil
}

// carryCandidates returns the series of states (read by daySeriesOf for q) that
// may have a bar to carry into q's window, carried reporting those that have one
// already: some bar of the series had q's GPU and tier, and its first bar is
// before the window. It reads their first start and last bar (lastRead), which
// tell where that bar is.
func (s *Store) carryCandidates(ctx context.Context, q store.BarQuery, states map[uint64]*daySeries,
	carried func(id uint64, st *daySeries) bool) ([]uint64, error) {
	var ids []uint64
	for id, st := range states {
		if carried(id, st) {
			continue
		}
		gpu, tier := q.GPU == "", q.Tier == ""
		for _, a := range st.attrs {
			gpu = gpu || a.GPU == q.GPU
			tier = tier || a.Tier == q.Tier
		}
		if gpu && tier {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if err := s.lastRead(ctx, q, states, ids); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ids, func(id uint64) bool { return !states[id].first.Before(q.Since) }), nil
}

// dailyRow is one stored daily bar as readDays reads it: numbers only, open, high,
// low, mean and count only when every figure is read.
type dailyRow struct {
	a                            *store.BarAttrs // attrs' names, once looked up
	attrs, version               uint64
	open, high, low, close, mean float64
	count                        uint64
	start, seen                  uint32
}

// sortRows orders rows by start then version. A series' rows come in a few runs,
// each in order (one per part the server read; parts are read in parallel), so an
// insertion sort moves few of them; a long series is sorted as any slice.
func sortRows(rs []dailyRow) {
	less := func(a, b *dailyRow) bool { return a.start < b.start || a.start == b.start && a.version < b.version }
	if len(rs) > 64 {
		slices.SortFunc(rs, func(a, b dailyRow) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.version, b.version))
		})
		return
	}
	for i := 1; i < len(rs); i++ {
		if !less(&rs[i], &rs[i-1]) {
			continue
		}
		r, j := rs[i], i
		for ; j > 0 && less(&r, &rs[j-1]); j-- {
			rs[j] = rs[j-1]
		}
		rs[j] = r
	}
}

// dayRead is the daily bars of one series read for a window: the window's bars
// (each start's last version, of the tier asked) by start, and the bar carried in:
// pre, the latest such bar of the days read before the window (start 0: none), or
// else carry, from day_series or the older history (nil: none).
type dayRead struct {
	st    *daySeries
	rows  []dailyRow
	pre   dailyRow
	carry *store.Bar
}

// bar is row of the series as a Bar.
func (r *dayRead) bar(row *dailyRow) store.Bar {
	a, k := row.a, &r.st.key
	return store.Bar{Provider: k[0], SKU: k[1], Region: k[2], Zone: k[3], Pricing: k[4],
		Start: time.Unix(int64(row.start), 0).UTC(), GPU: a.GPU, Tier: a.Tier, Interconnect: a.Interconnect,
		PriceScope: a.PriceScope, PriceBasis: a.PriceBasis, Open: row.open, High: row.high, Low: row.low,
		Close: row.close, Mean: row.mean, Count: int64(row.count), LastObservedAt: unixOrZero(int64(row.seen))}
}

// dailyBars is Bars for daily bars, reading no string per bar and no history
// before the window but a few days (readDays). The answer is TableBars' (the
// conformance suite and TestIntegrationClickHouseDailyBars check it). ok is false,
// with no error, when day_series cannot name every bar read: then TableBars answers.
func (s *Store) dailyBars(ctx context.Context, q store.BarQuery) ([]store.Bar, bool, error) {
	reads, n, ok, err := s.readDays(ctx, q, true)
	if err != nil || !ok {
		return nil, ok, err
	}
	window := make([]series, 0, len(reads))
	backing := make([]store.Bar, 0, n) // every series' bars, one allocation
	carried := map[[5]string]store.Bar{}
	for i := range reads {
		r := &reads[i]
		if len(r.rows) > 0 {
			sr := series{key: r.st.key, bars: backing[len(backing) : len(backing) : len(backing)+len(r.rows)]}
			for j := range r.rows {
				sr.bars = append(sr.bars, r.bar(&r.rows[j]))
			}
			window = append(window, sr)
			backing = backing[:len(backing)+len(sr.bars)]
		}
		if r.pre.start != 0 {
			carried[r.st.key] = r.bar(&r.pre)
		} else if r.carry != nil {
			carried[r.st.key] = *r.carry
		}
	}
	return flatten(window, carried), true, nil
}

var _ store.DayCloses = (*Store)(nil)

// DayCloses returns the daily bars of f with carry-in as Bars does, in the compact
// form day prices read (analytics.SpreadsOf): read as dailyBars reads them, with
// only the start, close, last sighting and attributes of each bar; from TableBars
// when day_series cannot name them.
func (s *Store) DayCloses(ctx context.Context, f store.Filter) ([]store.SeriesCloses, error) {
	q := store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true}
	reads, n, ok, err := s.readDays(ctx, q, false)
	if err != nil {
		return nil, err
	}
	if !ok {
		bars, err := s.TableBars(ctx, q)
		if err != nil {
			return nil, err
		}
		return store.ClosesOfBars(bars), nil
	}
	// By series, as flatten orders Bars.
	order := make([]*dayRead, len(reads))
	for i := range reads {
		order[i] = &reads[i]
	}
	slices.SortFunc(order, func(a, b *dayRead) int { return keyCompare(&a.st.key, &b.st.key) })
	out := make([]store.SeriesCloses, 0, len(reads))
	backing := make([]store.CloseBar, 0, n)
	for _, r := range order {
		k := &r.st.key
		sc := store.SeriesCloses{Provider: k[0], SKU: k[1], Region: k[2], Zone: k[3], Pricing: k[4],
			Bars: backing[len(backing):len(backing)]}
		if r.pre.start != 0 {
			sc.Bars = append(sc.Bars, r.pre.closeBar())
		} else if b := r.carry; b != nil {
			sc.Bars = append(sc.Bars, store.CloseBar{Start: b.Start, Close: b.Close, LastObservedAt: b.LastObservedAt,
				Attrs: &store.BarAttrs{GPU: b.GPU, Tier: b.Tier, Interconnect: b.Interconnect, PriceScope: b.PriceScope,
					PriceBasis: b.PriceBasis}})
		}
		for j := range r.rows {
			sc.Bars = append(sc.Bars, r.rows[j].closeBar())
		}
		if len(sc.Bars) > 0 {
			backing = backing[:len(backing)+len(sc.Bars)]
			sc.Bars = sc.Bars[:len(sc.Bars):len(sc.Bars)]
			out = append(out, sc)
		}
	}
	return out, nil
}

// closeBar is the row as a CloseBar.
func (row *dailyRow) closeBar() store.CloseBar {
	return store.CloseBar{Start: time.Unix(int64(row.start), 0).UTC(), Close: row.close,
		LastObservedAt: unixOrZero(int64(row.seen)), Attrs: row.a}
}

// readDays reads the daily bars q selects per series, reading no string per bar
// and no history before the window but a few days: the bars of [q.Since −
// carryLookback, q.Until) as numbers (series_id, attrs_id, start, version and the
// figures: all with full, else the close and last sighting alone), named from
// day_series; n is the number of bars they give, carried-in ones included. The bar
// carried in is the latest bar of those before q.Since (after the tier filter);
// for a series with none there, day_series' last bar when it is older than the
// days read and matches the filter; no bar when the series' first bar is not
// before q.Since or no bar of it ever had q's GPU or tier; else (bars on both
// sides of a longer gap, or a last bar of another GPU or tier) the series' history
// before the window is read as TableBars reads it.
//
// ok is false, with no error, when day_series cannot name every bar read (a bar
// written after the states read, or a series_id collision).
func (s *Store) readDays(
	ctx context.Context,
	q store.BarQuery,
	full bool,
) (reads []dayRead, n int, ok bool, err error) {
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
	// Each series' rows in a slice of their own (none of the large moves of one
	// growing slice): room for a few, then at once for a bar a day (a list price
	// has one bar in years, a collected price one a day).
	const few = 4
	perSeries := few
	if !lo.IsZero() && !q.Until.IsZero() && q.Until.After(lo) {
		perSeries = max(few, int(min(q.Until.Sub(lo)/store.Daily+2, 400)))
	}
	var (
		id     uint64 // one pair for every row: Scan's pointers would move a pair per row to the heap
		r      dailyRow
		slot   = map[uint64]int{} // series_id → its index in sids and series
		sids   []uint64
		series [][]dailyRow
		last   uint64 // the series of the previous row, at its index cur
		cur    int
	)
	cols := "close, toUInt32(last_observed_at)"
	dest := []any{&id, &r.attrs, &r.start, &r.version, &r.close, &r.seen}
	if full {
		cols += ", open, high, low, mean, count"
		dest = append(dest, &r.open, &r.high, &r.low, &r.mean, &r.count)
	}
	// Unordered: a server-side ORDER BY costs more than the grouping here.
	rows, err := s.conn.Query(ctx, `SELECT series_id, attrs_id, toUInt32(bar_start), version, `+cols+`
	FROM bars WHERE `+where, args...)
	if err != nil {
		<-stateCh
		return nil, 0, false, s.wrap("bars", err)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			<-stateCh
			return nil, 0, false, s.wrap("bars", err)
		}
		if id != last || len(sids) == 0 { // a part's rows of a series come together
			k, ok := slot[id]
			if !ok {
				k = len(sids)
				slot[id], sids, series = k, append(sids, id), append(series, make([]dailyRow, 0, few))
			}
			last, cur = id, k
		}
		if rs := series[cur]; len(rs) == few && cap(rs) == few {
			series[cur] = slices.Grow(rs, perSeries-few)
		}
		series[cur] = append(series[cur], r)
	}
	rows.Close()
	got := <-stateCh
	if err := rows.Err(); err != nil {
		return nil, 0, false, s.wrap("bars", err)
	}
	if got.err != nil || !got.ok {
		return nil, 0, false, got.err
	}
	states := got.states
	since := uint32(clampTime(q.Since).Unix())
	at := make(map[uint64]int, len(sids)) // series_id → its read
	for k, sid := range sids {
		st := states[sid]
		if st == nil {
			return nil, 0, false, nil // written after the states were read
		}
		rs, d := series[k], dayRead{st: st}
		sortRows(rs)
		// The last version of each start, of the tier asked, kept in place.
		w := rs[:0]
		for j := range rs {
			if j+1 < len(rs) && rs[j+1].start == rs[j].start {
				continue // a later version of the same bar follows
			}
			a, ok := st.attrs[rs[j].attrs]
			if !ok {
				return nil, 0, false, nil
			}
			rs[j].a = a
			if q.Tier != "" && a.Tier != q.Tier {
				continue
			}
			if carry && rs[j].start < since {
				d.pre = rs[j]
				continue
			}
			w = append(w, rs[j])
		}
		if d.rows = w; len(w) > 0 || d.pre.start != 0 {
			at[sid] = len(reads)
			reads = append(reads, d)
			n += len(w)
			if d.pre.start != 0 {
				n++
			}
		}
	}
	if !carry {
		return reads, n, true, nil
	}
	carryFrom := func(id uint64, b *store.Bar) {
		n++
		if i, ok := at[id]; ok {
			reads[i].carry = b
			return
		}
		at[id] = len(reads)
		reads = append(reads, dayRead{st: states[id], carry: b})
	}
	// Series without a bar in the days before the window read.
	need, err := s.carryCandidates(ctx, q, states, func(id uint64, _ *daySeries) bool {
		i, ok := at[id]
		return ok && reads[i].pre.start != 0
	})
	if err != nil {
		return nil, 0, false, err
	}
	var deep []uint64
	for _, id := range need {
		st := states[id]
		l := &st.last
		if !l.Start.IsZero() && l.Start.Before(lo) && (q.GPU == "" || l.GPU == q.GPU) &&
			(q.Tier == "" || l.Tier == q.Tier) {
			carryFrom(id, l)
			continue
		}
		deep = append(deep, id)
	}
	if len(deep) > 0 {
		more, err := s.carryBars(ctx, q, deep)
		if err != nil {
			return nil, 0, false, err
		}
		for _, id := range deep {
			if b, ok := more[states[id].key]; ok {
				carryFrom(id, &b)
			}
		}
	}
	return reads, n, true, nil
}

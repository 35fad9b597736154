package clickhouse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/store"
)

// volDay is one series' day as the fold combines it: volatility_days' summary of
// the day's hourly bars (volDayCols), or the same figures computed from the bars
// the day row keeps (dayOfBars), plus the hours below the threshold (hoursBelow) of the
// hoursTotal hours its bars cover. It holds no pointer (its GPU and tier are in its
// series' attrs), so that the garbage collector never scans the days read.
type volDay struct {
	day, firstStart uint32 // the day's start and its first bar's, Unix seconds
	version         uint64
	uniform         uint8 // every bar has the GPU and tier attr names
	attr            int32 // its GPU and tier: volSeries.attrs[attr]; −1: not read
	// The day's bars, log returns and price changes, and the columns of the same
	// names in volatility_days (migration 15): first and last close, high, low,
	// largest and smallest close, Σ (close − first_close) and its square, the first
	// return, Σ (r − ret_first) and its square, smallest and largest return, the
	// largest drawdown.
	bars, returns, changes                               uint32
	firstClose, lastClose, high, low, closeMax, closeMin float64
	closeDevSum, closeDevSumSq                           float64
	retFirst, retDevSum, retDevSumSq, retMin, retMax     float64
	drawdown                                             float64
	hoursBelow, hoursTotal                               uint64 // with a threshold: the hours below it of those covered
}

// dayRow is a volatility_days row read as its bars: its series, day, version,
// and bars (start, close, high, low); their GPU and tier when they all have the
// same (uniform = 1), else each bar's (gpus, tiers).
type dayRow struct {
	day                 uint32
	version             uint64
	uniform             uint8
	gpu, tier           string
	starts              []uint32
	closes, highs, lows []float64
	gpus, tiers         []string
}

// attrs returns the GPU and tier of bar i.
func (r *dayRow) attrs(i int) (gpu, tier string) {
	if r.uniform != 0 {
		return r.gpu, r.tier
	}
	return r.gpus[i], r.tiers[i]
}

// volSeries is a series and its rows as read: day summaries and days as bars,
// every version.
type volSeries struct {
	days  []volDay
	bars  []*dayRow
	attrs [][2]string // the GPU and tier of days (volDay.attr)
}

// seriesID identifies a series in a read: volatility_days.series_id, the
// cityHash64 of its provider, sku, region, zone and pricing, so that the rows carry
// one number instead of five strings (clickhouse-go allocates every string it
// scans); seriesName names them. Series are told apart by it as bars.series_id
// and day_series tell them apart for spreads (migration 13).
type seriesID = uint64

// seriesName is a series' identity, and the GPU and tier of the latest version of
// its row of day dy (whole: of its last whole day of the window).
type seriesName struct {
	key     [5]string
	gpu, tr string
	dy      uint32
	whole   bool
}

// volRead gathers the rows of one read by series.
type volRead map[seriesID]*volSeries

func (m volRead) series(id seriesID) *volSeries {
	v := m[id]
	if v == nil {
		v = &volSeries{}
		m[id] = v
	}
	return v
}

// errVolDaysMoved is returned when a day row read first is missing from a later
// read: the day was rebuilt (and merged) between the reads. dayVolatilities then
// reads again.
var errVolDaysMoved = errors.New("volatility_days changed during the read")

// dayVolatilities is Volatilities of hourly bars from volatility_days: per series
// and day, the row of the highest version; for the days the window holds whole
// (and, with a tier or GPU filter, whose bars all have one tier and GPU), its
// summary; for the days the window cuts (or a filter splits), the same figures
// computed from the day's bars kept in the row, those the window and filter
// select (dayOfBars). Per series the days, in order, then combine (fold) as
// analytics.SeriesVolatilityOf defines the figures over the concatenated bars.
//
// The server only selects rows (the summaries of whole days; the bars of cut days,
// one a row), and they are deduplicated by version and combined here. The reads
// filter with PREWHERE: ClickHouse 18.16 then reads the other columns of the rows
// that pass only (the days and pricing a granule of 8192 rows holds besides them
// are a large part of it), where WHERE on key columns reads whole granules. ClickHouse
// 18.16 spends most of a second analysing a query that does the same arithmetic
// with nested lambdas and subqueries, whatever the data; reading the rows (about
// 30 per series for 30 days) takes milliseconds.
func (s *Store) dayVolatilities(
	ctx context.Context,
	q store.BarQuery,
	end time.Time,
	below float64,
) ([]store.SeriesVolatility, error) {
	out, err := s.readDayVolatilities(ctx, q, end, below)
	if errors.Is(err, errVolDaysMoved) {
		out, err = s.readDayVolatilities(ctx, q, end, below)
	}
	return out, err
}

func (s *Store) readDayVolatilities(
	ctx context.Context,
	q store.BarQuery,
	end time.Time,
	below float64,
) ([]store.SeriesVolatility, error) {
	const day = 24 * time.Hour
	var since, until time.Time
	if !q.Since.IsZero() {
		since = clampTime(q.Since)
	}
	if !q.Until.IsZero() {
		until = clampTime(q.Until)
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return nil, nil
	}
	// Whole days: [wholeFrom, wholeTo) (a zero bound is open); cut days: edges.
	var wholeFrom, wholeTo time.Time
	var edges []time.Time
	if !since.IsZero() {
		wholeFrom = since.Truncate(day)
		if wholeFrom.Before(since) {
			edges = append(edges, wholeFrom)
			wholeFrom = wholeFrom.Add(day)
		}
	}
	if !until.IsZero() {
		wholeTo = until.Truncate(day)
		if wholeTo.Before(until) && (len(edges) == 0 || !edges[0].Equal(wholeTo)) {
			edges = append(edges, wholeTo)
		}
	}
	wholeDays := wholeFrom.IsZero() || wholeTo.IsZero() || wholeFrom.Before(wholeTo)
	attrs := q.GPU != "" || q.Tier != ""
	endSec := uint32(clampTime(end).Unix())

	// The series' own conditions (in the table's key) and the whole days' range.
	var series sqlText
	for _, c := range []struct{ col, v string }{{"provider", q.Provider}, {"pricing", q.Pricing}, {"region", q.Region}} {
		if c.v != "" {
			series.add(" AND "+c.col+" = ?", c.v)
		}
	}
	var whole sqlText
	whole.add("1")
	if !wholeFrom.IsZero() {
		whole.add(" AND day >= ?", wholeFrom)
	}
	if !wholeTo.IsZero() {
		whole.add(" AND day < ?", wholeTo)
	}

	// The bars of the days the window cuts and, with a tier or GPU filter, of the
	// whole days whose bars differ in them.
	var cut sqlText
	for i, e := range edges {
		if i > 0 {
			cut.add(" OR ")
		}
		cut.add("day = ?", e)
	}
	if attrs && wholeDays {
		if len(edges) > 0 {
			cut.add(" OR ")
		}
		cut.add("uniform = 0 AND (").addQ(&whole).add(")")
	}
	// The reads at once: the server reads one while another's rows are scanned.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Blocks of 4096 rows: the rows of the first are scanned while the server
	// sends the next (of 65536, one block held most of a read).
	ctx = ch.Context(ctx, ch.WithSettings(ch.Settings{"max_block_size": 4096}))
	read, bars := make(volRead, 1024), make(volRead, 1024)
	names := make(map[seriesID]seriesName, 1024)
	var all sqlText // every day read
	errs := make(chan error, 3)
	reads := 0
	run := func(f func() error) {
		reads++
		go func() { errs <- f() }()
	}
	// The names (and the last day's GPU and tier) from one day's rows, the window's
	// last whole day or else its last cut day: every series of the window but those
	// it lacks, for which all days are read after.
	var namesDay time.Time
	var summaries func() error
	if wholeDays {
		all.add("(").addQ(&whole).add(")")
		days := 0 // whole days in the window, when it is bounded: the rows of a series
		if !wholeFrom.IsZero() && !wholeTo.IsZero() {
			days = min(int(wholeTo.Sub(wholeFrom)/day), 1000)
		}
		if !wholeTo.IsZero() {
			namesDay = wholeTo.Add(-day)
		}
		summaries = func() error { return s.readDaySummaries(ctx, &whole, &series, attrs, endSec, below, days, read) }
	}
	if cut.b.Len() > 0 {
		if all.b.Len() > 0 {
			all.add(" OR ")
		}
		all.add("(").addQ(&cut).add(")")
		if !wholeDays && len(edges) > 0 {
			namesDay = edges[len(edges)-1]
		}
		// First: its rows take the longest to come (the cut days' bar arrays are
		// read for whole granules).
		run(func() error { return s.readDayBars(ctx, &cut, &series, since, until, bars) })
	}
	if summaries != nil {
		run(summaries)
	}
	if reads == 0 {
		return nil, nil
	}
	if namesDay.IsZero() {
		run(func() error { return s.readSeriesNames(ctx, &all, &whole, &series, names) })
	} else {
		run(func() error { return s.readDayNames(ctx, namesDay, &series, names) })
	}
	var err error
	for range reads {
		if e := <-errs; e != nil && err == nil {
			err = e
			cancel()
		}
	}
	if err != nil {
		return nil, err
	}
	n := 0
	for id, b := range bars {
		v := read.series(id)
		v.bars = b.bars
		n += len(v.bars)
	}
	for _, v := range read {
		n += len(v.days)
	}

	var sinceSec, untilSec uint32
	if !since.IsZero() {
		sinceSec = uint32(since.Unix())
	}
	if !until.IsZero() {
		untilSec = uint32(until.Unix())
	}
	keep := func(r *dayRow, i int) bool {
		x := r.starts[i]
		if (!since.IsZero() && x < sinceSec) || (!until.IsZero() && x >= untilSec) {
			return false
		}
		if !attrs {
			return true
		}
		g, t := r.attrs(i)
		return (q.GPU == "" || g == q.GPU) && (q.Tier == "" || t == q.Tier)
	}
	// Each series' days of the window, in one slab.
	type windowDays struct {
		id   seriesID
		v    *volSeries
		days []*volDay
	}
	wins := make([]windowDays, 0, len(read))
	slab := make([]*volDay, 0, n)
	var refs []dayRef
	var days []*volDay
	named := !namesDay.IsZero()
	for id, v := range read {
		if refs, days, err = v.window(attrs, q.GPU, q.Tier, keep, endSec, below, refs,
			slab[len(slab):len(slab)]); err != nil {
			return nil, err
		}
		if len(days) == 0 {
			continue
		}
		slab = slab[:len(slab)+len(days)]
		wins = append(wins, windowDays{id, v, days})
		if named {
			name, ok := names[id]
			last := days[len(days)-1]
			named = ok && (last.attr >= 0 || name.dy == last.day)
		}
	}
	if !named && !namesDay.IsZero() {
		// A series the day's rows do not name, or whose last whole day is earlier.
		clear(names)
		if err := s.readSeriesNames(ctx, &all, &whole, &series, names); err != nil {
			return nil, err
		}
	}
	out := make([]store.SeriesVolatility, 0, len(wins))
	for _, w := range wins {
		name, ok := names[w.id]
		if !ok {
			return nil, errVolDaysMoved
		}
		gpu, tier := name.gpu, name.tr
		if last := w.days[len(w.days)-1]; last.attr >= 0 {
			gpu, tier = w.v.attrs[last.attr][0], w.v.attrs[last.attr][1]
		} else if !name.whole && name.dy != last.day {
			// A whole day: its GPU and tier were read with the names.
			return nil, errVolDaysMoved
		}
		out = append(out, fold(name.key, gpu, tier, w.days, q.Width, endSec, below))
	}
	slices.SortFunc(out, func(a, b store.SeriesVolatility) int {
		for _, c := range [][2]string{{a.Provider, b.Provider}, {a.SKU, b.SKU}, {a.Region, b.Region}, {a.Zone, b.Zone},
			{a.Pricing, b.Pricing}} {
			if n := strings.Compare(c[0], c[1]); n != 0 {
				return n
			}
		}
		return 0
	})
	return out, nil
}

// readDaySummaries reads the summaries of the days dayCond selects, of the series
// conds selects, every version, into m (days: the rows a series likely has): with
// attrs (a GPU or tier filter), each day's GPU and tier; with a threshold (below >
// 0), the hours of each day below it.
func (s *Store) readDaySummaries(
	ctx context.Context,
	dayCond, conds *sqlText,
	attrs bool,
	end uint32,
	below float64,
	days int,
	m volRead,
) error {
	// Every column is a call per row to scan: only those the figures need.
	var id seriesID
	var g, t string
	d := volDay{attr: -1}
	q := (&sqlText{}).add(`SELECT series_id, toUInt32(day) AS dy, version, bars, first_close, last_close, high, low,
		close_max, close_min, close_s1, close_s2, returns, ret_first, ret_s1, ret_s2, ret_min, ret_max, changes, drawdown`)
	dst := []any{
		&id,
		&d.day,
		&d.version,
		&d.bars,
		&d.firstClose,
		&d.lastClose,
		&d.high,
		&d.low,
		&d.closeMax,
		&d.closeMin,
		&d.closeDevSum,
		&d.closeDevSumSq,
		&d.returns,
		&d.retFirst,
		&d.retDevSum,
		&d.retDevSumSq,
		&d.retMin,
		&d.retMax,
		&d.changes,
		&d.drawdown,
	}
	if attrs {
		q.add(`, uniform, gpu, tier`)
		dst = append(dst, &d.uniform, &g, &t)
	}
	if below > 0 {
		// The first bar's start (for the hours after the day), the hours each bar
		// covers (up to the next, the day's end or end) and those below the
		// threshold: as dayOfBars.
		ks := `arrayMap((xa, xb) -> toUInt64(greatest(0, intDiv(toInt64(least(xb, ?)) - toInt64(xa) + 3599, 3600))),
			starts, arrayPushBack(arrayPopFront(starts), toUInt32(dy + 86400)))`
		q.add(
			`, toUInt32(first_start), toUInt64(arraySum(arrayMap((xk, xc) -> if(xc < ?, xk, toUInt64(0)), `+ks+`, closes))),
			toUInt64(arraySum(`+ks+`))`,
			below,
			end,
			end,
		)
		dst = append(dst, &d.firstStart, &d.hoursBelow, &d.hoursTotal)
	}
	q.add(` FROM volatility_days PREWHERE (`).addQ(dayCond).add(`)`).addQ(conds)
	rows, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return s.wrap("volatility", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return s.wrap("volatility", err)
		}
		v := m.series(id)
		if v.days == nil {
			v.days = make([]volDay, 0, days)
		}
		if attrs {
			d.attr = int32(len(v.attrs))
			v.attrs = append(v.attrs, [2]string{g, t})
		}
		v.days = append(v.days, d)
	}
	if err := rows.Err(); err != nil {
		return s.wrap("volatility", err)
	}
	return nil
}

// readDayBars reads the bars kept in the volatility_days rows that dayCond and
// conds select, every version, into m: those that start in [since, until) (a zero
// bound is open) and each row's first.
//
// The bars come one a row (ARRAY JOIN): clickhouse-go scans an array element by
// element through reflection, ten times slower than the same values in rows. The
// series, GPU and tier come with a row's first bar only, and the bars' GPUs and
// tiers are read (readDayAttrs) only for the rows whose bars differ in them, so
// that few strings are read; the bars of a row arrive together, after its first.
func (s *Store) readDayBars(ctx context.Context, dayCond, conds *sqlText, since, until time.Time, m volRead) error {
	q := (&sqlText{}).add(`SELECT series_id, dy, version, uniform, if(i = 1, gpu, ''), if(i = 1, tier, ''), i, x, c, hb, lb
		FROM (SELECT series_id, toUInt32(day) AS dy, version, uniform, gpu, tier, starts, closes, highs, lows
			FROM volatility_days PREWHERE (`).
		addQ(dayCond).
		add(`)`).
		addQ(conds).
		add(`)
		ARRAY JOIN arrayEnumerate(starts) AS i, starts AS x, closes AS c, highs AS hb, lows AS lb`)
	var window []string
	if !since.IsZero() {
		window = append(window, "x >= ?")
		q.args = append(q.args, uint32(since.Unix()))
	}
	if !until.IsZero() {
		window = append(window, "x < ?")
		q.args = append(q.args, uint32(until.Unix()))
	}
	if len(window) > 0 {
		q.add(" WHERE i = 1 OR (" + strings.Join(window, " AND ") + ")")
	}
	rows, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return s.wrap("volatility", err)
	}
	defer rows.Close()
	var (
		cur     *dayRow
		mixed   []*dayRow // rows whose bars differ in GPU or tier, and their series
		mixedOf []seriesID
		id      seriesID
		g, t    string
		dy, i   uint32
		x       uint32
		v       uint64
		u       uint8
		c, h, l float64
	)
	for rows.Next() {
		if err := rows.Scan(&id, &dy, &v, &u, &g, &t, &i, &x, &c, &h, &l); err != nil {
			return s.wrap("volatility", err)
		}
		switch {
		case i == 1:
			// A day has at most 24 hourly bars.
			cur = &dayRow{
				day:     dy,
				version: v,
				uniform: u,
				gpu:     g,
				tier:    t,
				starts:  make([]uint32, 0, 24),
				closes:  make([]float64, 0, 24),
				highs:   make([]float64, 0, 24),
				lows:    make([]float64, 0, 24),
			}
			sr := m.series(id)
			sr.bars = append(sr.bars, cur)
			if u == 0 {
				mixed, mixedOf = append(mixed, cur), append(mixedOf, id)
			}
		case cur == nil || cur.day != dy || cur.version != v:
			return s.wrap("volatility", fmt.Errorf("bars of day %d version %d apart from their row's first", dy, v))
		}
		cur.starts, cur.closes, cur.highs, cur.lows = append(
			cur.starts,
			x,
		), append(
			cur.closes,
			c,
		), append(
			cur.highs,
			h,
		), append(
			cur.lows,
			l,
		)
	}
	if err := rows.Err(); err != nil {
		return s.wrap("volatility", err)
	}
	if len(mixed) > 0 {
		return s.readDayAttrs(ctx, dayCond, conds, mixed, mixedOf)
	}
	return nil
}

// readDayNames reads into m the names of the series with a row of day dy among
// those conds selects, and the GPU and tier of their row's latest version.
func (s *Store) readDayNames(ctx context.Context, dy time.Time, conds *sqlText, m map[seriesID]seriesName) error {
	q := (&sqlText{}).add(`SELECT series_id, provider, sku, region, zone, pricing, gpu, tier, version
		FROM volatility_days PREWHERE day = ?`, dy).addQ(conds)
	rows, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return s.wrap("volatility", err)
	}
	defer rows.Close()
	versions := make(map[seriesID]uint64, 1024)
	for rows.Next() {
		var id seriesID
		var v uint64
		n := seriesName{dy: uint32(dy.Unix())}
		if err := rows.Scan(&id, &n.key[0], &n.key[1], &n.key[2], &n.key[3], &n.key[4], &n.gpu, &n.tr, &v); err != nil {
			return s.wrap("volatility", err)
		}
		if o, ok := versions[id]; !ok || v > o {
			m[id], versions[id] = n, v
		}
	}
	if err := rows.Err(); err != nil {
		return s.wrap("volatility", err)
	}
	return nil
}

// readSeriesNames reads into m the names of the series of the rows dayCond and
// conds select, and the GPU and tier of the latest version of each one's last day
// that whole selects.
func (s *Store) readSeriesNames(ctx context.Context, dayCond, whole, conds *sqlText, m map[seriesID]seriesName) error {
	q := (&sqlText{}).add(`SELECT series_id, any(provider), any(sku), any(region), any(zone), any(pricing),
		argMaxIf(gpu, (day, version), `).addQ(whole).add(`), argMaxIf(tier, (day, version), `).addQ(whole).add(`)
		FROM volatility_days PREWHERE (`).addQ(dayCond).add(`)`).addQ(conds).add(` GROUP BY series_id`)
	rows, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return s.wrap("volatility", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id seriesID
		n := seriesName{whole: true}
		if err := rows.Scan(&id, &n.key[0], &n.key[1], &n.key[2], &n.key[3], &n.key[4], &n.gpu, &n.tr); err != nil {
			return s.wrap("volatility", err)
		}
		m[id] = n
	}
	if err := rows.Err(); err != nil {
		return s.wrap("volatility", err)
	}
	return nil
}

// readDayAttrs sets the GPU and tier of each bar of the rows whose bars differ in
// them (rows, of the series keys), from the rows dayCond and conds select.
func (s *Store) readDayAttrs(ctx context.Context, dayCond, conds *sqlText, rows []*dayRow, keys []seriesID) error {
	type rowKey struct {
		series  seriesID
		dy      uint32
		version uint64
	}
	want := make(map[rowKey]*dayRow, len(rows))
	for i, r := range rows {
		want[rowKey{keys[i], r.day, r.version}] = r
	}
	q := (&sqlText{}).add(`SELECT series_id, toUInt32(day), version, starts, gpus, tiers
		FROM volatility_days PREWHERE uniform = 0 AND (`).addQ(dayCond).add(`)`).addQ(conds)
	res, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return s.wrap("volatility", err)
	}
	defer res.Close()
	for res.Next() {
		var k rowKey
		var S []uint32
		var G, T []string
		if err := res.Scan(&k.series, &k.dy, &k.version, &S, &G, &T); err != nil {
			return s.wrap("volatility", err)
		}
		r := want[k]
		if r == nil {
			continue
		}
		// The bars read are those of the window and the row's first: by start.
		r.gpus, r.tiers = make([]string, len(r.starts)), make([]string, len(r.starts))
		j := 0
		for i, x := range S {
			if j < len(r.starts) && r.starts[j] == x {
				r.gpus[j], r.tiers[j] = G[i], T[i]
				j++
			}
		}
		delete(want, k)
	}
	if err := res.Err(); err != nil {
		return s.wrap("volatility", err)
	}
	if len(want) > 0 {
		return errVolDaysMoved
	}
	return nil
}

// window returns the series' days of the window, in order: per day the row of the
// highest version; its summary when the day is whole (with a tier or GPU filter,
// when its bars all have one GPU and tier, and those match), else the figures of
// its bars that keep selects. The days are appended to out[:0] (reused from one
// series to the next, as refs is), the summaries as pointers into v.days.
func (v *volSeries) window(attrs bool, gpu, tier string, keep func(*dayRow, int) bool, end uint32, below float64,
	refs []dayRef, out []*volDay) ([]dayRef, []*volDay, error) {
	// The highest version of each day first, sorted through 16-byte references.
	refs = refs[:0]
	for i, d := range v.days {
		refs = append(refs, dayRef{d.day, int32(i), d.version})
	}
	slices.SortFunc(refs, func(a, b dayRef) int {
		if a.dy != b.dy {
			return cmp.Compare(a.dy, b.dy)
		}
		return cmp.Compare(b.v, a.v)
	})
	// Days as bars (a few): likewise.
	slices.SortFunc(v.bars, func(a, b *dayRow) int {
		if a.day != b.day {
			return cmp.Compare(a.day, b.day)
		}
		return cmp.Compare(b.version, a.version)
	})
	bars := v.bars[:0]
	for _, r := range v.bars {
		if len(bars) == 0 || r.day != bars[len(bars)-1].day {
			bars = append(bars, r)
		}
	}
	out = out[:0]
	addBars := func(r *dayRow) {
		if d, g, t, ok := dayOfBars(r, keep, end, below); ok {
			d.attr = int32(len(v.attrs))
			v.attrs = append(v.attrs, [2]string{g, t})
			out = append(out, &d)
		}
	}
	b := 0
	for i, ref := range refs {
		if i > 0 && ref.dy == refs[i-1].dy {
			continue
		}
		for b < len(bars) && bars[b].day < ref.dy {
			addBars(bars[b])
			b++
		}
		d := &v.days[ref.i]
		if b < len(bars) && bars[b].day == ref.dy {
			// The day as bars when they are as new (a day whose bars differ in GPU
			// or tier, for a filter).
			r := bars[b]
			b++
			if r.version >= d.version {
				addBars(r)
				continue
			}
		}
		if attrs {
			if d.uniform == 0 {
				return refs, out, errVolDaysMoved
			}
			if a := v.attrs[d.attr]; (gpu != "" && a[0] != gpu) || (tier != "" && a[1] != tier) {
				continue
			}
		}
		out = append(out, d)
	}
	for ; b < len(bars); b++ {
		addBars(bars[b])
	}
	return refs, out, nil
}

// dayRef is a day summary's place among a series' days, sorted by day and version.
type dayRef struct {
	dy uint32
	i  int32
	v  uint64
}

// dayOfBars computes a day's figures (as dayFigures does when the day is written)
// from the bars of r that keep selects, in one pass; false when it selects none.
func dayOfBars(
	r *dayRow,
	keep func(*dayRow, int) bool,
	end uint32,
	below float64,
) (d volDay, gpu, tier string, ok bool) {
	d.day = r.day
	var peak float64 // the running maximum close
	var prev int     // the previous bar kept
	hours := func(i int, next uint32) {
		// The hours bar i covers up to next (or end), and those below the threshold.
		k := (int64(min(next, end)) - int64(r.starts[i]) + 3599) / 3600
		if k < 0 {
			k = 0
		}
		d.hoursTotal += uint64(k)
		if r.closes[i] < below {
			d.hoursBelow += uint64(k)
		}
	}
	for i, x := range r.closes {
		if !keep(r, i) {
			continue
		}
		if d.bars == 0 {
			d.firstStart, d.firstClose, d.high, d.low, d.closeMax, d.closeMin, peak = r.starts[i], x, r.highs[i], r.lows[i], x,
				x, x
		} else {
			d.high, d.low, d.closeMax, d.closeMin = max(d.high, r.highs[i]), min(d.low, r.lows[i]), max(d.closeMax, x),
				min(d.closeMin, x)
			a := r.closes[prev]
			if a > 0 && x > 0 {
				ret := math.Log(x / a)
				if d.returns == 0 {
					d.retFirst, d.retMin, d.retMax = ret, ret, ret
				}
				d.returns++
				d.retMin, d.retMax = min(d.retMin, ret), max(d.retMax, ret)
				d.retDevSum += ret - d.retFirst
				d.retDevSumSq += (ret - d.retFirst) * (ret - d.retFirst)
			}
			if a != x {
				d.changes++
			}
			if below > 0 {
				hours(prev, r.starts[i])
			}
		}
		d.closeDevSum += x - d.firstClose
		d.closeDevSumSq += (x - d.firstClose) * (x - d.firstClose)
		// The drawdown from the running peak, 1 − close/peak.
		peak = max(peak, x)
		if peak > 0 {
			d.drawdown = max(d.drawdown, 1-x/peak)
		}
		d.bars++
		d.lastClose, prev = x, i
	}
	if d.bars == 0 {
		return volDay{}, "", "", false
	}
	gpu, tier = r.attrs(prev)
	if below > 0 {
		hours(prev, r.day+86400)
	}
	return d, gpu, tier, true
}

// fold combines a series' days of the window, in order, into its figures (with
// the GPU and tier of its last day), as analytics.SeriesVolatilityOf defines them
// over the concatenated bars:
//
//   - returns: each day's, plus one across each pair of consecutive days (first close
//     over the previous day's last, both positive); their mean M, then
//     Σ (r − M)² = Σ_days [s2 + 2 (r₀ − M) s1 + k (r₀ − M)²] + Σ_across (r − M)², with
//     each day's k returns summed as s1 = Σ (r − r₀), s2 = Σ (r − r₀)² around its first
//     return r₀ (no cancellation); the closes the same way around each day's first close;
//   - changes: each day's, plus a first close that differs from the previous last;
//   - drawdown: with P the highest close of the days before, the largest of each
//     day's own drawdown and 1 − (the day's lowest close)/P: the largest value of
//     1 − close/peak over the bars, computed with the same operands (closes are
//     positive: the importer refuses others);
//   - the share of time below a threshold: each day's bars cover the hours up to
//     the next bar or the day's end, the last close of a day covers the hours up to
//     the next day's first bar (or the window's end).
//
// Sets of equal values (a flat series, equal returns) take the figures the
// sequential sums of analytics.Mean and SampleStd give them (store.VolatilitySums.Set), so that
// a series that never moved reads exactly what it reads from bars.
func fold(
	key [5]string,
	gpu, tier string,
	days []*volDay,
	width time.Duration,
	end uint32,
	below float64,
) store.SeriesVolatility {
	last := days[len(days)-1]
	out := store.SeriesVolatility{Provider: key[0], SKU: key[1], Region: key[2], Zone: key[3],
		Pricing: key[4], GPU: gpu, Tier: tier, Close: last.lastClose, Max: math.Inf(-1), Min: math.Inf(1)}

	// The returns across days.
	var across []float64
	for i := 1; i < len(days); i++ {
		if a, b := days[i-1].lastClose, days[i].firstClose; a > 0 && b > 0 {
			across = append(across, math.Log(b/a))
		}
	}
	var n, nr, changes, under, total uint64
	var rsum float64
	rmin, rmax := math.Inf(1), math.Inf(-1)
	cmin, cmax := math.Inf(1), math.Inf(-1)
	var csum, dd float64
	peak := 0.0 // the highest close of the days before (closes are positive)
	for i, d := range days {
		n += uint64(d.bars)
		nr += uint64(d.returns)
		rsum += d.retDevSum + float64(d.returns)*d.retFirst
		if d.returns > 0 {
			rmin, rmax = min(rmin, d.retMin), max(rmax, d.retMax)
		}
		csum += d.closeDevSum + float64(d.bars)*(d.firstClose-days[0].firstClose)
		cmin, cmax = min(cmin, d.closeMin), max(cmax, d.closeMax)
		out.Max, out.Min = max(out.Max, d.high), min(out.Min, d.low)
		changes += uint64(d.changes)
		if i > 0 && days[i-1].lastClose != d.firstClose {
			changes++
		}
		fromPeak := 0.0
		if peak > 0 {
			fromPeak = 1 - d.closeMin/peak
		}
		dd, peak = max(dd, d.drawdown, fromPeak), max(peak, d.closeMax)
		// The hours the day's last close stays in force after the day.
		next := end
		if i+1 < len(days) {
			next = days[i+1].firstStart
		}
		gap := (int64(min(next, end)) - int64(d.day) - 86400 + 3599) / 3600
		if gap < 0 {
			gap = 0
		}
		under += d.hoursBelow
		total += d.hoursTotal + uint64(gap)
		if d.lastClose < below {
			under += uint64(gap)
		}
	}
	for _, b := range across {
		rsum += b
		rmin, rmax = min(rmin, b), max(rmax, b)
	}
	nr += uint64(len(across))
	m := rsum / float64(nr)
	var ssr float64
	for _, d := range days {
		ssr += d.retDevSumSq + 2*(d.retFirst-m)*d.retDevSum + float64(d.returns)*(d.retFirst-m)*(d.retFirst-m)
	}
	for _, b := range across {
		ssr += (b - m) * (b - m)
	}
	mc := days[0].firstClose + csum/float64(n)
	var ssc float64
	for _, d := range days {
		ssc += d.closeDevSumSq + 2*(d.firstClose-mc)*d.closeDevSum + float64(d.bars)*(d.firstClose-mc)*(d.firstClose-mc)
	}

	store.VolatilitySums{Bars: int(n), Returns: int(nr), Changes: int(changes), RetMin: rmin, RetMax: rmax, RetSS: ssr,
		CloseMin: cmin, CloseMax: cmax, CloseMean: mc, CloseSS: ssc, Drawdown: dd, Under: under,
		Total: total}.Set(&out, width, below)
	return out
}

// sqlText is a query's text with its positional arguments in the order of their
// "?" in the text.
type sqlText struct {
	b    strings.Builder
	args []any
}

func (q *sqlText) add(text string, args ...any) *sqlText {
	q.b.WriteString(text)
	q.args = append(q.args, args...)
	return q
}

func (q *sqlText) addQ(o *sqlText) *sqlText { return q.add(o.b.String(), o.args...) }

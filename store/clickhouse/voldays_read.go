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

	"github.com/gpuprice/gpuprice/store"
)

// volDay is one series' day as the fold combines it: volatility_days' summary of
// the day's hourly bars (volDayCols), or the same figures computed from the bars
// the day row keeps (dayOfBars), plus the hours below the threshold (un) of the tt
// hours its bars cover.
type volDay struct {
	dy, fs                     uint32 // the day's start and its first bar's, Unix seconds
	version                    uint64
	u                          uint8 // uniform: every bar has the GPU and tier g, t
	g, t                       string
	n, rn, ch                  uint32
	fc, lc, hi, lo, cx, cn     float64
	c1, c2, rf, r1, r2, rl, rh float64 // rl, rh: ret_min, ret_max
	dd                         float64
	un, tt                     uint64
}

// dayRow is a volatility_days row read as its bars: its series, day, version,
// and bars (start, close, high, low, GPU, tier).
type dayRow struct {
	dy      uint32
	version uint64
	u       uint8
	S       []uint32
	C, H, L []float64
	G, T    []string
}

// volSeries is a series and its rows as read: day summaries and days as bars,
// every version.
type volSeries struct {
	key  [5]string
	days []volDay
	bars []*dayRow
}

// volRead gathers the rows of one read by series.
type volRead map[[5]string]*volSeries

func (m volRead) series(key [5]string) *volSeries {
	v := m[key]
	if v == nil {
		v = &volSeries{key: key}
		m[key] = v
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
// one a row), and they are deduplicated by version and combined here. ClickHouse
// 18.16 spends most of a second analysing a query that does the same arithmetic
// with nested lambdas and subqueries, whatever the data; reading the rows (about
// 30 per series for 30 days) takes milliseconds.
func (s *Store) dayVolatilities(ctx context.Context, q store.BarQuery, end time.Time, below float64) ([]store.SeriesVolatility, error) {
	out, err := s.readDayVolatilities(ctx, q, end, below)
	if errors.Is(err, errVolDaysMoved) {
		out, err = s.readDayVolatilities(ctx, q, end, below)
	}
	return out, err
}

func (s *Store) readDayVolatilities(ctx context.Context, q store.BarQuery, end time.Time, below float64) ([]store.SeriesVolatility, error) {
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
	// Both reads at once: the server reads one while the other's rows are scanned.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	read, bars := make(volRead, 1024), make(volRead, 1024)
	barsDone := make(chan error, 1)
	if cut.b.Len() > 0 {
		go func() { barsDone <- s.readDayBars(ctx, &cut, &series, since, until, bars) }()
	} else {
		barsDone <- nil
	}
	if wholeDays {
		if err := s.readDaySummaries(ctx, &whole, &series, endSec, below, read); err != nil {
			cancel()
			<-barsDone
			return nil, err
		}
	}
	if err := <-barsDone; err != nil {
		return nil, err
	}
	for k, b := range bars {
		read.series(k).bars = b.bars
	}

	var sinceSec, untilSec uint32
	if !since.IsZero() {
		sinceSec = uint32(since.Unix())
	}
	if !until.IsZero() {
		untilSec = uint32(until.Unix())
	}
	keep := func(r *dayRow, i int) bool {
		x := r.S[i]
		return (since.IsZero() || x >= sinceSec) && (until.IsZero() || x < untilSec) &&
			(q.GPU == "" || r.G[i] == q.GPU) && (q.Tier == "" || r.T[i] == q.Tier)
	}
	out := make([]store.SeriesVolatility, 0, len(read))
	var refs []dayRef
	var days []volDay
	for _, v := range read {
		var err error
		if refs, days, err = v.window(attrs, q.GPU, q.Tier, keep, endSec, below, refs, days); err != nil {
			return nil, err
		}
		if len(days) > 0 {
			out = append(out, fold(v.key, days, q.Width, endSec, below))
		}
	}
	slices.SortFunc(out, func(a, b store.SeriesVolatility) int {
		for _, c := range [][2]string{{a.Provider, b.Provider}, {a.SKU, b.SKU}, {a.Region, b.Region}, {a.Zone, b.Zone}, {a.Pricing, b.Pricing}} {
			if n := strings.Compare(c[0], c[1]); n != 0 {
				return n
			}
		}
		return 0
	})
	return out, nil
}

// readDaySummaries reads the summaries of the days dayCond selects, of the series
// conds selects, every version, into m; with a threshold (below > 0), the hours of
// each day below it.
func (s *Store) readDaySummaries(ctx context.Context, dayCond, conds *sqlText, end uint32, below float64, m volRead) error {
	q := (&sqlText{}).add(`SELECT provider, sku, region, zone, pricing, toUInt32(day) AS dy, version, uniform, gpu, tier,
		bars, toUInt32(first_start), first_close, last_close, high, low, close_max, close_min, close_s1, close_s2,
		returns, ret_first, ret_s1, ret_s2, ret_min, ret_max, changes, drawdown`)
	if below > 0 {
		// The hours each bar covers (up to the next, the day's end or end), and those
		// below the threshold: as hoursBelow.
		ks := `arrayMap((xa, xb) -> toUInt64(greatest(0, intDiv(toInt64(least(xb, ?)) - toInt64(xa) + 3599, 3600))),
			starts, arrayPushBack(arrayPopFront(starts), toUInt32(dy + 86400)))`
		q.add(`, toUInt64(arraySum(arrayMap((xk, xc) -> if(xc < ?, xk, toUInt64(0)), `+ks+`, closes))),
			toUInt64(arraySum(`+ks+`))`, below, end, end)
	}
	q.add(` FROM volatility_days WHERE (`).addQ(dayCond).add(`)`).addQ(conds)
	rows, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return s.wrap("volatility", err)
	}
	defer rows.Close()
	var key [5]string
	var d volDay
	dst := []any{&key[0], &key[1], &key[2], &key[3], &key[4], &d.dy, &d.version, &d.u, &d.g, &d.t,
		&d.n, &d.fs, &d.fc, &d.lc, &d.hi, &d.lo, &d.cx, &d.cn, &d.c1, &d.c2, &d.rn, &d.rf, &d.r1, &d.r2,
		&d.rl, &d.rh, &d.ch, &d.dd}
	if below > 0 {
		dst = append(dst, &d.un, &d.tt)
	}
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return s.wrap("volatility", err)
		}
		v := m.series(key)
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
	q := (&sqlText{}).add(`SELECT if(i = 1, provider, ''), if(i = 1, sku, ''), if(i = 1, region, ''), if(i = 1, zone, ''),
			if(i = 1, pricing, ''), dy, version, uniform, if(i = 1, gpu, ''), if(i = 1, tier, ''), i, x, c, hb, lb
		FROM (SELECT provider, sku, region, zone, pricing, toUInt32(day) AS dy, version, uniform, gpu, tier, starts,
				closes, highs, lows
			FROM volatility_days WHERE (`).addQ(dayCond).add(`)`).addQ(conds).add(`)
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
		mixedOf [][5]string
		key     [5]string
		g, t    string
		dy, i   uint32
		x       uint32
		v       uint64
		u       uint8
		c, h, l float64
	)
	for rows.Next() {
		if err := rows.Scan(&key[0], &key[1], &key[2], &key[3], &key[4], &dy, &v, &u, &g, &t, &i, &x, &c, &h, &l); err != nil {
			return s.wrap("volatility", err)
		}
		switch {
		case i == 1:
			cur = &dayRow{dy: dy, version: v, u: u}
			sr := m.series(key)
			sr.bars = append(sr.bars, cur)
			if u == 0 {
				mixed, mixedOf = append(mixed, cur), append(mixedOf, key)
			}
		case cur == nil || cur.dy != dy || cur.version != v:
			return s.wrap("volatility", fmt.Errorf("bars of day %d version %d apart from their row's first", dy, v))
		default:
			g, t = cur.G[0], cur.T[0]
		}
		cur.S, cur.C, cur.H, cur.L = append(cur.S, x), append(cur.C, c), append(cur.H, h), append(cur.L, l)
		cur.G, cur.T = append(cur.G, g), append(cur.T, t)
	}
	if err := rows.Err(); err != nil {
		return s.wrap("volatility", err)
	}
	if len(mixed) > 0 {
		return s.readDayAttrs(ctx, dayCond, conds, mixed, mixedOf)
	}
	return nil
}

// readDayAttrs sets the GPU and tier of each bar of the rows whose bars differ in
// them (rows, of the series keys), from the rows dayCond and conds select.
func (s *Store) readDayAttrs(ctx context.Context, dayCond, conds *sqlText, rows []*dayRow, keys [][5]string) error {
	type rowKey struct {
		series  [5]string
		dy      uint32
		version uint64
	}
	want := make(map[rowKey]*dayRow, len(rows))
	for i, r := range rows {
		want[rowKey{keys[i], r.dy, r.version}] = r
	}
	q := (&sqlText{}).add(`SELECT provider, sku, region, zone, pricing, toUInt32(day), version, starts, gpus, tiers
		FROM volatility_days WHERE uniform = 0 AND (`).addQ(dayCond).add(`)`).addQ(conds)
	res, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return s.wrap("volatility", err)
	}
	defer res.Close()
	for res.Next() {
		var k rowKey
		var S []uint32
		var G, T []string
		if err := res.Scan(&k.series[0], &k.series[1], &k.series[2], &k.series[3], &k.series[4], &k.dy, &k.version, &S, &G, &T); err != nil {
			return s.wrap("volatility", err)
		}
		r := want[k]
		if r == nil {
			continue
		}
		// The bars read are those of the window and the row's first: by start.
		j := 0
		for i, x := range S {
			if j < len(r.S) && r.S[j] == x {
				r.G[j], r.T[j] = G[i], T[i]
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
// series to the next, as refs is).
func (v *volSeries) window(attrs bool, gpu, tier string, keep func(*dayRow, int) bool, end uint32, below float64,
	refs []dayRef, out []volDay) ([]dayRef, []volDay, error) {
	// The highest version of each day first, sorted through 16-byte references.
	refs = refs[:0]
	for i, d := range v.days {
		refs = append(refs, dayRef{d.dy, int32(i), d.version})
	}
	slices.SortFunc(refs, func(a, b dayRef) int {
		if a.dy != b.dy {
			return cmp.Compare(a.dy, b.dy)
		}
		return cmp.Compare(b.v, a.v)
	})
	// Days as bars (a few): likewise.
	slices.SortFunc(v.bars, func(a, b *dayRow) int {
		if a.dy != b.dy {
			return cmp.Compare(a.dy, b.dy)
		}
		return cmp.Compare(b.version, a.version)
	})
	bars := v.bars[:0]
	for _, r := range v.bars {
		if len(bars) == 0 || r.dy != bars[len(bars)-1].dy {
			bars = append(bars, r)
		}
	}
	out = out[:0]
	addBars := func(r *dayRow) {
		if d, ok := dayOfBars(r, keep, end, below); ok {
			out = append(out, d)
		}
	}
	b := 0
	for i, ref := range refs {
		if i > 0 && ref.dy == refs[i-1].dy {
			continue
		}
		for b < len(bars) && bars[b].dy < ref.dy {
			addBars(bars[b])
			b++
		}
		d := &v.days[ref.i]
		if b < len(bars) && bars[b].dy == ref.dy {
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
			if d.u == 0 {
				return refs, out, errVolDaysMoved
			}
			if (gpu != "" && d.g != gpu) || (tier != "" && d.t != tier) {
				continue
			}
		}
		out = append(out, *d)
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

// hoursBelow returns the hours a day's bars (starts S, closes C) cover up to the
// next bar, the day's end or end, whichever is first, and those of them whose close
// is below the threshold.
func hoursBelow(S []uint32, C []float64, dy, end uint32, below float64) (under, total uint64) {
	for i, x := range S {
		next := dy + 86400
		if i+1 < len(S) {
			next = S[i+1]
		}
		k := (int64(min(next, end)) - int64(x) + 3599) / 3600
		if k < 0 {
			k = 0
		}
		total += uint64(k)
		if C[i] < below {
			under += uint64(k)
		}
	}
	return under, total
}

// dayOfBars computes a day's figures (as dayFigures does when the day is written)
// from the bars of r that keep selects; false when it selects none.
func dayOfBars(r *dayRow, keep func(*dayRow, int) bool, end uint32, below float64) (volDay, bool) {
	var S []uint32
	var C, H, L []float64
	var g, t string
	for i := range r.S {
		if keep(r, i) {
			S, C, H, L = append(S, r.S[i]), append(C, r.C[i]), append(H, r.H[i]), append(L, r.L[i])
			g, t = r.G[i], r.T[i]
		}
	}
	if len(C) == 0 {
		return volDay{}, false
	}
	n := len(C)
	d := volDay{dy: r.dy, fs: S[0], g: g, t: t, n: uint32(n), fc: C[0], lc: C[n-1],
		hi: slices.Max(H), lo: slices.Min(L), cx: slices.Max(C), cn: slices.Min(C)}
	var rets []float64
	for i, x := range C {
		d.c1 += x - C[0]
		d.c2 += (x - C[0]) * (x - C[0])
		if i == 0 {
			continue
		}
		if a := C[i-1]; a > 0 && x > 0 {
			rets = append(rets, math.Log(x/a))
		}
		if C[i-1] != x {
			d.ch++
		}
	}
	d.rn = uint32(len(rets))
	if len(rets) > 0 {
		d.rf, d.rl, d.rh = rets[0], slices.Min(rets), slices.Max(rets)
	}
	for _, x := range rets {
		d.r1 += x - d.rf
		d.r2 += (x - d.rf) * (x - d.rf)
	}
	// The drawdown from the running peak, 1 − close/peak.
	peak := math.Inf(-1)
	for _, x := range C {
		peak = max(peak, x)
		if peak > 0 {
			d.dd = max(d.dd, 1-x/peak)
		}
	}
	if below > 0 {
		d.un, d.tt = hoursBelow(S, C, r.dy, end, below)
	}
	return d, true
}

// fold combines a series' days of the window, in order, into its figures, as
// analytics.SeriesVolatilityOf defines them over the concatenated bars:
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
// sequential sums of analytics.Mean and SampleStd give them (sampleStdOf), so that
// a series that never moved reads exactly what it reads from bars.
func fold(key [5]string, days []volDay, width time.Duration, end uint32, below float64) store.SeriesVolatility {
	last := days[len(days)-1]
	out := seriesVolatility{store.SeriesVolatility{Provider: key[0], SKU: key[1], Region: key[2], Zone: key[3],
		Pricing: key[4], GPU: last.g, Tier: last.t, Close: last.lc, Max: math.Inf(-1), Min: math.Inf(1)}}

	// The returns across days.
	var across []float64
	for i := 1; i < len(days); i++ {
		if a, b := days[i-1].lc, days[i].fc; a > 0 && b > 0 {
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
		n += uint64(d.n)
		nr += uint64(d.rn)
		rsum += d.r1 + float64(d.rn)*d.rf
		if d.rn > 0 {
			rmin, rmax = min(rmin, d.rl), max(rmax, d.rh)
		}
		csum += d.c1 + float64(d.n)*(d.fc-days[0].fc)
		cmin, cmax = min(cmin, d.cn), max(cmax, d.cx)
		out.Max, out.Min = max(out.Max, d.hi), min(out.Min, d.lo)
		changes += uint64(d.ch)
		if i > 0 && days[i-1].lc != d.fc {
			changes++
		}
		fromPeak := 0.0
		if peak > 0 {
			fromPeak = 1 - d.cn/peak
		}
		dd, peak = max(dd, d.dd, fromPeak), max(peak, d.cx)
		// The hours the day's last close stays in force after the day.
		next := end
		if i+1 < len(days) {
			next = days[i+1].fs
		}
		gap := (int64(min(next, end)) - int64(d.dy) - 86400 + 3599) / 3600
		if gap < 0 {
			gap = 0
		}
		under += d.un
		total += d.tt + uint64(gap)
		if d.lc < below {
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
		ssr += d.r2 + 2*(d.rf-m)*d.r1 + float64(d.rn)*(d.rf-m)*(d.rf-m)
	}
	for _, b := range across {
		ssr += (b - m) * (b - m)
	}
	mc := days[0].fc + csum/float64(n)
	var ssc float64
	for _, d := range days {
		ssc += d.c2 + 2*(d.fc-mc)*d.c1 + float64(d.n)*(d.fc-mc)*(d.fc-mc)
	}

	out.Bars, out.Returns, out.Changes = int(n), int(nr), int(changes)
	switch {
	case nr < 2:
	case rmin == rmax:
		_, out.StdLogReturn = sampleStdOf(int(nr), rmin)
	default:
		out.StdLogReturn = math.Sqrt(math.Max(ssr, 0) / float64(nr-1))
	}
	out.StdLogReturn = store.Finite(out.StdLogReturn)
	out.Annualised = out.StdLogReturn * store.AnnualFactor(width)
	sd := math.NaN()
	if cmin == cmax {
		out.Mean, sd = sampleStdOf(int(n), cmin)
	} else {
		out.Mean, sd = mc, math.Sqrt(math.Max(ssc, 0)/float64(n-1))
	}
	out.CV = store.Finite(sd / out.Mean)
	out.setRest(dd, below, under, total)
	return out.SeriesVolatility
}

// sampleStdOf returns the mean and sample standard deviation of n copies of x as
// analytics.Mean and analytics.SampleStd compute them (sequential sums: the mean
// of copies of 0.1 is not exactly 0.1, nor their deviation 0); the deviation is
// NaN for n < 2.
func sampleStdOf(n int, x float64) (mean, std float64) {
	var sum float64
	for range n {
		sum += x
	}
	mean = sum / float64(n)
	if n < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for range n {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(n-1))
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

package clickhouse

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.Rollups = (*Store)(nil)

// barExpr is the bar_start expression of each width.
var barExpr = map[time.Duration]string{
	store.Hourly: "toStartOfHour(effective_at)",
	store.Daily:  "toStartOfDay(effective_at)",
}

// rollupChunk is the fewest days one INSERT … SELECT of a rollup covers when the
// span is longer, and rollupBudget the most rows it groups when a chunk grows past
// that: ClickHouse's GROUP BY keeps every key in memory, so a backfill over years
// holds a bounded number of identities at a time, not the whole table; and a span
// of sparse days (years of daily prices) takes a few queries, not one a week (each
// INSERT … SELECT costs 50–100 ms on 18.16 however few rows it reads).
const rollupChunk = 7 * store.Daily

var rollupBudget uint64 = 1_000_000

// dayChunks splits [since, until) (whole UTC days) into spans of whole days: each
// rollupChunk long (the last one shorter), then grown a day at a time while the
// rows it holds stay within rollupBudget. counts are the rows by UTC day start
// (Unix seconds); a day without a count holds none.
func dayChunks(since, until time.Time, counts map[int64]uint64) [][2]time.Time {
	var out [][2]time.Time
	for from := since; from.Before(until); {
		to := chunkEnd(from, until)
		var n uint64
		for d := from; d.Before(to); d = d.Add(store.Daily) {
			n += counts[d.Unix()]
		}
		for to.Before(until) && n+counts[to.Unix()] <= rollupBudget {
			n += counts[to.Unix()]
			to = to.Add(store.Daily)
		}
		out = append(out, [2]time.Time{from, to})
		from = to
	}
	return out
}

// chunks are the spans of whole days a rollup over [since, until) runs one
// INSERT … SELECT per (dayChunks), from the rows by UTC day that byDay (one of the
// queries below) counts in the span, with cond (and its args) added to its WHERE.
// A span of at most rollupChunk is one chunk, uncounted.
func (s *Store) chunks(ctx context.Context, since, until time.Time, byDay, cond string,
	args ...any) ([][2]time.Time, error) {
	if !since.Add(rollupChunk).Before(until) {
		return [][2]time.Time{{since, until}}, nil
	}
	res, err := s.conn.Query(ctx, byDay+cond+` GROUP BY d`,
		append([]any{clampTime(since), clampTime(until)}, args...)...)
	if err != nil {
		return nil, s.wrap("rollup: rows by day", err)
	}
	defer res.Close()
	counts := map[int64]uint64{}
	for res.Next() {
		var day uint32
		var n uint64
		if err := res.Scan(&day, &n); err != nil {
			return nil, s.wrap("rollup: rows by day", err)
		}
		counts[int64(day)] = n
	}
	if err := res.Err(); err != nil {
		return nil, s.wrap("rollup: rows by day", err)
	}
	return dayChunks(since, until, counts), nil
}

// Row counts by UTC day for chunks: the observations (effective_at) and the hourly
// bars (of version ?, the bars a rollup has just written, or of every version).
const (
	observationsByDay = `SELECT toUInt32(toStartOfDay(effective_at)) AS d, count() FROM observations
		WHERE effective_at >= ? AND effective_at < ?`
	hourlyBarsByDay = `SELECT toUInt32(toStartOfDay(bar_start)) AS d, count() FROM bars
		WHERE width = 3600 AND bar_start >= ? AND bar_start < ?`
)

// Rollup recomputes the bars of every width over the UTC days that meet [since,
// until) on the server, with one INSERT … SELECT per chunk of days (a week, or
// more while it holds at most rollupBudget observations: dayChunks) from the
// deduplicated observations; the new bars carry a higher version than any before
// them. Zero bounds are the first and last stored effective_at. Chunks are
// whole UTC days, so that no bar spans two of them.
func (s *Store) Rollup(ctx context.Context, since, until time.Time) error {
	if since.IsZero() || until.IsZero() {
		var lo, hi time.Time
		var n uint64
		if err := s.conn.QueryRow(ctx, `SELECT min(effective_at), max(effective_at), count() FROM observations`).Scan(&lo,
			&hi, &n); err != nil {
			return s.wrap("rollup: span", err)
		}
		if n == 0 {
			return nil
		}
		if since.IsZero() {
			since = lo
		}
		if until.IsZero() {
			until = hi.Add(time.Second)
		}
	}
	since, until = store.RollupSpan(since, until)
	spans, err := s.chunks(ctx, since, until, observationsByDay, "")
	if err != nil {
		return err
	}
	for _, sp := range spans {
		if err := s.rollupSpan(ctx, sp[0], sp[1]); err != nil {
			return err
		}
	}
	return nil
}

// rollupSpan rewrites the bars of every width from the observations of [since,
// until), whole UTC days, in one INSERT … SELECT: the observations are
// deduplicated once (the costly part: a GROUP BY over every identity) and each
// deduplicated row is counted in its bar of every width (ARRAY JOIN over the
// widths). Both levels group on the series' 128-bit hash (seriesKey) rather than
// on its five strings, which are carried along with any(): hashing the keys once
// per row costs less than a hash table keyed on strings (about a third less
// server CPU at 2M rows).
func (s *Store) rollupSpan(ctx context.Context, since, until time.Time) error {
	v := s.versions(1)
	if err := s.rebuildBars(ctx, since, until, v, nil); err != nil {
		return err
	}
	return s.derive(ctx, since, until, v)
}

// derive writes the summaries read from the bars (volatility days, day series) of
// the UTC days in [since, until) from the bars of version v just written there.
func (s *Store) derive(ctx context.Context, since, until time.Time, v uint64) error {
	if err := s.writeVolatilityDays(ctx, since, until, v); err != nil {
		return err
	}
	return s.rollupDaySeries(ctx, v, since, until)
}

// rebuildBars is rollupSpan's INSERT … SELECT with version v; days, when not nil,
// keeps the observations of those (provider, UTC day) pairs alone.
func (s *Store) rebuildBars(ctx context.Context, since, until time.Time, v uint64, days *providerDays) error {
	widths := make([]string, len(store.Widths))
	start := "toStartOfDay(effective_at)"
	for i, w := range store.Widths {
		sec := fmt.Sprint(int(w / time.Second))
		widths[i] = sec
		start = `if(b_width = ` + sec + `, ` + barExpr[w] + `, ` + start + `)`
	}
	// The last write of each identity, only the columns bars need; a bar's
	// last_observed_at is the latest observed_at of those last writes.
	q := `INSERT INTO bars (width, bar_start, provider, sku, region, zone, pricing, gpu, tier,
		interconnect, price_scope, price_basis, open, high, low, close, mean, count, last_observed_at, version)
	SELECT b_width, ` + start + ` AS b_start,
		any(i_provider), any(i_sku), any(i_region), any(i_zone), any(i_pricing),
		argMax(d_gpu, effective_at), argMax(d_tier, effective_at), argMax(d_interconnect, effective_at),
		argMax(d_price_scope, effective_at), argMax(d_price_basis, effective_at),
		argMin(d_price_usd_gpu_hour, effective_at), max(d_price_usd_gpu_hour),
		min(d_price_usd_gpu_hour), argMax(d_price_usd_gpu_hour, effective_at),
		avg(d_price_usd_gpu_hour), count(), max(d_observed_at), toUInt64(?)
	FROM (SELECT cityHash64(provider, sku, region, zone, pricing) AS h1,
			sipHash64(provider, sku, region, zone, pricing) AS h2, effective_at,
			any(provider) AS i_provider, any(sku) AS i_sku, any(region) AS i_region,
			any(zone) AS i_zone, any(pricing) AS i_pricing,
			argMax(gpu, version) AS d_gpu, argMax(tier, version) AS d_tier,
			argMax(interconnect, version) AS d_interconnect,
			argMax(price_scope, version) AS d_price_scope, argMax(price_basis, version) AS d_price_basis,
			argMax(price_usd_gpu_hour, version) AS d_price_usd_gpu_hour,
			argMax(observed_at, version) AS d_observed_at
		FROM observations WHERE effective_at >= ? AND effective_at < ?` + days.cond() + `
		GROUP BY h1, h2, effective_at)
	ARRAY JOIN [toUInt32(` + strings.Join(widths, "), toUInt32(") + `)] AS b_width
	GROUP BY b_width, h1, h2, b_start`
	args := append([]any{v, clampTime(since), clampTime(until)}, days.args()...)
	if err := s.conn.Exec(ctx, q, args...); err != nil {
		return s.wrap("rollup bars", err)
	}
	return nil
}

// unixOrZero is the time of sec Unix seconds in UTC, or the zero time for 0: the
// last_observed_at of a bar rolled up before schema version 4.
func unixOrZero(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// clampTime is t in whole seconds, UTC, within DateTime's range.
func clampTime(t time.Time) time.Time {
	t = t.UTC().Truncate(time.Second)
	switch {
	case t.Before(minTime):
		return minTime
	case t.After(maxTime):
		return maxTime
	}
	return t
}

// seriesKey groups bars by series on the server without hashing five strings per
// row into a hash table: two independent 64-bit hashes of the series' columns (a
// 128-bit key; a collision between two series is as unlikely as one in ClickHouse's
// own hashed GROUP BY keys).
const seriesKey = `cityHash64(provider, sku, region, zone, pricing), sipHash64(provider, sku, region, zone, pricing)`

// Bars returns the bars q selects, by series then bar start, each its last write.
// Daily bars are read as numbers named from day_series, with the bar carried in
// from there (dailyBars), or as TableBars reads them when day_series cannot name
// them; hourly bars as TableBars reads them, the bar carried in looked for in the
// days before the window first (hourlyCarry).
func (s *Store) Bars(ctx context.Context, q store.BarQuery) ([]store.Bar, error) {
	if err := store.CheckWidth(q.Width); err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	if q.Width == store.Daily {
		bars, ok, err := s.dailyBars(ctx, q)
		if err != nil || ok {
			return bars, err
		}
		return s.TableBars(ctx, q)
	}
	if !q.CarryIn || q.Since.IsZero() {
		return s.TableBars(ctx, q)
	}
	window, carry, _, err := s.hourlyCarry(
		ctx,
		q,
		func() ([]series, error) { return s.barSeries(ctx, q, q.Since, q.Until) },
	)
	if err != nil {
		return nil, err
	}
	return flatten(window, carry), nil
}

// TableBars is Bars from the bars table alone: every bar carried in is looked
// for in all history before the window (what Bars did before day_series; kept as
// its fallback and for the benchmark).
//
// The server groups nothing on strings and sends no string per bar (see
// barSeries): the window's rows travel as numbers and the versions of a bar are
// resolved here, the last one winning, as argMax(…, version) would on the server.
func (s *Store) TableBars(ctx context.Context, q store.BarQuery) ([]store.Bar, error) {
	if err := store.CheckWidth(q.Width); err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	window, err := s.barSeries(ctx, q, q.Since, q.Until)
	if err != nil {
		return nil, err
	}
	if !q.CarryIn || q.Since.IsZero() {
		return flatten(window, nil), nil
	}
	carry, err := s.carryBars(ctx, q, nil)
	if err != nil {
		return nil, err
	}
	return flatten(window, carry), nil
}

// series is the bars of one series, by start, once each.
type series struct {
	key  [5]string // provider, sku, region, zone, pricing
	bars []store.Bar
}

func (sr *series) less(o *series) bool { return keyCompare(&sr.key, &o.key) < 0 }

// keyCompare orders series keys column by column.
func keyCompare(a, b *[5]string) int {
	for i := range a {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// flatten returns the bars of every series, by series then start, each series'
// carried-in bar (if any) first.
func flatten(window []series, carry map[[5]string]store.Bar) []store.Bar {
	byKey := make(map[[5]string]int, len(window))
	for i := range window {
		byKey[window[i].key] = i
	}
	n := 0
	for _, sr := range window {
		n += len(sr.bars)
	}
	for k := range carry {
		if _, ok := byKey[k]; !ok {
			byKey[k] = len(window)
			window = append(window, series{key: k})
		}
		n++
	}
	sort.Slice(window, func(i, j int) bool { return window[i].less(&window[j]) })
	out := make([]store.Bar, 0, n)
	for _, sr := range window {
		if b, ok := carry[sr.key]; ok {
			out = append(out, b)
		}
		out = append(out, sr.bars...)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// barConds returns the WHERE conditions of q's width and series with bar_start in
// [since, until), with their arguments. The tier is filtered after deduplication.
func barConds(q store.BarQuery, since, until time.Time) (string, []any) {
	conds := []string{"width = ?"}
	args := []any{uint32(q.Width / time.Second)}
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("gpu", q.GPU)
	eq("provider", q.Provider)
	eq("pricing", q.Pricing)
	eq("region", q.Region)
	if !since.IsZero() {
		conds = append(conds, "bar_start >= ?")
		args = append(args, clampTime(since))
	}
	if !until.IsZero() {
		conds = append(conds, "bar_start < ?")
		args = append(args, clampTime(until))
	}
	return strings.Join(conds, " AND "), args
}

// barSeries reads the bars of q in [since, until) in two passes over the same rows,
// neither grouping on strings nor sending them per bar: every stored row of a bar
// (each version) as numbers, with its series as a 128-bit hash and its gpu, tier
// and interconnect as a 64-bit hash; then the strings of each (series, attributes)
// pair once. Versions are resolved here, the last one winning.
func (s *Store) barSeries(ctx context.Context, q store.BarQuery, since, until time.Time) ([]series, error) {
	where, args := barConds(q, since, until)
	const hashes = `cityHash64(provider, sku, region, zone, pricing) AS h1,
		sipHash64(provider, sku, region, zone, pricing) AS h2, cityHash64(gpu, tier, interconnect, price_scope,
		    price_basis) AS ha`
	type names struct {
		key                    [5]string
		gpu, tier, interconect string
		scope, basis           string
	}
	type hkey struct{ h1, h2, ha uint64 }
	attrs := map[hkey]names{}
	rows, err := s.conn.Query(ctx, `SELECT h1, h2, ha, any(provider), any(sku), any(region), any(zone), any(pricing),
		any(gpu), any(tier), any(interconnect), any(price_scope), any(price_basis)
	FROM (SELECT `+hashes+`, provider, sku, region, zone, pricing, gpu, tier, interconnect, price_scope, price_basis
		FROM bars WHERE `+where+`)
	GROUP BY h1, h2, ha`, args...)
	if err != nil {
		return nil, s.wrap("bars: series", err)
	}
	for rows.Next() {
		var (
			k hkey
			n names
		)
		if err := rows.Scan(&k.h1, &k.h2, &k.ha, &n.key[0], &n.key[1], &n.key[2], &n.key[3], &n.key[4],
			&n.gpu, &n.tier, &n.interconect, &n.scope, &n.basis); err != nil {
			rows.Close()
			return nil, s.wrap("bars: series", err)
		}
		attrs[k] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.wrap("bars: series", err)
	}
	if len(attrs) == 0 {
		return nil, nil
	}

	type row struct {
		ha                           uint64
		start                        uint32
		version                      uint64
		open, high, low, close, mean float64
		count                        uint64
		seen                         uint32
	}
	type skey struct{ h1, h2 uint64 }
	bySeries := map[skey][]row{}
	rows, err = s.conn.Query(ctx, `SELECT `+hashes+`, toUInt32(bar_start), version, open, high, low, close, mean, count,
		toUInt32(last_observed_at)
	FROM bars WHERE `+where, args...)
	if err != nil {
		return nil, s.wrap("bars", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k skey
			r row
		)
		if err := rows.Scan(&k.h1, &k.h2, &r.ha, &r.start, &r.version, &r.open, &r.high, &r.low, &r.close,
			&r.mean, &r.count, &r.seen); err != nil {
			return nil, s.wrap("bars", err)
		}
		bySeries[k] = append(bySeries[k], r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("bars", err)
	}
	out := make([]series, 0, len(bySeries))
	for k, rs := range bySeries {
		// Order by start then version, and keep the last version of each start.
		less := func(a, b row) bool {
			if a.start != b.start {
				return a.start < b.start
			}
			return a.version < b.version
		}
		if !sort.SliceIsSorted(rs, func(i, j int) bool { return less(rs[i], rs[j]) }) {
			sort.Slice(rs, func(i, j int) bool { return less(rs[i], rs[j]) })
		}
		sr := series{bars: make([]store.Bar, 0, len(rs))}
		for i, r := range rs {
			if i+1 < len(rs) && rs[i+1].start == r.start {
				continue // a later version of the same bar follows
			}
			n, ok := attrs[hkey{k.h1, k.h2, r.ha}]
			if !ok {
				// Written between the two reads: read again.
				return s.barSeries(ctx, q, since, until)
			}
			if q.Tier != "" && n.tier != q.Tier {
				continue
			}
			sr.key = n.key
			sr.bars = append(sr.bars, store.Bar{Provider: n.key[0], SKU: n.key[1], Region: n.key[2], Zone: n.key[3],
				Pricing: n.key[4], Start: time.Unix(int64(r.start), 0).UTC(), GPU: n.gpu, Tier: n.tier,
				Interconnect: n.interconect, PriceScope: n.scope, PriceBasis: n.basis, Open: r.open, High: r.high, Low: r.low,
				Close: r.close, Mean: r.mean,
				Count: int64(r.count), LastObservedAt: unixOrZero(int64(r.seen))})
		}
		if len(sr.bars) > 0 {
			out = append(out, sr)
		}
	}
	return out, nil
}

// carryBars returns, per series of q, its last bar before q.Since: the last write
// of the series' latest bar_start, or with a tier filter, of the latest bar_start
// whose last write has that tier. Non-nil ids keep the series whose series_id
// they hold.
func (s *Store) carryBars(ctx context.Context, q store.BarQuery, ids []uint64) (map[[5]string]store.Bar, error) {
	return s.carryBarsFrom(ctx, q, time.Time{}, ids)
}

// carryBarsFrom is carryBars over the bars from from (zero: all history): a
// series with a bar there that matches q has the same answer as from all
// history, as its latest such bar is there too.
func (s *Store) carryBarsFrom(
	ctx context.Context,
	q store.BarQuery,
	from time.Time,
	ids []uint64,
) (map[[5]string]store.Bar, error) {
	where, args := barConds(q, from, q.Since)
	if ids != nil {
		where += " AND has(?, series_id)"
		args = append(args, ids)
	}
	const cols = `(bar_start, gpu, tier, interconnect, open, high, low, close, mean, count, last_observed_at,
		price_scope, price_basis)`
	var inner string
	if q.Tier == "" {
		inner = `SELECT any(provider) AS p, any(sku) AS k, any(region) AS r, any(zone) AS z, any(pricing) AS pr,
			argMax(` + cols + `, (bar_start, version)) AS c
		FROM bars WHERE ` + where + ` GROUP BY ` + seriesKey
	} else {
		inner = `SELECT any(b_provider) AS p, any(b_sku) AS k, any(b_region) AS r, any(b_zone) AS z,
			any(b_pricing) AS pr, argMax(b, b.1) AS c
		FROM (SELECT cityHash64(provider, sku, region, zone, pricing) AS h1,
				sipHash64(provider, sku, region, zone, pricing) AS h2,
				any(provider) AS b_provider, any(sku) AS b_sku, any(region) AS b_region,
				any(zone) AS b_zone, any(pricing) AS b_pricing, argMax(` + cols + `, version) AS b
			FROM bars WHERE ` + where + `
			GROUP BY h1, h2, bar_start HAVING b.3 = ?)
		GROUP BY h1, h2`
		args = append(args, q.Tier)
	}
	query := `SELECT p, k, r, z, pr, c.1, c.2, c.3, c.4, c.5, c.6, c.7, c.8, c.9, c.10, toUInt32(c.11), c.12, c.13
		FROM (` + inner + `)`
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, s.wrap("bars: carry-in", err)
	}
	defer rows.Close()
	out := map[[5]string]store.Bar{}
	for rows.Next() {
		var (
			b    store.Bar
			n    uint64
			seen uint32
		)
		if err := rows.Scan(&b.Provider, &b.SKU, &b.Region, &b.Zone, &b.Pricing, &b.Start, &b.GPU, &b.Tier,
			&b.Interconnect, &b.Open, &b.High, &b.Low, &b.Close, &b.Mean, &n, &seen, &b.PriceScope, &b.PriceBasis); err != nil {
			return nil, s.wrap("bars: carry-in", err)
		}
		b.Start, b.Count, b.LastObservedAt = b.Start.UTC(), int64(n), unixOrZero(int64(seen))
		out[[5]string{b.Provider, b.SKU, b.Region, b.Zone, b.Pricing}] = b
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("bars: carry-in", err)
	}
	return out, nil
}

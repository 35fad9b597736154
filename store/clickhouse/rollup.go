package clickhouse

import (
	"context"
	"fmt"
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

// rollupChunk is the most days of observations one INSERT … SELECT of Rollup
// deduplicates, so that a backfill over years holds a week of identities in memory
// at a time, not the whole table (ClickHouse's GROUP BY keeps every key in memory).
const rollupChunk = 7 * store.Daily

// Rollup recomputes the bars of every width over the UTC days that meet [since,
// until) on the server, with one INSERT … SELECT per width and per week of days
// from the deduplicated observations; the new bars carry a higher version than any
// before them. Zero bounds are the first and last stored effective_at. Chunks are
// whole UTC days, so that no bar spans two of them.
func (s *Store) Rollup(ctx context.Context, since, until time.Time) error {
	if since.IsZero() || until.IsZero() {
		var lo, hi time.Time
		var n uint64
		if err := s.conn.QueryRow(ctx, `SELECT min(effective_at), max(effective_at), count() FROM observations`).Scan(&lo, &hi, &n); err != nil {
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
	for from := since; from.Before(until); from = from.Add(rollupChunk) {
		to := from.Add(rollupChunk)
		if to.After(until) {
			to = until
		}
		if err := s.rollupSpan(ctx, from, to); err != nil {
			return err
		}
	}
	return nil
}

// rollupSpan rewrites the bars of every width from the observations of [since,
// until), whole UTC days.
func (s *Store) rollupSpan(ctx context.Context, since, until time.Time) error {
	for _, w := range store.Widths {
		// The last write of each identity, only the columns bars need.
		q := `INSERT INTO bars (width, bar_start, provider, sku, region, zone, pricing, gpu, tier,
			interconnect, open, high, low, close, mean, count, version)
		SELECT toUInt32(` + fmt.Sprint(int(w/time.Second)) + `), ` + barExpr[w] + ` AS b_start,
			provider, sku, region, zone, pricing,
			argMax(d_gpu, effective_at), argMax(d_tier, effective_at), argMax(d_interconnect, effective_at),
			argMin(d_price_usd_gpu_hour, effective_at), max(d_price_usd_gpu_hour),
			min(d_price_usd_gpu_hour), argMax(d_price_usd_gpu_hour, effective_at),
			avg(d_price_usd_gpu_hour), count(), toUInt64(?)
		FROM (SELECT provider, sku, region, zone, pricing, effective_at,
				argMax(gpu, version) AS d_gpu, argMax(tier, version) AS d_tier,
				argMax(interconnect, version) AS d_interconnect,
				argMax(price_usd_gpu_hour, version) AS d_price_usd_gpu_hour
			FROM observations WHERE effective_at >= ? AND effective_at < ?
			GROUP BY provider, sku, region, zone, pricing, effective_at)
		GROUP BY provider, sku, region, zone, pricing, b_start`
		if err := s.conn.Exec(ctx, q, s.versions(1), clampTime(since), clampTime(until)); err != nil {
			return s.wrap(fmt.Sprintf("rollup %v bars", w), err)
		}
	}
	return nil
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

// Bars returns the bars q selects, by series then bar start, each its last write.
func (s *Store) Bars(ctx context.Context, q store.BarQuery) ([]store.Bar, error) {
	if err := store.CheckWidth(q.Width); err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	window, args := s.barsQuery(q, q.Since, q.Until)
	query := window
	if q.CarryIn && !q.Since.IsZero() {
		carry, cargs := s.barsQuery(q, time.Time{}, q.Since)
		// The last bar before the window, per series.
		carry = `SELECT provider, sku, region, zone, pricing, max(b_start) AS c_start,
			argMax(b_gpu, b_start) AS c_gpu, argMax(b_tier, b_start) AS c_tier,
			argMax(b_interconnect, b_start) AS c_interconnect, argMax(b_open, b_start) AS c_open,
			argMax(b_high, b_start) AS c_high, argMax(b_low, b_start) AS c_low,
			argMax(b_close, b_start) AS c_close, argMax(b_mean, b_start) AS c_mean,
			argMax(b_count, b_start) AS c_count
		FROM (` + carry + `) GROUP BY provider, sku, region, zone, pricing`
		query = window + ` UNION ALL ` + carry
		args = append(args, cargs...)
	}
	query = `SELECT provider, sku, region, zone, pricing, b_start, b_gpu, b_tier, b_interconnect,
		b_open, b_high, b_low, b_close, b_mean, b_count FROM (` + query + `)
	ORDER BY provider, sku, region, zone, pricing, b_start`
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, s.wrap("bars", err)
	}
	defer rows.Close()
	var out []store.Bar
	for rows.Next() {
		var (
			b store.Bar
			n uint64
		)
		if err := rows.Scan(&b.Provider, &b.SKU, &b.Region, &b.Zone, &b.Pricing, &b.Start, &b.GPU,
			&b.Tier, &b.Interconnect, &b.Open, &b.High, &b.Low, &b.Close, &b.Mean, &n); err != nil {
			return nil, s.wrap("bars", err)
		}
		b.Start = b.Start.UTC()
		b.Count = int64(n)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("bars", err)
	}
	return out, nil
}

// barsQuery selects the deduplicated bars of q's width and series whose start is in
// [since, until), with columns named b_<column>.
func (s *Store) barsQuery(q store.BarQuery, since, until time.Time) (string, []any) {
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
	for _, b := range []struct {
		t  time.Time
		op string
	}{{since, ">="}, {until, "<"}} {
		if b.t.IsZero() {
			continue
		}
		t := b.t.UTC().Truncate(time.Second)
		switch {
		case t.Before(minTime):
			t = minTime
		case t.After(maxTime):
			t = maxTime
		}
		conds = append(conds, "bar_start "+b.op+" ?")
		args = append(args, t)
	}
	sq := `SELECT provider, sku, region, zone, pricing, bar_start AS b_start,
		argMax(gpu, version) AS b_gpu, argMax(tier, version) AS b_tier,
		argMax(interconnect, version) AS b_interconnect, argMax(open, version) AS b_open,
		argMax(high, version) AS b_high, argMax(low, version) AS b_low,
		argMax(close, version) AS b_close, argMax(mean, version) AS b_mean,
		argMax(count, version) AS b_count
	FROM bars WHERE ` + strings.Join(conds, " AND ") + `
	GROUP BY provider, sku, region, zone, pricing, bar_start`
	if q.Tier != "" {
		sq += ` HAVING b_tier = ?`
		args = append(args, q.Tier)
	}
	return sq, args
}

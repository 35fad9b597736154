package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.Rollups = (*Store)(nil)

// truncUnit is the date_trunc unit of each width.
var truncUnit = map[time.Duration]string{store.Hourly: "hour", store.Daily: "day"}

// Rollup recomputes the bars of every width over the UTC days that meet [since,
// until) from the observations (one row per identity already, its last write) and
// upserts them, then those days' volatility_days rows from their hourly bars, in
// one transaction.
func (s *Store) Rollup(ctx context.Context, since, until time.Time) error {
	since, until = store.RollupSpan(since, until)
	w, args := where(store.Filter{Since: since, Until: until})
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("duckdb: rollup: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	for _, width := range store.Widths {
		q := `INSERT OR REPLACE INTO bars (width, bar_start, provider, sku, region, zone, pricing, gpu,
			tier, interconnect, price_scope, price_basis, open, high, low, close, mean, count, last_observed_at, version)
		SELECT ` + fmt.Sprint(int(width/time.Second)) + `, date_trunc('` + truncUnit[width] + `', effective_at) AS b_start,
			provider, sku, region, zone, pricing,
			arg_max(gpu, effective_at), arg_max(tier, effective_at), arg_max(interconnect, effective_at),
			arg_max(price_scope, effective_at), arg_max(price_basis, effective_at),
			arg_min(price_usd_gpu_hour, effective_at), max(price_usd_gpu_hour), min(price_usd_gpu_hour),
			arg_max(price_usd_gpu_hour, effective_at), avg(price_usd_gpu_hour), count(*), max(observed_at), ?
		FROM observations` + w + `
		GROUP BY provider, sku, region, zone, pricing, b_start`
		if _, err := tx.ExecContext(ctx, q, append([]any{s.versions(1)}, args...)...); err != nil {
			return fmt.Errorf("duckdb: rollup %v bars: %w", width, err)
		}
	}
	if err := writeVolatilityDays(ctx, tx, since, until); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("duckdb: rollup: commit: %w", err)
	}
	return nil
}

// Bars returns the bars q selects, by series then bar start.
func (s *Store) Bars(ctx context.Context, q store.BarQuery) ([]store.Bar, error) {
	if err := store.CheckWidth(q.Width); err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	window, args := barsWhere(q, q.Since, q.Until)
	query := `SELECT ` + barColumns + ` FROM bars` + window
	if q.CarryIn && !q.Since.IsZero() {
		carry, cargs := barsWhere(q, time.Time{}, q.Since)
		query += ` UNION ALL ` + carriedIn(barFigures, carry)
		args = append(args, cargs...)
	}
	query = `SELECT * FROM (` + query + `) ORDER BY provider, sku, region, zone, pricing, bar_start`
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: bars: %w", err)
	}
	defer rows.Close()
	var out []store.Bar
	for rows.Next() {
		var (
			b    store.Bar
			seen sql.NullTime
		)
		if err := rows.Scan(&b.Provider, &b.SKU, &b.Region, &b.Zone, &b.Pricing, &b.Start, &b.GPU,
			&b.Tier, &b.Interconnect, &b.PriceScope, &b.PriceBasis, &b.Open, &b.High, &b.Low, &b.Close, &b.Mean, &b.Count,
			&seen); err != nil {
			return nil, fmt.Errorf("duckdb: bars: %w", err)
		}
		b.Start = b.Start.UTC()
		if seen.Valid { // NULL: rolled up before schema version 4
			b.LastObservedAt = seen.Time.UTC()
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: bars: %w", err)
	}
	return out, nil
}

const barColumns = seriesCols + `, ` + barFigures

// barFigures are a bar's columns after its series'.
const barFigures = `bar_start, gpu, tier, interconnect, price_scope, price_basis, open, high, low, close, mean,
	count, last_observed_at`

// carriedIn is the query of each series' latest bar before a window (where:
// barsWhere up to the window's start), its series' columns then cols (bar
// columns, "bar_start" among them): arg_max of those columns as a struct by the
// bar's start, an aggregate, where a window function over every earlier bar cost
// most of the read.
func carriedIn(cols, where string) string {
	var fields []string
	for _, c := range strings.Split(cols, ",") {
		c = strings.TrimSpace(c)
		fields = append(fields, "'"+c+"': "+c)
	}
	return `SELECT ` + seriesCols + `, UNNEST(b) FROM (SELECT ` + seriesCols + `, arg_max({` +
		strings.Join(fields, ", ") + `}, bar_start) AS b FROM bars` + where + ` GROUP BY ` + seriesCols + `)`
}

// barsWhere is the WHERE clause of the bars of q's width and series starting in
// [since, until).
func barsWhere(q store.BarQuery, since, until time.Time) (string, []any) {
	f := q.Filter
	f.Since, f.Until = time.Time{}, time.Time{}
	w, args := where(f)
	// The width is written into the query, an integer: bound as a parameter it kept
	// DuckDB from skipping the row groups of the other width (counting 30 days of
	// daily bars took 8 ms instead of 1 at 2M rows).
	conds := []string{fmt.Sprintf("width = %d", uint32(q.Width/time.Second))}
	if w != "" {
		conds = append(conds, strings.TrimPrefix(w, " WHERE "))
	}
	if !since.IsZero() {
		conds = append(conds, "bar_start >= ?")
		args = append(args, utc(since))
	}
	if !until.IsZero() {
		conds = append(conds, "bar_start < ?")
		args = append(args, utc(until))
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// dayCols are volatility_days' columns (migration 21) in the order dayFigures
// computes them: the series and day, the GPU and tier of the day's last bar
// (uniform: every bar has both), and the summary of its hourly bars that
// ClickHouse keeps too (its migration 15 names them).
const dayCols = seriesCols + `, day, gpu, tier, uniform, bars, first_start, first_close, last_close, high, low,
	close_max, close_min, close_s1, close_s2, returns, ret_first, ret_s1, ret_s2, ret_min, ret_max, changes, drawdown`

// dayFigures is the query of every (series, UTC day) summary of the bars src
// selects (a relation with the series' columns, bar_start, close, high, low, gpu
// and tier), with the columns dayCols names: the same figures as ClickHouse's
// dayFigures and analytics.SeriesVolatilityOf over the day's bars. Returns are
// between consecutive bars whose closes are both positive, the drawdown is from the
// running maximum of the closes (1 − close/peak), and the sums are shifted by the
// day's first close and first return so that they lose no precision when combined.
func dayFigures(src string) string {
	const day = `PARTITION BY ` + seriesCols + `, day ORDER BY bar_start`
	return `SELECT ` + seriesCols + `, day, arg_max(gpu, bar_start), arg_max(tier, bar_start),
		count(DISTINCT gpu) = 1 AND count(DISTINCT tier) = 1, count(*), min(bar_start),
		arg_min(close, bar_start), arg_max(close, bar_start), max(high), min(low), max(close), min(close),
		sum(close - c0), sum((close - c0) * (close - c0)),
		count(ret), max(r0), coalesce(sum(ret - r0), 0), coalesce(sum((ret - r0) * (ret - r0)), 0),
		coalesce(min(ret), 0), coalesce(max(ret), 0),
		count(*) FILTER (WHERE prev IS NOT NULL AND close <> prev),
		max(CASE WHEN peak > 0 THEN 1 - close / peak ELSE 0 END)
	FROM (SELECT *, CASE WHEN prev > 0 AND close > 0 THEN ln(close / prev) END AS ret,
			CASE WHEN c0 > 0 AND c1 > 0 THEN ln(c1 / c0) ELSE 0 END AS r0
		FROM (SELECT ` + seriesCols + `, day, bar_start, close, high, low, gpu, tier,
				lag(close) OVER w AS prev, first_value(close) OVER w AS c0, max(close) OVER w AS peak,
				nth_value(close, 2) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS c1
			FROM (SELECT *, date_trunc('day', bar_start) AS day FROM (` + src + `))
			WINDOW w AS (` + day + `)))
	GROUP BY ` + seriesCols + `, day`
}

// writeVolatilityDays rewrites the volatility_days rows of the UTC days in
// [since, until) (a zero bound is open) from their hourly bars, in tx: Rollup's
// last step, after the bars, and migration 21's backfill.
func writeVolatilityDays(ctx context.Context, tx *sql.Tx, since, until time.Time) error {
	src := `SELECT ` + seriesCols + `, bar_start, close, high, low, gpu, tier FROM bars WHERE width = 3600`
	var args []any
	if !since.IsZero() {
		src += ` AND bar_start >= ?`
		args = append(args, utc(since))
	}
	if !until.IsZero() {
		src += ` AND bar_start < ?`
		args = append(args, utc(until))
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO volatility_days (`+dayCols+`) `+dayFigures(src),
		args...); err != nil {
		return fmt.Errorf("duckdb: rollup volatility days: %w", err)
	}
	return nil
}

// Volatilities computes every series' volatility figures in one query that
// returns a row per series: for hourly bars without a threshold, from the per-day
// summaries of volatility_days (dayVolatilities); for daily bars, or with a
// threshold (whose hours depend on it and on the window's end), with window
// functions over the bars (barVolatilities).
func (s *Store) Volatilities(
	ctx context.Context,
	q store.BarQuery,
	end time.Time,
	below float64,
) ([]store.SeriesVolatility, error) {
	if err := store.CheckWidth(q.Width); err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	if q.Width != store.Hourly || below > 0 {
		return s.barVolatilities(ctx, q, end, below)
	}
	return s.dayVolatilities(ctx, q)
}

// dayVolatilities is Volatilities of hourly bars from volatility_days: the
// summaries of the days the window holds whole (with a GPU or tier filter, those
// whose bars all have one GPU and tier, and those match), and the same summaries
// computed from the bars of the days the window cuts or a filter splits
// (dayFigures over the bars the query selects). Per series the days, in order,
// then combine as analytics.SeriesVolatilityOf defines the figures over the
// concatenated bars (ClickHouse's fold, in SQL):
//
//   - returns: each day's, plus one across each pair of consecutive days (first
//     close over the previous day's last, both positive); with their mean M,
//     Σ (r − M)² = Σ_days [s2 + 2 (r₀ − M) s1 + k (r₀ − M)²] + Σ_across (r − M)²;
//     the closes the same way around each day's first close;
//   - changes: each day's, plus a first close that differs from the previous last;
//   - drawdown: the largest of each day's own and 1 − (the day's lowest close)/P,
//     P the highest close of the days before.
//
// The last steps (flat series, the range) are store.VolatilitySums.Set's.
func (s *Store) dayVolatilities(ctx context.Context, q store.BarQuery) ([]store.SeriesVolatility, error) {
	const day = 24 * time.Hour
	var since, until time.Time
	if !q.Since.IsZero() {
		since = utc(q.Since)
	}
	if !q.Until.IsZero() {
		until = utc(q.Until)
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return nil, nil
	}
	// The whole days: [wholeFrom, wholeTo), a zero bound open.
	var wholeFrom, wholeTo time.Time
	if !since.IsZero() {
		if wholeFrom = since.Truncate(day); wholeFrom.Before(since) {
			wholeFrom = wholeFrom.Add(day)
		}
	}
	if !until.IsZero() {
		wholeTo = until.Truncate(day)
	}
	inWhole := func(col string) string {
		var c []string
		if !wholeFrom.IsZero() {
			c = append(c, col+" >= ?")
		}
		if !wholeTo.IsZero() {
			c = append(c, col+" < ?")
		}
		if len(c) == 0 {
			return "true"
		}
		return strings.Join(c, " AND ")
	}
	var wholeArgs []any
	for _, t := range []time.Time{wholeFrom, wholeTo} {
		if !t.IsZero() {
			wholeArgs = append(wholeArgs, t)
		}
	}
	var sumConds []string
	var sumArgs []any
	for _, c := range []struct{ col, v string }{{"provider", q.Provider}, {"pricing", q.Pricing},
		{"region", q.Region}, {"gpu", q.GPU}, {"tier", q.Tier}} {
		if c.v != "" {
			sumConds = append(sumConds, c.col+" = ?")
			sumArgs = append(sumArgs, c.v)
		}
	}
	attrs := q.GPU != "" || q.Tier != ""
	if attrs {
		sumConds = append(sumConds, "uniform")
	}
	sumConds = append(sumConds, inWhole("day"))
	sumArgs = append(sumArgs, wholeArgs...)

	// The bars of the other days: outside the whole days, or (with a filter) in a
	// whole day whose bars differ in GPU or tier.
	bw, bargs := barsWhere(q, since, until)
	other := "NOT (" + inWhole("bar_start") + ")"
	bargs = append(bargs, wholeArgs...)
	if attrs {
		other += ` OR EXISTS (SELECT 1 FROM volatility_days v WHERE NOT v.uniform AND v.provider = b.provider
			AND v.sku = b.sku AND v.region = b.region AND v.zone = b.zone AND v.pricing = b.pricing
			AND v.day = date_trunc('day', b.bar_start))`
	}
	src := `SELECT ` + seriesCols + `, bar_start, close, high, low, gpu, tier FROM bars b` + bw + ` AND (` + other + `)`

	// One window over the days, partitioned by a hash of the series (sorting on it
	// is much cheaper than on five strings; the strings break its ties), gives
	// each day the previous day's last close and the highest close before it, and
	// the series' first close and first return, around which the sums are taken.
	const series = `PARTITION BY hash(` + seriesCols + `), ` + seriesCols + ` ORDER BY day`
	query := `WITH d AS (
		SELECT ` + dayCols + ` FROM volatility_days WHERE ` + strings.Join(sumConds, " AND ") + `
		UNION ALL ` + dayFigures(src) + `),
	o AS (SELECT *, lag(last_close) OVER w AS pl,
			max(close_max) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pp,
			first_value(first_close) OVER w AS c00,
			first_value(CASE WHEN returns > 0 THEN ret_first END IGNORE NULLS) OVER w AS r00
		FROM d WINDOW w AS (` + series + `)),
	a AS (SELECT *, CASE WHEN pl > 0 AND first_close > 0 THEN ln(first_close / pl) END AS x,
			first_close - c00 AS y, ret_first - coalesce(r00, 0) AS u, coalesce(r00, 0) AS r0 FROM o)
	SELECT ` + seriesCols + `, arg_max(gpu, day), arg_max(tier, day), sum(bars)::BIGINT,
		(sum(returns) + count(x))::BIGINT,
		(sum(changes) + count(*) FILTER (WHERE pl IS NOT NULL AND pl <> first_close))::BIGINT,
		least(min(ret_min) FILTER (WHERE returns > 0), min(x)), greatest(max(ret_max) FILTER (WHERE returns > 0), max(x)),
		sum(ret_s1 + returns * u) + coalesce(sum(x - r0), 0),
		sum(ret_s2 + 2 * u * ret_s1 + returns * u * u) + coalesce(sum((x - r0) * (x - r0)), 0),
		min(close_min), max(close_max), any_value(c00), sum(close_s1 + bars * y),
		sum(close_s2 + 2 * y * close_s1 + bars * y * y),
		max(high), min(low), arg_max(last_close, day),
		max(greatest(drawdown, CASE WHEN pp > 0 THEN 1 - close_min / pp ELSE 0 END))
	FROM a GROUP BY ` + seriesCols + ` ORDER BY ` + seriesCols
	rows, err := s.db.QueryContext(ctx, query, append(sumArgs, bargs...)...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: volatility: %w", err)
	}
	defer rows.Close()
	var out []store.SeriesVolatility
	for rows.Next() {
		var (
			v                         store.SeriesVolatility
			sums                      store.VolatilitySums
			n, nr, changes            int64
			rmin, rmax, rdev, rss     sql.NullFloat64
			cmin, cmax, c0, cdev, css float64
		)
		if err := rows.Scan(&v.Provider, &v.SKU, &v.Region, &v.Zone, &v.Pricing, &v.GPU, &v.Tier, &n, &nr, &changes,
			&rmin, &rmax, &rdev, &rss, &cmin, &cmax, &c0, &cdev, &css, &v.Max, &v.Min, &v.Close,
			&sums.Drawdown); err != nil {
			return nil, fmt.Errorf("duckdb: volatility: %w", err)
		}
		// Σ (r − M)² = Σ (r − r₀)² − N·D², D = M − r₀ = Σ (r − r₀) / N; the closes
		// likewise around the first close.
		sums.Bars, sums.Returns, sums.Changes = int(n), int(nr), int(changes)
		sums.RetMin, sums.RetMax = orNaN(rmin), orNaN(rmax)
		dr := orNaN(rdev) / float64(nr)
		sums.RetSS = orNaN(rss) - float64(nr)*dr*dr
		dc := cdev / float64(n)
		sums.CloseMin, sums.CloseMax, sums.CloseMean, sums.CloseSS = cmin, cmax, c0+dc, css-float64(n)*dc*dc
		sums.Set(&v, q.Width, 0)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: volatility: %w", err)
	}
	return out, nil
}

// orNaN is x's value, or NaN when it is NULL (a figure of no returns).
func orNaN(x sql.NullFloat64) float64 {
	if !x.Valid {
		return math.NaN()
	}
	return x.Float64
}

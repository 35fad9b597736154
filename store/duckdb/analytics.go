package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

var (
	_ store.VolatilityStats = (*Store)(nil)
	_ store.DayPriceStats   = (*Store)(nil)
	_ store.RecordedCounter = (*Store)(nil)
)

// seriesCols are the columns of a series.
const seriesCols = `provider, sku, region, zone, pricing`

// barVolatilities computes every series' volatility figures in DuckDB with window
// functions over each series' bars by start (lag for the log returns and changes,
// a running max for the drawdown, lead for the time each close stays in force)
// and reads one row per series: what Volatilities does for daily bars and for a
// threshold, which the per-day summaries cannot answer. The definitions are
// analytics.SeriesVolatilityOf's; the figurestest conformance suite compares the
// two on the same bars.
func (s *Store) barVolatilities(
	ctx context.Context,
	q store.BarQuery,
	end time.Time,
	below float64,
) ([]store.SeriesVolatility, error) {
	w := int64(q.Width / time.Second)
	where, args := barsWhere(q, q.Since, q.Until)
	e := utc(end)
	// The means and standard deviations add in the order of the bars, as
	// analytics.Mean and SampleStd do (a left fold over each list), so that they
	// agree to the last bit where the figures are exact (a flat series: 0).
	fold := func(l string) string { return `list_reduce(list_prepend(0.0::DOUBLE, ` + l + `), (a, x) -> a + x)` }
	query := `SELECT ` + seriesCols + `, g, t, n, len(rets), mr, sqrt(` + fold(
		`list_transform(rets, x -> (x - mr) * (x - mr))`,
	) + ` / (len(rets) - 1)),
		mc, sqrt(` + fold(
		`list_transform(cs, x -> (x - mc) * (x - mc))`,
	) + ` / (n - 1)), hi, lo, c, changes, dd, under, total
	FROM (SELECT *, ` + fold(
		`rets`,
	) + ` / len(rets) AS mr, ` + fold(
		`cs`,
	) + ` / n AS mc
		FROM (SELECT ` + seriesCols + `, arg_max(gpu, bar_start) AS g, arg_max(tier, bar_start) AS t, count(*) AS n,
				coalesce(list(r ORDER BY bar_start) FILTER (WHERE r IS NOT NULL), []) AS rets, list(close ORDER BY bar_start) AS cs,
				max(high) AS hi, min(low) AS lo, arg_max(close, bar_start) AS c,
				count(*) FILTER (WHERE prev IS NOT NULL AND close <> prev) AS changes,
				max(CASE WHEN peak > 0 THEN 1 - close / peak END) AS dd,
				sum(CASE WHEN close < ? THEN steps ELSE 0 END) AS under, sum(steps) AS total
			FROM (SELECT *, CASE WHEN prev > 0 AND close > 0 THEN ln(close / prev) END AS r,
					greatest(0, (date_diff('second', bar_start, least(coalesce(next, ?::TIMESTAMP), ?::TIMESTAMP)) + ? - 1) // ?)
					    AS steps
				FROM (SELECT ` + seriesCols + `, bar_start, gpu, tier, close, high, low,
						lag(close) OVER w AS prev, max(close) OVER w AS peak, lead(bar_start) OVER w AS next
					FROM bars` + where + `
					WINDOW w AS (PARTITION BY ` + seriesCols + ` ORDER BY bar_start)))
			GROUP BY ` + seriesCols + `))
	ORDER BY ` + seriesCols
	args = append([]any{below, e, e, w, w}, args...)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: volatility: %w", err)
	}
	defer rows.Close()
	var out []store.SeriesVolatility
	for rows.Next() {
		var (
			v                    store.SeriesVolatility
			n, nr, changes       int64
			mr, stdRet, stdClose sql.NullFloat64
			dd                   sql.NullFloat64
			under, total         sql.NullInt64
		)
		if err := rows.Scan(&v.Provider, &v.SKU, &v.Region, &v.Zone, &v.Pricing, &v.GPU, &v.Tier, &n, &nr, &mr,
			&stdRet, &v.Mean, &stdClose, &v.Max, &v.Min, &v.Close, &changes, &dd, &under, &total); err != nil {
			return nil, fmt.Errorf("duckdb: volatility: %w", err)
		}
		v.Bars, v.Returns, v.Changes = int(n), int(nr), int(changes)
		if nr >= 2 && stdRet.Valid {
			v.StdLogReturn = store.Finite(stdRet.Float64)
		}
		v.Annualised = v.StdLogReturn * store.AnnualFactor(q.Width)
		if n >= 2 && stdClose.Valid {
			v.CV = store.Finite(stdClose.Float64 / v.Mean)
		}
		if v.Min > 0 {
			v.Range = v.Max/v.Min - 1
		}
		if dd.Valid {
			v.MaxDrawdown = math.Max(dd.Float64, 0)
		}
		if below > 0 {
			share := 0.0
			if total.Int64 > 0 {
				share = float64(under.Int64) / float64(total.Int64)
			}
			v.ShareBelow = &share
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: volatility: %w", err)
	}
	return out, nil
}

// dayPrices returns the text (a WITH clause ending in the relation priced) and
// arguments of every day price analytics.DailyPrices lays the daily bars of f
// (with carry-in) on over the days [f.Since, f.Until): one row per series and day
// with the series' columns, its last sighting seen, the day d, and the price, gpu
// g, tier t and start bst of the bar it comes from.
//
// The bar carried in is each series' latest before the window (arg_max of the
// bar by its start: an aggregate, where a window function over every earlier bar
// cost most of the query), the newest sighting of each provider decides which
// series are withdrawn (max … OVER the provider), and the price in force on a day
// is the close of the series' last bar at or before it (ASOF JOIN on a hash of the
// series, three times cheaper than on its five strings; the strings are then
// compared, so that two series whose hashes collide lose days instead of mixing).
func dayPrices(f store.Filter) (string, []any) {
	bq := store.BarQuery{Filter: f, Width: store.Daily}
	win, args := barsWhere(bq, f.Since, f.Until)
	carry, cargs := barsWhere(bq, time.Time{}, f.Since)
	args = append(args, cargs...)
	from := utc(f.Since).Truncate(store.Daily)
	args = append(args, from, utc(f.Until))
	const cols = `bar_start, close, gpu, tier, last_observed_at, price_basis, price_scope`
	return `WITH win AS (
		SELECT ` + seriesCols + `, ` + cols + ` FROM bars` + win + `
		UNION ALL ` + carriedIn(cols, carry) + `),
	cb AS (SELECT * FROM win WHERE price_basis IN ('', '` + schemas.BasisListed + `')
		AND price_scope IN ('', '` + schemas.ScopeInstance + `')
		AND gpu <> '` + schemas.UnknownGPU + `'),
	se AS (SELECT ` + seriesCols + `, seen, first_start,
			CASE WHEN seen IS NULL OR seen >= max(seen) OVER (PARTITION BY provider) - INTERVAL 24 HOUR THEN NULL
				ELSE greatest(date_trunc('day', seen) + INTERVAL 2 DAY, date_trunc('day', last_start) + INTERVAL 1 DAY) END AS e
		FROM (SELECT ` + seriesCols + `, max(last_observed_at) AS seen, min(bar_start) AS first_start,
				max(bar_start) AS last_start
			FROM cb GROUP BY ` + seriesCols + `)),
	dp AS (SELECT se.provider, se.sku, se.region, se.zone, se.pricing, se.seen, days.d
		FROM se, (SELECT unnest(range(?::TIMESTAMP, ?::TIMESTAMP, INTERVAL 1 DAY)) AS d) days
		WHERE days.d >= se.first_start AND (se.e IS NULL OR days.d < se.e)),
	priced AS (SELECT dp.provider, dp.sku, dp.region, dp.zone, dp.pricing, dp.d, 1 AS is_day, dp.seen,
			cb.close AS price, cb.gpu AS g, cb.tier AS t, cb.bar_start AS bst
		FROM (SELECT *, hash(` + seriesCols + `) AS h FROM dp) dp
		ASOF JOIN (SELECT *, hash(` + seriesCols + `) AS h FROM cb) cb ON dp.h = cb.h AND dp.d >= cb.bar_start
		WHERE dp.provider = cb.provider AND dp.sku = cb.sku AND dp.region = cb.region AND dp.zone = cb.zone
			AND dp.pricing = cb.pricing)
	`, args
}

// Spreads computes the daily tier spreads in DuckDB: the day prices (dayPrices)
// grouped by GPU, pricing and day, with each tier's median (quantile_cont, the
// type-7 interpolation of analytics.Median).
func (s *Store) Spreads(ctx context.Context, f store.Filter) ([]store.SpreadDay, error) {
	if f.Since.IsZero() || f.Until.IsZero() {
		return nil, fmt.Errorf("duckdb: spreads: a window with both ends")
	}
	with, args := dayPrices(f)
	tier := func(t string) string {
		return `count(*) FILTER (WHERE t = '` + t + `'), quantile_cont(price, 0.5) FILTER (WHERE t = '` + t + `')`
	}
	tiers := `t IN ('` + schemas.TierHyperscaler + `', '` + schemas.TierSpecialist + `', '` + schemas.TierMarketplace +
		`')`
	rows, err := s.db.QueryContext(ctx, with+`SELECT g, pricing, d, `+tier(schemas.TierHyperscaler)+`, `+
		tier(schemas.TierSpecialist)+`, `+tier(schemas.TierMarketplace)+`,
		count(*) FILTER (WHERE `+tiers+` AND seen < d), max(seen) FILTER (WHERE `+tiers+`)
	FROM priced GROUP BY g, pricing, d ORDER BY g, pricing, d`, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: spreads: %w", err)
	}
	defer rows.Close()
	var out []store.SpreadDay
	for rows.Next() {
		var (
			d          store.SpreadDay
			nh, ns, nm int64
			h, sp, m   sql.NullFloat64
			carried    int64
			seen       sql.NullTime
		)
		if err := rows.Scan(&d.GPU, &d.Pricing, &d.Day, &nh, &h, &ns, &sp, &nm, &m, &carried, &seen); err != nil {
			return nil, fmt.Errorf("duckdb: spreads: %w", err)
		}
		if d.Carried = int(carried); seen.Valid {
			d.LastSeen = seen.Time.UTC()
		}
		d.Day = d.Day.UTC()
		d.NHyperscaler, d.NSpecialist, d.NMarketplace = int(nh), int(ns), int(nm)
		d.Hyperscaler, d.Specialist, d.Marketplace = optNull(h), optNull(sp), optNull(m)
		if d.Hyperscaler != nil && d.Specialist != nil && *d.Hyperscaler > 0 && *d.Specialist > 0 {
			r := *d.Hyperscaler / *d.Specialist
			d.Ratio, d.PremiumPct = opt(r), opt((r-1)*100)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: spreads: %w", err)
	}
	return out, nil
}

func optNull(x sql.NullFloat64) *float64 {
	if !x.Valid {
		return nil
	}
	return opt(x.Float64)
}

// opt is x, or nil when x is NaN or infinite (a figure that is undefined).
func opt(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// RecordedSeries counts per provider the series of f with a recorded row in the
// window or a recorded price carried into it (store.RecordedCounter): the origin
// column, one row per identity.
func (s *Store) RecordedSeries(ctx context.Context, f store.Filter) (map[string]int, error) {
	series := `sku || chr(31) || region || chr(31) || zone || chr(31) || pricing`
	w, args := where(f)
	q := `SELECT provider, ` + series + ` AS k FROM observations` + w
	if w == "" {
		q += ` WHERE origin = 'recorded'`
	} else {
		q += ` AND origin = 'recorded'`
	}
	if !f.Since.IsZero() {
		before := f
		before.Since, before.Until = time.Time{}, f.Since
		bw, bargs := where(before)
		q += ` UNION ALL SELECT provider, ` + series + ` AS k FROM observations` + bw + `
			GROUP BY provider, sku, region, zone, pricing HAVING arg_max(origin, effective_at) = 'recorded'`
		args = append(args, bargs...)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT provider, count(DISTINCT k) FROM (`+q+`) GROUP BY provider`, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: recorded series: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			p string
			n int64
		)
		if err := rows.Scan(&p, &n); err != nil {
			return nil, fmt.Errorf("duckdb: recorded series: %w", err)
		}
		out[p] = int(n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: recorded series: %w", err)
	}
	return out, nil
}

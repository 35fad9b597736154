package clickhouse

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.VolatilityStats = (*Store)(nil)

// Volatilities computes every series' volatility figures without reading its bars:
// hourly bars from the per-day summaries of volatility_days (dayVolatilities),
// daily bars on the server with BarVolatilities (one row per series).
func (s *Store) Volatilities(
	ctx context.Context,
	q store.BarQuery,
	end time.Time,
	below float64,
) ([]store.SeriesVolatility, error) {
	if err := store.CheckWidth(q.Width); err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	if q.Width == store.Hourly {
		return s.dayVolatilities(ctx, q, end, below)
	}
	return s.BarVolatilities(ctx, q, end, below)
}

// BarVolatilities computes every series' volatility figures on the server from
// the bars of the window, and reads only them (one row per series): the bars of the window are deduplicated by
// version, gathered per series in an array sorted by start, and the figures are
// array arithmetic (arrayMap, arrayFilter, arrayDifference, arrayCumSumNonNegative;
// all on ClickHouse 18.16). The definitions are analytics.SeriesVolatilityOf's; the
// storetest conformance suite compares the two on the same bars.
//
// The maximum drawdown needs each close's running maximum, which 18.16 has no
// array function for: the drawdown in log terms from the running peak obeys
// g_i = max(0, g_{i−1} − (ln c_i − ln c_{i−1})), a running sum clamped at zero
// (arrayCumSumNonNegative); the close where it peaks and the highest close before
// it then give 1 − close/peak exactly as the definition does.
//
// Volatilities of hourly bars combine the per-day summaries of volatility_days
// instead (dayVolatilities); this is what daily bars use, and what hourly bars used
// before (kept for the benchmark).
func (s *Store) BarVolatilities(
	ctx context.Context,
	q store.BarQuery,
	end time.Time,
	below float64,
) ([]store.SeriesVolatility, error) {
	if err := store.CheckWidth(q.Width); err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	where, args := barConds(q, q.Since, q.Until)
	having := ""
	if q.Tier != "" {
		having = " HAVING t = ?"
		args = append(args, q.Tier)
	}
	w := uint64(q.Width / time.Second)
	// mr is selected (and not read) because ClickHouse 18.16 drops a subquery's
	// column that the outer query uses only inside a lambda.
	query := `SELECT p, k, r, z, pr, lg, lt, toUInt64(n), toUInt64(nr), toFloat64(mr),
		toFloat64(if(nr < 2, nan, sqrt(arraySum(arrayMap(x -> (x - mr) * (x - mr), rets)) / (nr - 1)))),
		toFloat64(mc), toFloat64(if(n < 2, nan, sqrt(arraySum(arrayMap(x -> (x - mc) * (x - mc), cs)) / (n - 1)))),
		toFloat64(hi), toFloat64(lo), toFloat64(cs[n]),
		toUInt64(arraySum(arrayMap((a, b) -> toUInt64(a != b), arrayPopBack(cs), arrayPopFront(cs)))),
		toFloat64(if(gmax > 0, 1 - cs[gi] / arrayReduce('max', arraySlice(cs, 1, gi)), 0)),
		toUInt64(arraySum(arrayMap((x, c) -> if(c < ?, x, toUInt64(0)), steps, cs))), toUInt64(arraySum(steps))
	FROM (
		SELECT p, k, r, z, pr, lg, lt, s, n, cs, hi, lo, rets, length(rets) AS nr, arraySum(rets) / nr AS mr,
			arraySum(cs) / n AS mc,
			arrayCumSumNonNegative(arrayMap(d -> -d, arrayDifference(arrayMap(x -> log(x), cs)))) AS g,
			arrayReduce('max', g) AS gmax, arrayFirstIndex(x -> x = gmax, g) AS gi,
			arrayMap(x -> toUInt64(x.1), s) AS starts, toUInt64(?) AS e,
			arrayMap((a, b) -> toUInt64(greatest(0, intDiv(toInt64(least(b, e)) - toInt64(a) + ? - 1, ?))), starts,
			    arrayPushBack(arrayPopFront(starts), e)) AS steps
		FROM (
			SELECT any(bp) AS p, any(bk) AS k, any(br) AS r, any(bz) AS z, any(bpr) AS pr,
				arraySort(x -> x.1, groupArray((st, c))) AS s, length(s) AS n,
				argMax(g, st) AS lg, argMax(t, st) AS lt,
				arrayMap(x -> x.2, s) AS cs, max(hb) AS hi, min(lb) AS lo,
				arrayMap((a, b) -> log(b / a),
					arrayFilter((a, b) -> a > 0 AND b > 0, arrayPopBack(cs), arrayPopFront(cs)),
					arrayFilter((b, a) -> a > 0 AND b > 0, arrayPopFront(cs), arrayPopBack(cs))) AS rets
			FROM (
				SELECT h1, h2, toUInt32(bar_start) AS st, any(provider) AS bp, any(sku) AS bk,
					any(region) AS br, any(zone) AS bz, any(pricing) AS bpr,
					argMax(close, version) AS c, argMax(high, version) AS hb, argMax(low, version) AS lb,
					argMax(gpu, version) AS g, argMax(tier, version) AS t
				FROM bars WHERE ` + where + `
				GROUP BY cityHash64(provider, sku, region, zone, pricing) AS h1,
					sipHash64(provider, sku, region, zone, pricing) AS h2, bar_start` + having + `)
			GROUP BY h1, h2))
	ORDER BY p, k, r, z, pr`
	// The parameters in the order they appear in the text: the outer levels first.
	args = append([]any{below, uint64(clampTime(end).Unix()), int64(w), int64(w)}, args...)
	rows, err := s.conn.Query(ctx, query, args...)
	if err != nil {
		return nil, s.wrap("volatility", err)
	}
	defer rows.Close()
	var out []store.SeriesVolatility
	for rows.Next() {
		var (
			v                    seriesVolatility
			n, nr, changes       uint64
			mr                   float64
			stdRet, stdClose, dd float64
			under, total         uint64
		)
		if err := rows.Scan(&v.Provider, &v.SKU, &v.Region, &v.Zone, &v.Pricing, &v.GPU, &v.Tier, &n, &nr, &mr,
			&stdRet, &v.Mean, &stdClose, &v.Max, &v.Min, &v.Close, &changes, &dd,
			&under, &total); err != nil {
			return nil, s.wrap("volatility", err)
		}
		v.Bars, v.Returns, v.Changes = int(n), int(nr), int(changes)
		v.StdLogReturn = store.Finite(stdRet)
		v.Annualised = v.StdLogReturn * store.AnnualFactor(q.Width)
		v.CV = store.Finite(stdClose / v.Mean)
		v.setRest(dd, below, under, total)
		out = append(out, v.SeriesVolatility)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("volatility", err)
	}
	return out, nil
}

// seriesVolatility is a store.SeriesVolatility being filled in.
type seriesVolatility struct{ store.SeriesVolatility }

// setRest sets the range (from Max and Min), the drawdown (dd, at least 0) and,
// with a threshold (below > 0), the share of the total hours under it.
func (v *seriesVolatility) setRest(dd, below float64, under, total uint64) {
	if v.Min > 0 {
		v.Range = v.Max/v.Min - 1
	}
	v.MaxDrawdown = math.Max(dd, 0)
	if below > 0 {
		share := 0.0
		if total > 0 {
			share = float64(under) / float64(total)
		}
		v.ShareBelow = &share
	}
}

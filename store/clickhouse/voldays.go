package clickhouse

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// volatility_days (migration 15) holds, per series and UTC day, a summary of the
// day's hourly bars from which the volatility of a window of whole days combines
// exactly (see combineDays in Volatilities), and the day's bars themselves for the
// days a window cuts or a tier/GPU filter splits.

// volDayCols are volatility_days' columns in the order dayFigures computes them,
// after day and the series.
const volDayCols = `gpu, tier, uniform, bars, first_start, first_close, last_close, high, low,
	close_max, close_min, close_s1, close_s2, returns, ret_first, ret_s1, ret_s2, ret_min, ret_max,
	changes, drawdown`

// dayFigures is the SELECT list of a day's summary (volDayCols) from the arrays S
// (starts, Unix seconds), C (closes), H (highs), L (lows), G (GPUs) and T (tiers)
// of its bars sorted by start, as analytics.SeriesVolatilityOf would use them:
// returns between consecutive bars whose closes are both positive, the drawdown
// from the running maximum of the closes (1 − close/peak, the same division), the
// sums shifted by the day's first close and first return so that they lose no
// precision when combined.
func dayFigures(S, C, H, L, G, T string) []string {
	r := strings.NewReplacer("{S}", S, "{C}", C, "{H}", H, "{L}", L, "{G}", G, "{T}", T, "{RET}", dayReturns)
	out := make([]string, len(dayFigureExprs))
	for i, e := range dayFigureExprs {
		// Twice: {RET} brings in {C}.
		out[i] = r.Replace(r.Replace(e))
	}
	return out
}

// dayFigureExprs are dayFigures' expressions with placeholders.
var dayFigureExprs = []string{
	"{G}[length({C})]", "{T}[length({C})]",
	"toUInt8(arrayAll(x -> x = {G}[length({C})], {G}) AND arrayAll(x -> x = {T}[length({C})], {T}))",
	"toUInt32(length({C}))", "toDateTime({S}[1])", "{C}[1]", "{C}[length({C})]",
	"arrayReduce('max', {H})", "arrayReduce('min', {L})", "arrayReduce('max', {C})", "arrayReduce('min', {C})",
	"arraySum(arrayMap(x -> x - {C}[1], {C}))", "arraySum(arrayMap(x -> (x - {C}[1]) * (x - {C}[1]), {C}))",
	"toUInt32(length({RET}))", "{RET}[1]",
	"arraySum(arrayMap(x -> x - {RET}[1], {RET}))",
	"arraySum(arrayMap(x -> (x - {RET}[1]) * (x - {RET}[1]), {RET}))",
	"arrayReduce('min', {RET})", "arrayReduce('max', {RET})",
	"toUInt32(arraySum(arrayMap((a, b) -> toUInt32(a != b), arrayPopBack({C}), arrayPopFront({C}))))",
	`arrayReduce('max', arrayMap(i -> if(arrayReduce('max', arraySlice({C}, 1, i)) > 0,
		1 - {C}[i] / arrayReduce('max', arraySlice({C}, 1, i)), 0), arrayEnumerate({C})))`,
}

// dayReturns is the log returns between consecutive closes {C} that are both
// positive.
const dayReturns = `arrayMap((a, b) -> log(b / a),
			arrayFilter((a, b) -> a > 0 AND b > 0, arrayPopBack({C}), arrayPopFront({C})),
			arrayFilter((b, a) -> a > 0 AND b > 0, arrayPopFront({C}), arrayPopBack({C})))`

// writeVolatilityDays writes the volatility_days rows of the UTC days in [since,
// until) from their hourly bars. With version > 0 it reads only the bars of that
// version (Rollup's, which has just rewritten every bar of those days with it);
// with 0 it takes each bar's last write (a backfill) and gives each day the
// highest version among its bars. A day's row carries its bars' version, so that a
// rebuild racing another one leaves the summary of the bars that win.
func (s *Store) writeVolatilityDays(ctx context.Context, since, until time.Time, version uint64) error {
	src := `SELECT provider, sku, region, zone, pricing, bar_start, close AS bc, high AS bh, low AS bl, gpu AS bg,
			tier AS bt, version AS bv
		FROM bars WHERE width = 3600 AND bar_start >= ? AND bar_start < ? AND version = ?`
	args := []any{clampTime(since), clampTime(until), version}
	if version == 0 {
		src = `SELECT provider, sku, region, zone, pricing, bar_start, argMax(close, version) AS bc,
			argMax(high, version) AS bh, argMax(low, version) AS bl, argMax(gpu, version) AS bg,
			argMax(tier, version) AS bt, max(version) AS bv
		FROM bars WHERE width = 3600 AND bar_start >= ? AND bar_start < ?
		GROUP BY provider, sku, region, zone, pricing, bar_start`
		args = args[:2]
	}
	q := `INSERT INTO volatility_days (day, provider, sku, region, zone, pricing, ` + volDayCols + `,
		starts, closes, highs, lows, gpus, tiers, version)
	SELECT d, p, k, r, z, pr, ` + strings.Join(dayFigures("S", "C", "H", "L", "G", "T"), ", ") + `, S, C, H, L, G, T, v
	FROM (
		SELECT d, p, k, r, z, pr, v, arrayMap(x -> x.1, s) AS S, arrayMap(x -> x.2, s) AS C,
			arrayMap(x -> x.3, s) AS H, arrayMap(x -> x.4, s) AS L, arrayMap(x -> x.5, s) AS G,
			arrayMap(x -> x.6, s) AS T
		FROM (
			SELECT toStartOfDay(bar_start) AS d, provider AS p, sku AS k, region AS r, zone AS z, pricing AS pr,
				arraySort(x -> x.1, groupArray((toUInt32(bar_start), bc, bh, bl, bg, bt))) AS s,
				max(bv) AS v
			FROM (` + src + `)
			GROUP BY p, k, r, z, pr, d))`
	if err := s.conn.Exec(ctx, q, args...); err != nil {
		return s.wrap("rollup volatility days", err)
	}
	return nil
}

// backfillVolatilityDays fills volatility_days from the hourly bars already built,
// a week of days per query (run when migration 15 is applied; again, it writes the
// same rows).
func (s *Store) backfillVolatilityDays(ctx context.Context) error {
	var lo, hi time.Time
	var n uint64
	if err := s.conn.QueryRow(ctx, `SELECT min(bar_start), max(bar_start), count() FROM bars WHERE width = 3600`).Scan(&lo, &hi, &n); err != nil {
		return s.wrap("backfill volatility days", err)
	}
	if n == 0 {
		return nil
	}
	since, until := store.RollupSpan(lo, hi.Add(time.Second))
	for from := since; from.Before(until); from = from.Add(rollupChunk) {
		to := from.Add(rollupChunk)
		if to.After(until) {
			to = until
		}
		if err := s.writeVolatilityDays(ctx, from, to, 0); err != nil {
			return fmt.Errorf("%w (days %s to %s)", err, from.Format(time.DateOnly), to.Format(time.DateOnly))
		}
	}
	return nil
}

// afterMigration is work a migration needs done with data once its statements ran,
// by migration name; the migration is recorded only after it succeeded, so an
// interrupted one is done again by the next Migrate.
var afterMigration = map[string]func(*Store, context.Context) error{
	"volatility_days": (*Store).backfillVolatilityDays,
}

// dayAliases name volDayCols in the day rows dayVolatilities combines.
var dayAliases = []string{"g", "t", "u", "n", "fs", "fc", "lc", "hi", "lo", "cx", "cn", "c1", "c2",
	"rn", "rf", "r1", "r2", "rmin", "rmax", "ch", "dd"}

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

// dayVolatilities is Volatilities of hourly bars from volatility_days: per series
// and day, the summary's last write for the days the window holds whole (and, with
// a tier or GPU filter, whose bars all have one tier and GPU), and for the days
// the window cuts (or a filter splits), the same figures computed from the day's
// bars kept in the row, those the window and filter select. Per series the days,
// in order, then combine as analytics.SeriesVolatilityOf defines the figures over
// the concatenated bars:
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
func (s *Store) dayVolatilities(ctx context.Context, q store.BarQuery, end time.Time, below float64) ([]store.SeriesVolatility, error) {
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

	// The series' own conditions (in the summary's key).
	var seriesConds []string
	var seriesArgs []any
	for _, c := range []struct{ col, v string }{{"provider", q.Provider}, {"pricing", q.Pricing}, {"region", q.Region}} {
		if c.v != "" {
			seriesConds = append(seriesConds, c.col+" = ?")
			seriesArgs = append(seriesArgs, c.v)
		}
	}
	endSec := uint32(clampTime(end).Unix())
	// The hours each bar of a day row covers (ks) and those below the threshold.
	share := func(S, C string) (string, []any) {
		if below <= 0 {
			return `toUInt64(0) AS un, toUInt64(0) AS tt`, nil
		}
		ks := `arrayMap((xa, xb) -> toUInt64(greatest(0, intDiv(toInt64(least(xb, ?)) - toInt64(xa) + 3599, 3600))), ` + S +
			`, arrayPushBack(arrayPopFront(` + S + `), toUInt32(dy + 86400)))`
		return `toUInt64(arraySum(arrayMap((xk, xc) -> if(xc < ?, xk, toUInt64(0)), ` + ks + `, ` + C + `))) AS un,
			toUInt64(arraySum(` + ks + `)) AS tt`, []any{below, endSec, endSec}
	}
	const dedupKeys = `cityHash64(provider, sku, region, zone, pricing) AS h1, sipHash64(provider, sku, region, zone, pricing) AS h2, day`
	const names = `any(provider) AS p, any(sku) AS k, any(region) AS r, any(zone) AS z, any(pricing) AS pr`
	dayRange := func(from, to time.Time) (string, []any) {
		var c []string
		var a []any
		if !from.IsZero() {
			c, a = append(c, "day >= ?"), append(a, from)
		}
		if !to.IsZero() {
			c, a = append(c, "day < ?"), append(a, to)
		}
		if len(c) == 0 {
			return "1", nil
		}
		return strings.Join(c, " AND "), a
	}
	where := func(cond string, args []any) *sqlText {
		w := (&sqlText{}).add(" WHERE ("+cond+")", args...)
		for i, c := range seriesConds {
			w.add(" AND "+c, seriesArgs[i])
		}
		return w
	}

	var parts []*sqlText
	if wholeDays {
		// The stored figures of whole days.
		cols := make([]string, len(dayAliases))
		for i, a := range dayAliases {
			col := strings.TrimSpace(strings.Split(volDayCols, ",")[i])
			if a == "fs" {
				cols[i] = "toUInt32(argMax(" + col + ", version)) AS " + a
				continue
			}
			cols[i] = "argMax(" + col + ", version) AS " + a
		}
		arrays := ""
		if below > 0 {
			arrays = ", argMax(starts, version) AS S, argMax(closes, version) AS C"
		}
		sh, shArgs := share("S", "C")
		p := (&sqlText{}).add(`SELECT h1, h2, p, k, r, z, pr, toUInt32(day) AS dy, `+strings.Join(dayAliases, ", ")+`, `+sh+`
			FROM (SELECT `+dedupKeys+`, `+names+`, `+strings.Join(cols, ", ")+arrays+`
				FROM volatility_days`, shArgs...)
		rc, ra := dayRange(wholeFrom, wholeTo)
		p.addQ(where(rc, ra)).add(` GROUP BY h1, h2, day`)
		if attrs {
			// Days whose bars differ in tier or GPU are computed from their bars.
			p.add(` HAVING u = 1`)
			if q.GPU != "" {
				p.add(` AND g = ?`, q.GPU)
			}
			if q.Tier != "" {
				p.add(` AND t = ?`, q.Tier)
			}
		}
		parts = append(parts, p.add(`)`))
	}
	if len(edges) > 0 || attrs {
		// Days computed from their bars: those the window cuts, and with a tier or
		// GPU filter, those whose bars differ in them. The bars the window and the
		// filter select: mask.
		var conds []string
		var maskArgs []any
		if !since.IsZero() {
			conds, maskArgs = append(conds, "x >= ?"), append(maskArgs, uint32(since.Unix()))
		}
		if !until.IsZero() {
			conds, maskArgs = append(conds, "x < ?"), append(maskArgs, uint32(until.Unix()))
		}
		if q.GPU != "" {
			conds, maskArgs = append(conds, "xg = ?"), append(maskArgs, q.GPU)
		}
		if q.Tier != "" {
			conds, maskArgs = append(conds, "xt = ?"), append(maskArgs, q.Tier)
		}
		masked := (&sqlText{}).add(`SELECT h1, h2, p, k, r, z, pr, dy`)
		for _, a := range []string{"S", "C", "H", "L", "G", "T"} {
			masked.add(`, arrayFilter((y, x, xg, xt) -> `+strings.Join(conds, " AND ")+`, `+a+`0, S0, G0, T0) AS `+a, maskArgs...)
		}
		masked.add(` FROM (SELECT ` + dedupKeys + `, toUInt32(day) AS dy, ` + names + `, argMax(uniform, version) AS u,
			argMax(starts, version) AS S0, argMax(closes, version) AS C0, argMax(highs, version) AS H0,
			argMax(lows, version) AS L0, argMax(gpus, version) AS G0, argMax(tiers, version) AS T0
			FROM volatility_days`)
		var dc []string
		var da []any
		for _, e := range edges {
			dc, da = append(dc, "day = ?"), append(da, e)
		}
		if attrs {
			rc, ra := dayRange(since.Truncate(day), wholeTo)
			if !until.IsZero() && len(edges) > 0 && edges[len(edges)-1].Equal(wholeTo) {
				rc, ra = dayRange(since.Truncate(day), wholeTo.Add(day))
			}
			masked.addQ(where(rc, ra)).add(` GROUP BY h1, h2, day`)
			// Edge days, or whole days whose bars differ in tier or GPU.
			having := append([]string{"u = 0"}, dc...)
			masked.add(` HAVING `+strings.Join(having, " OR "), da...)
		} else {
			masked.addQ(where(strings.Join(dc, " OR "), da)).add(` GROUP BY h1, h2, day`)
		}
		masked.add(`)`)
		figs := dayFigures("S", "C", "H", "L", "G", "T")
		for i, a := range dayAliases {
			if a == "fs" {
				figs[i] = "toUInt32(" + figs[i] + ")"
			}
			figs[i] += " AS " + a
		}
		sh, shArgs := share("S", "C")
		p := (&sqlText{}).add(`SELECT h1, h2, p, k, r, z, pr, dy, `+strings.Join(figs, ", ")+`, `+sh+`
			FROM (`, shArgs...).addQ(masked).add(`) WHERE notEmpty(C)`)
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	union := &sqlText{}
	for i, p := range parts {
		if i > 0 {
			union.add(" UNION ALL ")
		}
		union.addQ(p)
	}
	fold := (&sqlText{}).add(volatilityFold, below, endSec, endSec).addQ(union).add(volatilityFoldEnd)
	rows, err := s.conn.Query(ctx, fold.b.String(), fold.args...)
	if err != nil {
		return nil, s.wrap("volatility", err)
	}
	defer rows.Close()
	var out []store.SeriesVolatility
	for rows.Next() {
		var (
			v                            store.SeriesVolatility
			n, nr, changes, under, total uint64
			ssr, rmin, rmax, mc, ssc     float64
			cmin, cmax, dd               float64
		)
		if err := rows.Scan(&v.Provider, &v.SKU, &v.Region, &v.Zone, &v.Pricing, &v.GPU, &v.Tier, &n, &nr,
			&ssr, &rmin, &rmax, &mc, &ssc, &cmin, &cmax, &v.Max, &v.Min, &v.Close, &changes, &dd,
			&under, &total); err != nil {
			return nil, s.wrap("volatility", err)
		}
		v.Bars, v.Returns, v.Changes = int(n), int(nr), int(changes)
		switch {
		case nr < 2:
		case rmin == rmax:
			_, v.StdLogReturn = sampleStdOf(int(nr), rmin)
		default:
			v.StdLogReturn = math.Sqrt(math.Max(ssr, 0) / float64(nr-1))
		}
		v.StdLogReturn = store.Finite(v.StdLogReturn)
		v.Annualised = v.StdLogReturn * store.AnnualFactor(q.Width)
		sd := math.NaN()
		if cmin == cmax {
			v.Mean, sd = sampleStdOf(int(n), cmin)
		} else {
			v.Mean, sd = mc, math.Sqrt(math.Max(ssc, 0)/float64(n-1))
		}
		v.CV = store.Finite(sd / v.Mean)
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
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("volatility", err)
	}
	return out, nil
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

// volatilityFold combines the day rows of each series (the union that follows it,
// volatilityFoldEnd closing it) into the window's figures; see dayVolatilities.
// Its parameters: below, end, end.
const volatilityFold = `SELECT P, K, R, Z, PR, LG, LT, toUInt64(n), toUInt64(nr), toFloat64(ssr), toFloat64(rmin), toFloat64(rmax),
	toFloat64(mc), toFloat64(ssc), toFloat64(cmin), toFloat64(cmax), toFloat64(hi), toFloat64(lo), toFloat64(LC[m]),
	toUInt64(changes), toFloat64(dd), toUInt64(under), toUInt64(total)
FROM (
		SELECT P, K, R, Z, PR, LG, LT, m, LC,
			arraySum(DN) AS n, arraySum(RN) + length(bret) AS nr,
			(arraySum(arrayMap((xs1, xk, xr) -> xs1 + xk * xr, R1, RN, RF)) + arraySum(bret)) / nr AS M,
			arraySum(arrayMap((xs2, xs1, xk, xr) -> xs2 + 2 * (xr - M) * xs1 + xk * (xr - M) * (xr - M), R2, R1, RN, RF))
				+ arraySum(arrayMap(xb -> (xb - M) * (xb - M), bret)) AS ssr,
			arrayReduce('min', arrayConcat(arrayFilter((xv, xk) -> xk > 0, RMIN, RN), bret)) AS rmin,
			arrayReduce('max', arrayConcat(arrayFilter((xv, xk) -> xk > 0, RMAX, RN), bret)) AS rmax,
			FC[1] + arraySum(arrayMap((xs1, xk, xf) -> xs1 + xk * (xf - FC[1]), C1, DN, FC)) / n AS mc,
			arraySum(arrayMap((xs2, xs1, xk, xf) -> xs2 + 2 * (xf - mc) * xs1 + xk * (xf - mc) * (xf - mc), C2, C1, DN, FC)) AS ssc,
			arrayReduce('min', CN) AS cmin, arrayReduce('max', CX) AS cmax,
			arrayReduce('max', HI) AS hi, arrayReduce('min', LO) AS lo,
			arraySum(CH) + arraySum(arrayMap((xa, xb) -> toUInt64(xa != xb), arrayPopBack(LC), arrayPopFront(FC))) AS changes,
			arrayMap(xi -> if(xi > 1, arrayReduce('max', arraySlice(CX, 1, xi - 1)), 0), arrayEnumerate(CX)) AS PK,
			arrayReduce('max', arrayMap((xd, xp, xl) -> greatest(xd, if(xp > 0, 1 - xl / xp, 0)), DD, PK, CN)) AS dd,
			arraySum(UN) + arraySum(arrayMap((xg, xl) -> if(xl < ?, xg, toUInt64(0)), gaps, LC)) AS under,
			arraySum(TT) + arraySum(gaps) AS total
		FROM (
			SELECT P, K, R, Z, PR, LG, LT, length(D) AS m,
				arrayMap(x -> x.1, D) AS DY, arrayMap(x -> x.2, D) AS DN, arrayMap(x -> x.3, D) AS FS,
				arrayMap(x -> x.4, D) AS FC, arrayMap(x -> x.5, D) AS LC, arrayMap(x -> x.6, D) AS HI,
				arrayMap(x -> x.7, D) AS LO, arrayMap(x -> x.8, D) AS CX, arrayMap(x -> x.9, D) AS CN,
				arrayMap(x -> x.10, D) AS C1, arrayMap(x -> x.11, D) AS C2, arrayMap(x -> x.12, D) AS RN,
				arrayMap(x -> x.13, D) AS RF, arrayMap(x -> x.14, D) AS R1, arrayMap(x -> x.15, D) AS R2,
				arrayMap(x -> x.16, D) AS RMIN, arrayMap(x -> x.17, D) AS RMAX, arrayMap(x -> x.18, D) AS CH,
				arrayMap(x -> x.19, D) AS DD, arrayMap(x -> x.20, D) AS UN, arrayMap(x -> x.21, D) AS TT,
				arrayMap((xa, xb) -> log(xb / xa),
					arrayFilter((xa, xb) -> xa > 0 AND xb > 0, arrayPopBack(LC), arrayPopFront(FC)),
					arrayFilter((xb, xa) -> xa > 0 AND xb > 0, arrayPopFront(FC), arrayPopBack(LC))) AS bret,
				arrayMap((xf, xd) -> toUInt64(greatest(0, intDiv(toInt64(least(xf, ?)) - toInt64(xd) - 86400 + 3599, 3600))),
					arrayPushBack(arrayPopFront(FS), toUInt32(?)), DY) AS gaps
			FROM (
				SELECT any(p) AS P, any(k) AS K, any(r) AS R, any(z) AS Z, any(pr) AS PR,
					argMax(g, dy) AS LG, argMax(t, dy) AS LT,
					arraySort(x -> x.1, groupArray((dy, toUInt64(n), fs, fc, lc, hi, lo, cx, cn, c1, c2, toUInt64(rn), rf,
						r1, r2, rmin, rmax, toUInt64(ch), dd, un, tt))) AS D
				FROM (`

// volatilityFoldEnd closes volatilityFold.
const volatilityFoldEnd = `)
				GROUP BY h1, h2)))
ORDER BY P, K, R, Z, PR`

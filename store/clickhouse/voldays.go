package clickhouse

import (
	"context"
	"fmt"
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
// a chunk of days per query (dayChunks; run when migration 15 is applied; again, it
// writes the same rows).
func (s *Store) backfillVolatilityDays(ctx context.Context) error {
	var lo, hi time.Time
	var n uint64
	if err := s.conn.QueryRow(ctx, `SELECT min(bar_start), max(bar_start), count() FROM bars WHERE width = 3600`).Scan(&lo,
		&hi, &n); err != nil {
		return s.wrap("backfill volatility days", err)
	}
	if n == 0 {
		return nil
	}
	since, until := store.RollupSpan(lo, hi.Add(time.Second))
	spans, err := s.chunks(ctx, since, until, hourlyBarsByDay, "")
	if err != nil {
		return err
	}
	for _, sp := range spans {
		if err := s.writeVolatilityDays(ctx, sp[0], sp[1], 0); err != nil {
			return fmt.Errorf("%w (days %s to %s)", err, sp[0].Format(time.DateOnly), sp[1].Format(time.DateOnly))
		}
	}
	return nil
}

// afterMigration is work a migration needs done with data once its statements ran,
// by migration name; the migration is recorded only after it succeeded, so an
// interrupted one is done again by the next Migrate.
var afterMigration = map[string]func(*Store, context.Context) error{
	"volatility_days":           (*Store).backfillVolatilityDays,
	"volatility_days_series_id": (*Store).optimizeVolatilityDays,
}

// optimizeVolatilityDays merges volatility_days into one part per partition
// (migration 16), so that the rows already written store their series_id instead
// of hashing five strings whenever they are read. On a cluster it leaves the
// merges to the replicas (OPTIMIZE on every replica of a shard at once would
// schedule the same merge twice): the column is right either way.
func (s *Store) optimizeVolatilityDays(ctx context.Context) error {
	if s.cluster != "" {
		return nil
	}
	if err := s.conn.Exec(ctx, "OPTIMIZE TABLE volatility_days FINAL"); err != nil {
		return s.wrap("optimize volatility days", err)
	}
	return nil
}

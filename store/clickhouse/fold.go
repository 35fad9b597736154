package clickhouse

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.FoldedRollups = (*Store)(nil)

// providerDays are (provider, UTC day) pairs: the observations a partial rebuild of
// the bars reads. A nil *providerDays keeps every observation.
type providerDays struct {
	providers []string
	days      []uint32 // Unix seconds of each day's start
	pairs     map[string]map[int64]bool
}

func (p *providerDays) add(provider string, day int64) {
	if p.pairs == nil {
		p.pairs = map[string]map[int64]bool{}
	}
	if p.pairs[provider] == nil {
		p.pairs[provider] = map[int64]bool{}
		p.providers = append(p.providers, provider)
	}
	if !p.pairs[provider][day] {
		p.pairs[provider][day] = true
		if !slices.Contains(p.days, uint32(day)) {
			p.days = append(p.days, uint32(day))
		}
	}
}

func (p *providerDays) has(provider string, day int64) bool {
	return p != nil && p.pairs[provider][day]
}

func (p *providerDays) empty() bool { return p == nil || len(p.pairs) == 0 }

// cond is the condition on observations that keeps the pairs: their providers and
// days (a superset of the pairs, which rebuilds more bars than needed, each exactly).
func (p *providerDays) cond() string {
	if p == nil {
		return ""
	}
	return ` AND has(?, provider) AND has(?, toUInt32(toStartOfDay(effective_at)))`
}

func (p *providerDays) args() []any {
	if p == nil {
		return nil
	}
	sort.Strings(p.providers)
	slices.Sort(p.days)
	return []any{p.providers, p.days}
}

// RollupFolded writes the bars of a run from the fold of the rows it wrote
// (store.FoldedRollups), with what Rollup over the fold's span would write for
// its series: the bars of each folded series' UTC day come from the fold where the
// store held no daily bar of that series and day before, so that no observation
// is read back; the (provider, day) pairs where it held one (rows written again,
// or added to a day collected before) are rebuilt from the observations as
// Rollup does. Every bar written carries one new version, from which the
// volatility days and day series of the fold's days are derived as after a
// Rollup. Bars of series the fold does not hold are left as they are: their
// observations did not change.
//
// The fold must hold the rows of every write into its series and days since their
// bars were last built: two runs writing the same series at once would each write
// its own rows' bars (a run's rows are one source's; run them one at a time).
func (s *Store) RollupFolded(ctx context.Context, f *store.BarFold) error {
	if f.Overflowed() {
		return fmt.Errorf("clickhouse: rollup: the fold overflowed; use Rollup")
	}
	if f.Empty() {
		return nil
	}
	since, until := store.RollupSpan(f.Span())
	stale, err := s.storedDays(ctx, f, since, until)
	if err != nil {
		return err
	}
	v := s.versions(1)
	if !stale.empty() {
		spans, err := s.chunks(ctx, since, until, observationsByDay, stale.cond(), stale.args()...)
		if err != nil {
			return err
		}
		for _, sp := range spans {
			if err := s.rebuildBars(ctx, sp[0], sp[1], v, stale); err != nil {
				return err
			}
		}
	}
	bars := f.Bars(func(k [5]string, day time.Time) bool { return !stale.has(k[0], day.Unix()) })
	if err := s.writeBars(ctx, bars, v); err != nil {
		return err
	}
	spans, err := s.chunks(ctx, since, until, hourlyBarsByDay, ` AND version = ?`, v)
	if err != nil {
		return err
	}
	for _, sp := range spans {
		if err := s.derive(ctx, sp[0], sp[1], v); err != nil {
			return err
		}
	}
	return nil
}

// chunkEnd is the end of the chunk of days from from, rollupChunk on, at most until.
func chunkEnd(from, until time.Time) time.Time {
	if to := from.Add(rollupChunk); to.Before(until) {
		return to
	}
	return until
}

// storedDays are the (provider, UTC day) pairs in [since, until) where the store
// holds a daily bar of a series the fold holds rows of on that day.
func (s *Store) storedDays(ctx context.Context, f *store.BarFold, since, until time.Time) (*providerDays, error) {
	folded := f.Days()
	rows, err := s.conn.Query(ctx, `SELECT provider, sku, region, zone, pricing, toUInt32(bar_start)
		FROM bars WHERE width = 86400 AND bar_start >= ? AND bar_start < ? AND has(?, provider)
		GROUP BY provider, sku, region, zone, pricing, bar_start`, clampTime(since), clampTime(until), f.Providers())
	if err != nil {
		return nil, s.wrap("rollup: stored days", err)
	}
	defer rows.Close()
	stale := &providerDays{}
	for rows.Next() {
		var k [5]string
		var day uint32
		if err := rows.Scan(&k[0], &k[1], &k[2], &k[3], &k[4], &day); err != nil {
			return nil, s.wrap("rollup: stored days", err)
		}
		if folded[k][int64(day)] {
			stale.add(k[0], int64(day))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("rollup: stored days", err)
	}
	return stale, nil
}

// writeBars inserts bars (bars[i] of width store.Widths[i]) with version v, a
// column at a time.
func (s *Store) writeBars(ctx context.Context, bars [][]store.Bar, v uint64) error {
	n := 0
	for _, bs := range bars {
		n += len(bs)
	}
	if n == 0 {
		return nil
	}
	widths, counts, versions := make([]uint64, 0, n), make([]uint64, 0, n), make([]uint64, 0, n)
	starts, seen := make([]time.Time, 0, n), make([]time.Time, 0, n)
	texts := make([][]string, 10) // provider … price_basis
	nums := make([][]float64, 5)  // open, high, low, close, mean
	for i := range texts {
		texts[i] = make([]string, 0, n)
	}
	for i := range nums {
		nums[i] = make([]float64, 0, n)
	}
	for i, bs := range bars {
		w := uint64(store.Widths[i] / time.Second)
		for _, b := range bs {
			t, err := toCH(b.LastObservedAt)
			if err != nil {
				return fmt.Errorf("clickhouse: write bars: %s: %w", b.SeriesKey(), err)
			}
			widths, starts, seen = append(widths, w), append(starts, b.Start), append(seen, t)
			for j, x := range []string{b.Provider, b.SKU, b.Region, b.Zone, b.Pricing, b.GPU, b.Tier, b.Interconnect,
				b.PriceScope, b.PriceBasis} {
				texts[j] = append(texts[j], x)
			}
			for j, x := range []float64{b.Open, b.High, b.Low, b.Close, b.Mean} {
				nums[j] = append(nums[j], x)
			}
			counts, versions = append(counts, uint64(b.Count)), append(versions, v)
		}
	}
	w32 := make([]uint32, n)
	for i, w := range widths {
		w32[i] = uint32(w)
	}
	cols := []any{w32, starts}
	for _, t := range texts {
		cols = append(cols, t)
	}
	for _, x := range nums {
		cols = append(cols, x)
	}
	cols = append(cols, counts, seen, versions)
	batch, err := s.conn.PrepareBatch(ctx, `INSERT INTO bars (width, bar_start, provider, sku, region, zone, pricing,
		gpu, tier, interconnect, price_scope, price_basis, open, high, low, close, mean, count, last_observed_at,
		version)`)
	if err != nil {
		return s.wrap("rollup: write bars", err)
	}
	for i, col := range cols {
		if err := batch.Column(i).Append(col); err != nil {
			_ = batch.Abort()
			return s.wrap("rollup: write bars", err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.wrap("rollup: write bars", err)
	}
	return nil
}

package clickhouse

import (
	"context"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// DailyBars exposes dailyBars to the tests: whether day_series answered.
func (s *Store) DailyBars(ctx context.Context, q store.BarQuery) ([]store.Bar, bool, error) {
	return s.dailyBars(ctx, q)
}

// HourlyCarry exposes hourlyCarry to the tests: the hourly bars Bars answers, and
// how many series were carried in from the days before the window, from the days
// of their last daily bar and from their whole history, and whether all history
// was read for every series.
func (s *Store) HourlyCarry(ctx context.Context, q store.BarQuery) (bars []store.Bar, recent, stopped, deep int, whole bool, err error) {
	window, carry, p, err := s.hourlyCarry(ctx, q, func() ([]series, error) { return s.barSeries(ctx, q, q.Since, q.Until) })
	if err != nil {
		return nil, 0, 0, 0, false, err
	}
	return flatten(window, carry), p.recent, p.stopped, p.deep, p.whole, nil
}

// ClusterDDLHint is clusterDDLHint, for the tests.
var ClusterDDLHint = clusterDDLHint

// DayChunks is dayChunks, for the tests.
var DayChunks = dayChunks

// SetRollupBudget sets the most rows a rollup's INSERT … SELECT groups (rollupBudget)
// until the test ends.
func SetRollupBudget(t interface{ Cleanup(func()) }, n uint64) {
	old := rollupBudget
	rollupBudget = n
	t.Cleanup(func() { rollupBudget = old })
}

// Chunks are the spans Rollup runs one INSERT … SELECT per over [since, until).
func (s *Store) Chunks(ctx context.Context, since, until time.Time) ([][2]time.Time, error) {
	return s.chunks(ctx, since, until, observationsByDay, "")
}

// SortedRows is sortedRows, for the tests.
var SortedRows = sortedRows

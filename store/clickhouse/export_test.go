package clickhouse

import (
	"context"

	"github.com/gpuprice/gpuprice/store"
)

// DailyBars exposes dailyBars to the tests: whether day_series answered.
func (s *Store) DailyBars(ctx context.Context, q store.BarQuery) ([]store.Bar, bool, error) {
	return s.dailyBars(ctx, q)
}

package clickhouse

import (
	"context"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// WriteVolatilityDays is writeVolatilityDays, for the benchmarks: the cost the
// summaries add to a Rollup.
func WriteVolatilityDays(st store.Store, ctx context.Context, since, until time.Time, version uint64) error {
	return st.(*Store).writeVolatilityDays(ctx, since, until, version)
}

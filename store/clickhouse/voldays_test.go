package clickhouse_test

import (
	"testing"

	"github.com/gpuprice/gpuprice/analytics/figurestest"
)

// TestIntegrationClickHouseVolatilityDays runs figurestest.VolatilityWindows (hourly
// volatility combined from volatility_days where the summaries could go wrong,
// against the same figures computed in Go from the bars) on bars and day summaries
// in several versions no merge has resolved (the last write must win); then again
// after volatility_days is dropped and rebuilt from the bars by Migrate (the
// backfill of migration 15).
func TestIntegrationClickHouseVolatilityDays(t *testing.T) {
	ctx := t.Context()
	st, db, admin := openUnmerged(t, "bars", "volatility_days")
	check := figurestest.VolatilityWindows(t, st)
	var raw, distinct uint64
	if err := admin.QueryRow(ctx, "SELECT count(), uniqExact(provider, sku, region, zone, pricing, day) FROM `"+db+"`.volatility_days").Scan(&raw, &distinct); err != nil {
		t.Fatal(err)
	}
	if raw < 2*distinct {
		t.Fatalf("volatility_days: %d rows for %d days; want every day in at least two versions", raw, distinct)
	}

	check(st, "rolled up")

	// Migration 15's backfill: volatility_days rebuilt from the (unmerged) bars.
	for _, stmt := range []string{"DROP TABLE `" + db + "`.volatility_days", "DROP TABLE `" + db + "`.schema_migrations"} {
		if err := admin.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	check(st, "backfilled")
}

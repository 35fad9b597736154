package clickhouse_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// BenchmarkClickHouseViews times the dashboard views (docs/views.md) as Grafana
// reads them, on a synthetic history (storetest.Generate) of 1000 series with one
// observation a day through 2025, carried forward to today by the day-price views.
// The data set is loaded once into gpuprice_bench_views and kept (drop it by hand).
//
//	GPUPRICE_CLICKHOUSE_DSN=clickhouse://localhost:9000/default \
//	  go test ./store/clickhouse/ -run '^$' -bench ClickHouseViews -benchtime 3x
func BenchmarkClickHouseViews(b *testing.B) {
	base := os.Getenv("GPUPRICE_CLICKHOUSE_DSN")
	if base == "" {
		b.Skip("set GPUPRICE_CLICKHOUSE_DSN to run the ClickHouse benchmark")
	}
	const series, days = 1000, 365
	u, _ := url.Parse(base)
	u.Path = "/gpuprice_bench_views"
	ctx := context.Background()
	st, err := clickhouse.Open(ctx, u.String())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	admin := adminConn(&testing.T{}, u)
	defer admin.Close()
	db := chtest.Database(u)
	var have uint64
	if err := admin.QueryRow(ctx, "SELECT count() FROM "+db+".observations").Scan(&have); err != nil {
		b.Fatal(err)
	}
	if have < series*days {
		start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		err := storetest.Generate(storetest.GenSpec{Series: series, Steps: days, Start: start, Step: 24 * time.Hour, Seed: 5},
			100_000, func(obs []schemas.Observation) error { return st.WriteObservations(ctx, obs) })
		if err != nil {
			b.Fatal(err)
		}
		if err := st.(store.Rollups).Rollup(ctx, time.Time{}, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
	var dayPrices uint64
	if err := admin.QueryRow(ctx, "SELECT count() FROM "+db+".v_day_prices").Scan(&dayPrices); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d series, %d observations, %d day prices through today", series, series*days, dayPrices)
	since := fmt.Sprintf("toDateTime(%d)", time.Now().Add(-90*24*time.Hour).Unix())
	for name, q := range map[string]string{
		"LatestOnOffer":    "SELECT count(), min(price_usd_gpu_hour) FROM " + db + ".v_latest WHERE on_offer = 1",
		"DailyBars":        "SELECT count(), sum(close) FROM " + db + ".v_bars WHERE width = 86400",
		"DayPrices90d":     "SELECT count(), sum(price) FROM " + db + ".v_day_prices WHERE day >= " + since,
		"Spreads90d":       "SELECT count(), sum(ratio) FROM " + db + ".v_spreads WHERE day >= " + since,
		"Index90d":         "SELECT count(), sum(price) FROM " + db + ".v_index WHERE day >= " + since,
		"ObservationsFull": "SELECT count(), sum(price_usd_gpu_hour) FROM " + db + ".v_observations",
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				var n uint64
				var x float64
				if err := admin.QueryRow(ctx, q).Scan(&n, &x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

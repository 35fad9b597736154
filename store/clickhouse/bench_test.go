package clickhouse_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// BenchmarkClickHouseAnalytics compares a full scan of the raw observations with
// the 30-day reads of volatility, spreads and history, which read bars. It needs
// GPUPRICE_CLICKHOUSE_DSN; GPUPRICE_BENCH_ROWS sets the raw rows (default 200000,
// 1000 series of 5-minute data). The data set is loaded once into the database
// gpuprice_bench_<rows> and kept for later runs (drop it by hand).
//
//	GPUPRICE_CLICKHOUSE_DSN=clickhouse://localhost:9000/default GPUPRICE_BENCH_ROWS=10000000 \
//	  go test ./store/clickhouse/ -run '^$' -bench ClickHouseAnalytics -benchtime 5x -timeout 2h
func BenchmarkClickHouseAnalytics(b *testing.B) {
	base := os.Getenv("GPUPRICE_CLICKHOUSE_DSN")
	if base == "" {
		b.Skip("set GPUPRICE_CLICKHOUSE_DSN to run the ClickHouse benchmark")
	}
	rows := storetest.BenchRows(b, "GPUPRICE_BENCH_ROWS", 200_000)
	const series = 1000
	steps := rows / series
	u, _ := url.Parse(base)
	if u.Scheme == "chdb" {
		// current ClickHouse embedded: the data set is kept in a directory of its
		// own beside the tests' (one engine directory per process)
		root, _, _ := strings.Cut(strings.TrimPrefix(base, "chdb://"), "?")
		u, _ = url.Parse(fmt.Sprintf("chdb://%s?database=gpuprice_bench_%d", filepath.Join(root, "bench"), rows))
	} else {
		u.Path = fmt.Sprintf("/gpuprice_bench_%d", rows)
	}
	ctx := context.Background()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(time.Duration(steps) * 5 * time.Minute)
	admin := adminConn(&testing.T{}, u)
	defer admin.Close()
	st := storetest.BenchStore(b, ctx, u.String(), storetest.GenSpec{Series: series, Steps: steps, Start: start, Step: 5 * time.Minute, Seed: 1},
		200_000, func(store.Store) bool {
			var have uint64
			if err := admin.QueryRow(ctx, "SELECT count() FROM "+chtest.Database(u)+".observations").Scan(&have); err != nil {
				b.Fatal(err)
			}
			return have >= uint64(steps*series)
		})
	r := st.(store.Rollups)
	since := end.Add(-30 * 24 * time.Hour)
	gpu := "H100-SXM-80GB"
	b.Run("FullScanRaw", func(b *testing.B) {
		for b.Loop() {
			var n uint64
			var sum float64
			if err := admin.QueryRow(ctx, "SELECT count(), sum(price_usd_gpu_hour) FROM "+chtest.Database(u)+".observations").Scan(&n, &sum); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What a raw read must do to count each identity once (the Observations path).
	// Past some 50M rows its GROUP BY outgrows the server's default 10 GB per query:
	// it may use 16 GB and spill to disk beyond 6 GB.
	big := ch.Context(ctx, ch.WithSettings(ch.Settings{
		"max_memory_usage":                   16 << 30,
		"max_bytes_before_external_group_by": 6 << 30,
	}))
	b.Run("FullScanRawDeduped", func(b *testing.B) {
		for b.Loop() {
			var n uint64
			var sum float64
			if err := admin.QueryRow(big, `SELECT count(), sum(p) FROM (SELECT argMax(price_usd_gpu_hour, version) AS p
				FROM `+chtest.Database(u)+`.observations GROUP BY provider, sku, region, zone, pricing, effective_at)`).Scan(&n, &sum); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Volatility30d", func(b *testing.B) {
		for b.Loop() {
			vs, err := analytics.VolatilitiesOf(ctx, r, store.BarQuery{Filter: store.Filter{Pricing: schemas.Spot, Since: since, Until: end}, Width: store.Hourly}, end, 0)
			if err != nil {
				b.Fatal(err)
			}
			analytics.Group(vs, analytics.ByOffering)
		}
	})
	// What Volatility30d did before volatility_days: the figures computed on the
	// server from the window's hourly bars (deduplicated, arrays per series).
	b.Run("Volatility30dBarsOnServer", func(b *testing.B) {
		for b.Loop() {
			vs, err := st.(*clickhouse.Store).BarVolatilities(ctx, store.BarQuery{Filter: store.Filter{Pricing: schemas.Spot, Since: since, Until: end}, Width: store.Hourly}, end, 0)
			if err != nil {
				b.Fatal(err)
			}
			analytics.Group(vs, analytics.ByOffering)
		}
	})
	// What Volatility30d did before the store computed it: read every bar, compute in Go.
	b.Run("Volatility30dFromBars", func(b *testing.B) {
		for b.Loop() {
			bars, err := r.Bars(ctx, store.BarQuery{Filter: store.Filter{Pricing: schemas.Spot, Since: since, Until: end}, Width: store.Hourly})
			if err != nil {
				b.Fatal(err)
			}
			analytics.Group(analytics.Volatilities(bars, store.Hourly, end, 0), analytics.ByOffering)
		}
	})
	// What the bars rebuild of a week costs (Rollup: the bars, then their per-day
	// summaries), and the summaries' part of it alone (from the bars the last
	// Rollup wrote, as Rollup writes them).
	week := end.Add(-7 * 24 * time.Hour)
	b.Run("RollupWeek", func(b *testing.B) {
		for b.Loop() {
			if err := r.Rollup(ctx, week, end); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("RollupWeekVolatilityDays", func(b *testing.B) {
		from, to := store.RollupSpan(week, end)
		var v uint64
		if err := admin.QueryRow(ctx, "SELECT max(version) FROM "+chtest.Database(u)+".bars WHERE width = 3600 AND bar_start >= ? AND bar_start < ?", from, to).Scan(&v); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := clickhouse.WriteVolatilityDays(st, ctx, from, to, v); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Spreads and history as the commands compute them (analytics.SpreadsOf and
	// HistoryFor: daily bars through day_series, in their compact form for spreads,
	// day prices in Go), against the same
	// from the bars table alone (TableBars: every carried-in bar looked for in all
	// history before the window), what they did before day_series.
	cs := st.(*clickhouse.Store)
	window := store.Filter{Since: since, Until: end}
	b.Run("Spreads30d", func(b *testing.B) {
		for b.Loop() {
			days, err := analytics.SpreadsOf(ctx, r, window)
			if err != nil {
				b.Fatal(err)
			}
			analytics.SummariseSpreads(days)
		}
	})
	// What Spreads30d did before the compact daily bars (store.DayCloses): every
	// figure of every daily bar read and laid out as store.Bar values.
	b.Run("Spreads30dBars", func(b *testing.B) {
		for b.Loop() {
			bars, err := r.Bars(ctx, store.BarQuery{Filter: window, Width: store.Daily, CarryIn: true})
			if err != nil {
				b.Fatal(err)
			}
			analytics.SummariseSpreads(analytics.SpreadsOfBars(bars, since, end))
		}
	})
	b.Run("Spreads30dFromTable", func(b *testing.B) {
		for b.Loop() {
			bars, err := cs.TableBars(ctx, store.BarQuery{Filter: window, Width: store.Daily, CarryIn: true})
			if err != nil {
				b.Fatal(err)
			}
			analytics.SummariseSpreads(analytics.Spreads(analytics.DailyPrices(bars, since, end)))
		}
	})
	one := window
	one.GPU = gpu
	b.Run("History30d", func(b *testing.B) {
		for b.Loop() {
			if _, err := analytics.HistoryFor(ctx, r, one, gpu, schemas.OnDemand, 5); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("History30dFromTable", func(b *testing.B) {
		for b.Loop() {
			bars, err := cs.TableBars(ctx, store.BarQuery{Filter: one, Width: store.Daily, CarryIn: true})
			if err != nil {
				b.Fatal(err)
			}
			analytics.HistoryOf(gpu, schemas.OnDemand, analytics.DailyPrices(bars, since, end), since, end, 5)
		}
	})
	// What a spot-move alert reads at each evaluation (analytics/alert: one GPU's
	// spot series, the last day of hourly bars with the bar in force carried in),
	// against the same with the carried-in bar looked for in all history.
	spot := store.BarQuery{Filter: store.Filter{GPU: gpu, Pricing: schemas.Spot, Since: end.Add(-24 * time.Hour), Until: end},
		Width: store.Hourly, CarryIn: true}
	b.Run("SpotMoveHourly24h", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Bars(ctx, spot); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("SpotMoveHourly24hFromTable", func(b *testing.B) {
		for b.Loop() {
			if _, err := cs.TableBars(ctx, spot); err != nil {
				b.Fatal(err)
			}
		}
	})
}

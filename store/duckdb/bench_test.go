package duckdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// BenchmarkDuckDBAnalytics times the 30-day volatility, spreads and history
// computed in DuckDB (window functions) against reading the bars and computing in
// Go, and a bare full scan of the raw observations, on a SYNTHETIC history
// (storetest.Generate: 1,000 series observed hourly). GPUPRICE_BENCH_DUCKDB_ROWS
// sets the raw rows (default 100,000; at least 720,000 for a full 30-day window).
// The file is kept in GPUPRICE_BENCH_DIR (default the system's temporary
// directory) as gpuprice_bench_<rows>.duckdb for later runs.
//
//	GPUPRICE_BENCH_DUCKDB_ROWS=2000000 go test ./store/duckdb -run '^$' -bench DuckDBAnalytics -benchtime 5x
func BenchmarkDuckDBAnalytics(b *testing.B) {
	rows := storetest.BenchRows(b, "GPUPRICE_BENCH_DUCKDB_ROWS", 100_000)
	const series = 1000
	steps := rows / series
	dir := os.Getenv("GPUPRICE_BENCH_DIR")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("gpuprice_bench_%d.duckdb", rows))
	_, statErr := os.Stat(path)
	ctx := context.Background()
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(time.Duration(steps) * time.Hour)
	st := storetest.BenchStore(b, ctx, "duckdb://"+path, storetest.GenSpec{Series: series, Steps: steps, Start: start, Step: time.Hour, Seed: 1},
		100_000, func(store.Store) bool { return statErr == nil })
	r := st.(store.Rollups)
	since := end.Add(-30 * 24 * time.Hour)
	window := store.Filter{Since: since, Until: end}
	spot := store.BarQuery{Filter: store.Filter{Pricing: schemas.Spot, Since: since, Until: end}, Width: store.Hourly}
	gpu := "H100-SXM-80GB"
	one := window
	one.GPU = gpu
	b.Run("FullScanRaw", func(b *testing.B) {
		for b.Loop() {
			var n int64
			var sum float64
			if err := st.(*Store).db.QueryRowContext(ctx, `SELECT count(*), sum(price_usd_gpu_hour) FROM observations`).Scan(&n, &sum); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Volatility30d", func(b *testing.B) {
		for b.Loop() {
			vs, err := analytics.VolatilitiesOf(ctx, r, spot, end, 0)
			if err != nil {
				b.Fatal(err)
			}
			analytics.Group(vs, analytics.ByOffering)
		}
	})
	b.Run("Volatility30dFromBars", func(b *testing.B) {
		for b.Loop() {
			bars, err := r.Bars(ctx, spot)
			if err != nil {
				b.Fatal(err)
			}
			analytics.Group(analytics.Volatilities(bars, store.Hourly, end, 0), analytics.ByOffering)
		}
	})
	b.Run("Spreads30d", func(b *testing.B) {
		for b.Loop() {
			days, err := analytics.SpreadsOf(ctx, r, window)
			if err != nil {
				b.Fatal(err)
			}
			analytics.SummariseSpreads(days)
		}
	})
	b.Run("Spreads30dFromBars", func(b *testing.B) {
		for b.Loop() {
			bars, err := r.Bars(ctx, store.BarQuery{Filter: window, Width: store.Daily, CarryIn: true})
			if err != nil {
				b.Fatal(err)
			}
			analytics.SummariseSpreads(analytics.Spreads(analytics.DailyPrices(bars, since, end)))
		}
	})
	// The compact daily bars of every series over the window (store.DayCloses, what
	// history reads for one GPU), and of the GPU history reads.
	b.Run("DayCloses30d", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.(store.DayCloses).DayCloses(ctx, window); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DayCloses30dOneGPU", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.(store.DayCloses).DayCloses(ctx, one); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("History30d", func(b *testing.B) {
		for b.Loop() {
			if _, err := analytics.HistoryFor(ctx, r, one, gpu, schemas.OnDemand, 5); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("History30dFromBars", func(b *testing.B) {
		for b.Loop() {
			bars, err := r.Bars(ctx, store.BarQuery{Filter: one, Width: store.Daily, CarryIn: true})
			if err != nil {
				b.Fatal(err)
			}
			analytics.HistoryOf(gpu, schemas.OnDemand, analytics.DailyPrices(bars, since, end), since, end, 5)
		}
	})
}

package clickhouse_test

import (
	"reflect"
	"testing"

	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestIntegrationClickHouseDailyBars checks that daily bars read through
// day_series (Bars) are those the bars table alone gives (TableBars), bar for bar,
// on the day-price data (withdrawn and stopped series, tier changes, derived,
// floor and GPU-only prices, a day rewritten after its bars were built) plus a
// series with bars on both sides of a long gap, for windows whose carried-in bar
// comes from the days read before the window, from day_series' last bar, from the
// older history (the gap; a tier the series left), or does not exist.
func TestIntegrationClickHouseDailyBars(t *testing.T) {
	ctx := t.Context()
	cs, _, day := gapData(t, nil)
	r := store.Rollups(cs)
	windows, filters := gapWindows(day), gapFilters()
	carriedGap := 0
	for _, w := range windows {
		for _, f := range filters {
			for _, carry := range []bool{true, w[0].Equal(day(20))} { // without carry-in: one window
				f.Since, f.Until = w[0], w[1]
				q := store.BarQuery{Filter: f, Width: store.Daily, CarryIn: carry}
				want, err := cs.TableBars(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, ok, err := cs.DailyBars(ctx, q)
				if err != nil || !ok {
					t.Fatalf("DailyBars %+v: ok %v, %v", q, ok, err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("DailyBars %+v: %s", q, storetest.BarsDiff(got, want))
				}
				for _, b := range got {
					if b.SKU == "gap-1" && carry && w[0].Equal(day(20)) && b.Start.Before(w[0]) {
						if !b.Start.Equal(day(1)) {
							t.Fatalf("gap series carried in %v, want %v", b.Start, day(1))
						}
						carriedGap++
					}
				}
			}
		}
	}
	if carriedGap == 0 {
		t.Fatal("the gap series was never carried in: the test misses the older-history case")
	}
	// Bars answers through day_series.
	q := store.BarQuery{Filter: store.Filter{Since: day(20), Until: day(50)}, Width: store.Daily, CarryIn: true}
	got, err := r.Bars(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := cs.TableBars(ctx, q)
	if !reflect.DeepEqual(got, want) || len(got) < 1000 {
		t.Fatalf("Bars: %d bars, TableBars %d: %s", len(got), len(want), storetest.BarsDiff(got, want))
	}
}

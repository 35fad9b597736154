package clickhouse_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
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
	st, err := clickhouse.Open(ctx, freshDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	storetest.DayPriceData(t, st)
	// A series priced on 2025-02-02 and again from 2025-03-05 on: a window opening
	// between carries the first bar in from beyond the days read before it.
	start := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return start.AddDate(0, 0, d) }
	gap := storetest.Observations()[0]
	gap.Provider, gap.SKU, gap.Region, gap.Zone, gap.GPU = "lambda", "gap-1", "region-1", "", "H100-SXM-80GB"
	gap.Tier, gap.Pricing, gap.PriceScope, gap.PriceBasis = schemas.TierSpecialist, schemas.OnDemand, "", ""
	var obs []schemas.Observation
	for _, d := range []int{1, 32, 33, 40} {
		o := gap
		o.EffectiveAt, o.ObservedAt = day(d).Add(3*time.Hour), day(d).Add(3*time.Hour)
		o.PriceUSDGPUHour, o.PriceUSDHour = 2+float64(d)/100, (2+float64(d)/100)*float64(o.GPUCount)
		obs = append(obs, o)
	}
	if err := st.WriteObservations(ctx, obs); err != nil {
		t.Fatal(err)
	}
	r := st.(store.Rollups)
	if err := r.Rollup(ctx, day(1), day(41)); err != nil {
		t.Fatal(err)
	}
	cs := st.(*clickhouse.Store)
	windows := [][2]time.Time{
		{day(20), day(50)},                    // carried in from the days before
		{day(30).Add(7 * time.Hour), day(33)}, // mid-day; the rewritten day
		{day(45), day(50)},                    // withdrawn series: their last bar
		{day(60), day(90)},                    // after every bar
		{day(2).Add(5 * time.Hour), day(9)},   // before the days read begin
		{day(-200), day(-190)},                // nothing
		{day(20), time.Time{}},                // open end
	}
	filters := []store.Filter{{}, {GPU: "H100-SXM-80GB"}, {Pricing: schemas.OnDemand}, {Tier: schemas.TierSpecialist},
		{Tier: schemas.TierHyperscaler}, {Tier: schemas.TierMarketplace}, {GPU: "A100-SXM-80GB", Region: "region-1"},
		{Provider: "lambda"}, {GPU: "H100-SXM-80GB", Tier: schemas.TierSpecialist}, {Provider: "azure", Pricing: schemas.OnDemand}}
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

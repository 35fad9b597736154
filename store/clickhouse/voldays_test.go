package clickhouse_test

import (
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/figurestest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestIntegrationClickHouseVolatilityDays checks hourly volatility combined from
// volatility_days where the summaries could go wrong, against the same figures
// computed in Go from the bars (analytics.Volatilities over Bars): bars and day
// summaries in several versions no merge has resolved (the last write must win), a
// series whose tier and price change in the middle of a UTC day (a tier filter
// splits that day; the day is rebuilt by a later rollup), windows that cut days at
// both ends or fall within one day, a threshold with the window's end before,
// inside and after the data, a GPU filter; then the same after volatility_days is
// dropped and rebuilt from the bars by Migrate (the backfill of migration 15).
func TestIntegrationClickHouseVolatilityDays(t *testing.T) {
	ctx := t.Context()
	st, db, admin := openUnmerged(t, "bars", "volatility_days")
	r := st.(store.Rollups)
	all := storetest.RollupData()
	if err := storetest.Generate(storetest.GenSpec{Series: 24, Steps: 500, Start: storetest.T0, Step: 10 * time.Minute, Seed: 3}, 10_000,
		func(obs []schemas.Observation) error { all = append(all, obs...); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteObservations(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := r.Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	// The spot history's series turns marketplace (and dearer) from T0+26h on,
	// 01:00 UTC: its day then has bars of two tiers. Rolled up twice more.
	var moved []schemas.Observation
	key := storetest.RollupData()[len(storetest.RollupData())-1].SeriesKey()
	cut := storetest.T0.Add(26 * time.Hour)
	for _, o := range all {
		if o.SeriesKey() == key && !o.EffectiveAt.Before(cut) {
			o.Tier = schemas.TierMarketplace
			o.PriceUSDGPUHour += 0.25
			moved = append(moved, o)
		}
	}
	if len(moved) == 0 {
		t.Fatal("no observations after the cut: the test proves nothing")
	}
	if err := st.WriteObservations(ctx, moved); err != nil {
		t.Fatal(err)
	}
	if err := r.Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Rollup(ctx, cut, cut.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var raw, distinct uint64
	if err := admin.QueryRow(ctx, "SELECT count(), uniqExact(provider, sku, region, zone, pricing, day) FROM `"+db+"`.volatility_days").Scan(&raw, &distinct); err != nil {
		t.Fatal(err)
	}
	if raw < 2*distinct {
		t.Fatalf("volatility_days: %d rows for %d days; want every day in at least two versions", raw, distinct)
	}

	check := func(when string) {
		t.Helper()
		t0 := storetest.T0
		mid := t0.Add(26*time.Hour + 30*time.Minute)
		for _, c := range []struct {
			f   store.Filter
			end time.Time
		}{
			{store.Filter{}, t0.Add(60 * time.Hour)},
			{store.Filter{Since: t0.Add(3 * time.Hour), Until: t0.Add(75 * time.Hour)}, t0.Add(75 * time.Hour)},
			{store.Filter{Since: t0.Add(7*time.Hour + 20*time.Minute), Until: mid}, mid},
			{store.Filter{Since: t0.Add(25 * time.Hour), Until: t0.Add(49 * time.Hour)}, t0.Add(49 * time.Hour)},
			{store.Filter{Since: t0.Add(26 * time.Hour), Until: t0.Add(30 * time.Hour)}, t0.Add(40 * time.Hour)},
			{store.Filter{Since: t0.Add(time.Hour), Until: t0.Add(49 * time.Hour)}, t0.Add(49 * time.Hour)},
			{store.Filter{Until: t0.Add(49 * time.Hour)}, t0.Add(20 * time.Hour)},
			{store.Filter{Tier: schemas.TierMarketplace}, t0.Add(90 * time.Hour)},
			{store.Filter{Tier: schemas.TierHyperscaler, Since: t0.Add(5 * time.Hour)}, t0.Add(60 * time.Hour)},
			{store.Filter{GPU: "H100-SXM-80GB", Pricing: schemas.Spot, Since: t0.Add(2 * time.Hour), Until: t0.Add(70 * time.Hour)}, t0.Add(70 * time.Hour)},
			{store.Filter{Provider: "aws", Region: "us-east-1", Since: t0.Add(30 * time.Hour)}, t0.Add(100 * time.Hour)},
		} {
			q := store.BarQuery{Width: store.Hourly, Filter: c.f}
			bars, err := r.Bars(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(bars) == 0 {
				t.Fatalf("%s: %+v selects no bars: the case proves nothing", when, c.f)
			}
			for _, below := range []float64{0, 2.6} {
				want := analytics.Volatilities(bars, store.Hourly, c.end, below)
				got, err := st.(store.VolatilityStats).Volatilities(ctx, q, c.end, below)
				if err != nil {
					t.Fatalf("%s: Volatilities %+v: %v", when, c.f, err)
				}
				if d := figurestest.VolatilityDiff(got, want); d != "" {
					t.Fatalf("%s: Volatilities %+v end %s below %v: %s", when, c.f, c.end.Format(time.RFC3339), below, d)
				}
			}
		}
	}
	check("rolled up")

	// Migration 15's backfill: volatility_days rebuilt from the (unmerged) bars.
	for _, stmt := range []string{"DROP TABLE `" + db + "`.volatility_days", "DROP TABLE `" + db + "`.schema_migrations"} {
		if err := admin.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	check("backfilled")
}

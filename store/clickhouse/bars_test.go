package clickhouse_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestIntegrationClickHouseBarsUnmerged checks the per-series read of Bars where
// its shortcuts could go wrong: every bar written in several versions that no merge
// has resolved, a series whose tier changes from one bar to the next (so its bars
// carry their own strings), and a tier filter with carry-in, which must carry the
// last bar whose latest version has the tier.
func TestIntegrationClickHouseBarsUnmerged(t *testing.T) {
	ctx := t.Context()
	st, db, admin := openUnmerged(t, "bars")
	r := st.(store.Rollups)
	all := storetest.RollupData()
	if err := st.WriteObservations(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := r.Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	// The spot history's series turns marketplace from T0+26h on, written after
	// the first rollup and rolled up twice more (the second time over one day).
	var moved []schemas.Observation
	key := all[len(all)-1].SeriesKey()
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
	all = append(all, moved...)
	if err := r.Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Rollup(ctx, cut, cut.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var raw, distinct uint64
	if err := admin.QueryRow(ctx, "SELECT count(), uniqExact(width, provider, sku, region, zone, pricing, bar_start) FROM `"+db+"`.bars").Scan(&raw, &distinct); err != nil {
		t.Fatal(err)
	}
	if raw < 2*distinct {
		t.Fatalf("bars table: %d rows for %d bars; want every bar in at least two versions", raw, distinct)
	}

	since := storetest.T0.Add(30 * time.Hour)
	for _, q := range []store.BarQuery{
		{Width: store.Hourly},
		{Width: store.Daily},
		{Width: store.Hourly, Filter: store.Filter{Tier: schemas.TierMarketplace}},
		{Width: store.Hourly, Filter: store.Filter{Tier: schemas.TierHyperscaler, Since: since}, CarryIn: true},
		{Width: store.Hourly, Filter: store.Filter{Since: since}, CarryIn: true},
		{Width: store.Daily, Filter: store.Filter{Since: since, Pricing: schemas.Spot}, CarryIn: true},
	} {
		var sel []store.Bar
		for _, b := range storetest.WantBars(all, q.Width) {
			o := schemas.Observation{GPU: b.GPU, Provider: b.Provider, Pricing: b.Pricing, Region: b.Region, Tier: b.Tier}
			f := q.Filter
			f.Since, f.Until = time.Time{}, time.Time{}
			if storetest.Matches(f, o) {
				sel = append(sel, b)
			}
		}
		var want []store.Bar
		for i, b := range sel {
			in := q.Since.IsZero() || !b.Start.Before(q.Since)
			lastBefore := q.CarryIn && !in &&
				(i+1 == len(sel) || sel[i+1].SeriesKey() != b.SeriesKey() || !sel[i+1].Start.Before(q.Since))
			if in || lastBefore {
				want = append(want, b)
			}
		}
		got, err := r.Bars(ctx, q)
		if err != nil {
			t.Fatalf("Bars(%+v): %v", q, err)
		}
		if d := storetest.BarsDiff(got, want); d != "" {
			t.Errorf("Bars(%+v): %s", q, d)
		}
	}
}

// TestIntegrationClickHouseMigrationReruns checks that a migration stopped after its
// statements but before its record runs again: with schema_migrations lost, every
// migration re-runs, and 0004's ALTER TABLE … ADD COLUMN (ClickHouse 18.16 has no IF
// NOT EXISTS) is skipped because bars has the column. A bar written before 0004
// (last_observed_at left at its default) reads as unknown, the zero time.
func TestIntegrationClickHouseMigrationReruns(t *testing.T) {
	dsn := freshDSN(t)
	ctx := t.Context()
	st, err := clickhouse.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first, err := st.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	db := chtest.Database(u)
	admin := adminConn(t, u)
	defer admin.Close()
	if err := admin.Exec(ctx, "DROP TABLE `"+db+"`.schema_migrations"); err != nil {
		t.Fatal(err)
	}
	again, err := st.Migrate(ctx)
	if err != nil {
		t.Fatalf("Migrate after the record was lost: %v", err)
	}
	if len(again) != len(first) || len(first) < 4 {
		t.Fatalf("re-run applied %v, first run %v", again, first)
	}
	var cols uint64
	if err := admin.QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = ? AND table = 'bars' AND name = 'last_observed_at'", db).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	if cols != 1 {
		t.Fatalf("bars has %d last_observed_at columns", cols)
	}

	// A bar as migration 0003 wrote it: no last_observed_at.
	batch, err := admin.PrepareBatch(ctx, "INSERT INTO `"+db+"`.bars (width, bar_start, provider, sku, region, zone, pricing, gpu, tier, interconnect, open, high, low, close, mean, count, version)")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 10, 1, 0, 0, 0, 0, time.UTC)
	if err := batch.Append(uint32(86400), day, "azure", "nd", "eastus", "", schemas.OnDemand, "H100-SXM-80GB",
		schemas.TierHyperscaler, schemas.InterconnectInfiniband, 6.98, 6.98, 6.98, 6.98, 6.98, uint64(1), uint64(1)); err != nil {
		t.Fatal(err)
	}
	if err := batch.Send(); err != nil {
		t.Fatal(err)
	}
	// Such a bar predates every later migration too: migration 0013 found it in bars
	// and recorded its series in day_series (where a carried-in daily bar is looked
	// up). Run the migrations again, their record lost once more, as an upgrade from
	// a store of that age does.
	if err := admin.Exec(ctx, "DROP TABLE `"+db+"`.schema_migrations"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatalf("Migrate over a pre-0004 bar: %v", err)
	}
	for _, q := range []store.BarQuery{
		{Width: store.Daily},
		{Width: store.Daily, Filter: store.Filter{Since: day.AddDate(0, 1, 0)}, CarryIn: true},
	} {
		got, err := st.(store.Rollups).Bars(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !got[0].Start.Equal(day) || !got[0].LastObservedAt.IsZero() || got[0].Close != 6.98 {
			t.Fatalf("Bars(%+v) of a pre-0004 bar: %+v", q, got)
		}
	}
}

package clickhouse_test

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestIntegrationClickHouseHourlyCarry checks that hourly bars with the bar carried
// in found without reading all history (Bars, hourlyCarry) are those the bars
// table alone gives (TableBars, which reads all history before the window), bar
// for bar, on the day-price data (withdrawn and stopped series, tier changes)
// plus a series with bars on both sides of a long gap and one whose last day is
// of another tier, for windows and filters that take every way: the days before
// the window, the days of a stopped series' last daily bar, its whole history,
// and all history when day_series does not know a window's series.
func TestIntegrationClickHouseHourlyCarry(t *testing.T) {
	ctx := t.Context()
	// Specialist until day 2, marketplace on its last day (3): with a specialist
	// filter its last daily bar's day holds no matching bar.
	cs, dsn, day := gapData(t, func(base schemas.Observation, day func(int) time.Time) []schemas.Observation {
		flip := base
		flip.SKU = "flip-1"
		obs := []schemas.Observation{priced(flip, day(1).Add(5*time.Hour), 2.1), priced(flip, day(2).Add(7*time.Hour), 2.2)}
		flip.Tier = schemas.TierMarketplace
		return append(obs, priced(flip, day(3).Add(9*time.Hour), 1.9), priced(flip, day(3).Add(15*time.Hour), 1.8))
	})
	r := store.Rollups(cs)
	windows := gapWindows(day)
	filters := append(gapFilters(), store.Filter{Provider: "lambda", Tier: schemas.TierSpecialist})
	var recent, stopped, deep int
	for _, w := range windows {
		for _, f := range filters {
			f.Since, f.Until = w[0], w[1]
			q := store.BarQuery{Filter: f, Width: store.Hourly, CarryIn: true}
			want, err := cs.TableBars(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, rc, sc, dc, whole, err := cs.HourlyCarry(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if whole {
				t.Fatalf("%+v: all history read, though day_series knows every series", q)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("hourly carry %+v: %s", q, storetest.BarsDiff(got, want))
			}
			viaBars, err := r.Bars(ctx, q)
			if err != nil || !reflect.DeepEqual(viaBars, want) {
				t.Fatalf("Bars %+v (%v): %s", q, err, storetest.BarsDiff(viaBars, want))
			}
			recent, stopped, deep = recent+rc, stopped+sc, deep+dc
			if f.Provider == "lambda" && f.Tier == schemas.TierSpecialist && w[0].Equal(day(20)) {
				var skus []string
				for _, b := range got {
					if b.Start.Before(w[0]) {
						skus = append(skus, b.SKU)
					}
				}
				if !strings.Contains(strings.Join(skus, ","), "flip-1") || !strings.Contains(strings.Join(skus, ","), "gap-1") {
					t.Fatalf("carried in %v: want flip-1 (from its specialist day) and gap-1 (from day 1)", skus)
				}
			}
		}
	}
	if recent == 0 || stopped == 0 || deep == 0 {
		t.Fatalf("ways taken: recent %d, stopped %d, whole history %d: the test misses one", recent, stopped, deep)
	}

	// A window series day_series does not know (its bars written as a rollup
	// writes them, its day_series state not yet): all history is read.
	u, _ := url.Parse(dsn)
	db := chtest.Database(u)
	admin := adminConn(t, u)
	defer admin.Close()
	var cols []string
	rows, err := admin.Query(ctx, "SELECT name FROM system.columns WHERE database = ? AND table = 'bars' AND default_kind = ''", db)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	sel := strings.ReplaceAll(","+strings.Join(cols, ",")+",", ",sku,", ",'unknown-to-day-series' AS sku,")
	if err := admin.Exec(ctx, "INSERT INTO `"+db+"`.bars ("+strings.Join(cols, ", ")+") SELECT "+strings.Trim(sel, ",")+
		" FROM (SELECT * FROM `"+db+"`.bars WHERE width = 3600 AND sku = 'gap-1')"); err != nil {
		t.Fatal(err)
	}
	q := store.BarQuery{Filter: store.Filter{Provider: "lambda", Since: day(20), Until: day(50)}, Width: store.Hourly, CarryIn: true}
	want, err := cs.TableBars(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, _, whole, err := cs.HourlyCarry(ctx, q)
	if err != nil || !whole || !reflect.DeepEqual(got, want) {
		t.Fatalf("unknown series: whole %v, %v: %s", whole, err, storetest.BarsDiff(got, want))
	}
	n := 0
	for _, b := range got {
		if b.SKU == "unknown-to-day-series" && b.Start.Equal(day(1).Add(3*time.Hour)) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the unknown series' day-1 bar carried in %d times", n)
	}
}

// gapData opens a fresh migrated store with the day-price data
// (storetest.DayPriceData, from 2025-02-01 on), a lambda series priced on days 1,
// 32, 33 and 40 only (gap-1: a window opening between carries its first bar in
// from beyond the days read before it) and the observations extra gives (from
// the gap series' observation as a base), rolled up over days 1 to 41. day gives
// the data's days.
func gapData(t *testing.T, extra func(base schemas.Observation, day func(int) time.Time) []schemas.Observation) (*clickhouse.Store, string, func(int) time.Time) {
	t.Helper()
	ctx := t.Context()
	st, dsn := openMigrated(t)
	storetest.DayPriceData(t, st)
	start := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	day := func(d int) time.Time { return start.AddDate(0, 0, d) }
	gap := storetest.Observations()[0]
	gap.Provider, gap.SKU, gap.Region, gap.Zone, gap.GPU = "lambda", "gap-1", "region-1", "", "H100-SXM-80GB"
	gap.Tier, gap.Pricing, gap.PriceScope, gap.PriceBasis = schemas.TierSpecialist, schemas.OnDemand, "", ""
	var obs []schemas.Observation
	for _, d := range []int{1, 32, 33, 40} {
		obs = append(obs, priced(gap, day(d).Add(3*time.Hour), 2+float64(d)/100))
	}
	if extra != nil {
		obs = append(obs, extra(gap, day)...)
	}
	if err := st.WriteObservations(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if err := st.Rollup(ctx, day(1), day(41)); err != nil {
		t.Fatal(err)
	}
	return st, dsn, day
}

// priced is o effective and observed at t at price per GPU-hour.
func priced(o schemas.Observation, t time.Time, price float64) schemas.Observation {
	o.EffectiveAt, o.ObservedAt = t, t
	o.PriceUSDGPUHour, o.PriceUSDHour = price, price*float64(o.GPUCount)
	return o
}

// gapWindows are the windows the bar-reading tests try on gapData.
func gapWindows(day func(int) time.Time) [][2]time.Time {
	return [][2]time.Time{
		{day(20), day(50)},                    // carried in from the days before; stopped series (day 4) and the gap
		{day(30).Add(7 * time.Hour), day(33)}, // mid-day; the rewritten day
		{day(45), day(50)},                    // withdrawn series (day 37): their last bar
		{day(60), day(90)},                    // after every bar
		{day(2).Add(5 * time.Hour), day(9)},   // before the days read begin
		{day(-200), day(-190)},                // nothing
		{day(20), time.Time{}},                // open end
	}
}

// gapFilters are the filters the bar-reading tests try on gapData.
func gapFilters() []store.Filter {
	return []store.Filter{{}, {GPU: "H100-SXM-80GB"}, {Pricing: schemas.OnDemand}, {Tier: schemas.TierSpecialist},
		{Tier: schemas.TierHyperscaler}, {Tier: schemas.TierMarketplace}, {GPU: "A100-SXM-80GB", Region: "region-1"},
		{Provider: "lambda"}, {GPU: "H100-SXM-80GB", Tier: schemas.TierSpecialist}, {Provider: "azure", Pricing: schemas.OnDemand}}
}

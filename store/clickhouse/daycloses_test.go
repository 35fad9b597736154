package clickhouse_test

import (
	"net/url"
	"reflect"
	"testing"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// TestIntegrationClickHouseDayClosesFallback checks that DayCloses answers from
// the bars table alone (TableBars) when day_series cannot name the bars it read:
// with day_series emptied, the compact bars are TableBars' in compact form and
// the spreads are those of their day prices. (The conformance suite checks
// DayCloses through day_series.)
func TestIntegrationClickHouseDayClosesFallback(t *testing.T) {
	ctx := t.Context()
	cs, dsn, day := gapData(t, nil)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	admin := adminConn(t, u)
	defer admin.Close()
	if err := admin.Exec(ctx, "TRUNCATE TABLE "+chtest.Database(u)+".day_series"); err != nil {
		t.Fatal(err)
	}
	f := store.Filter{Since: day(20), Until: day(50)}
	q := store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true}
	if _, ok, err := cs.DailyBars(ctx, q); err != nil || ok {
		t.Fatalf("day_series still names the bars (ok %v, %v): the test misses the fallback", ok, err)
	}
	bars, err := cs.TableBars(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cs.DayCloses(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := store.ClosesOfBars(bars); len(want) < 100 || !reflect.DeepEqual(got, want) {
		t.Fatalf("DayCloses: %d series, TableBars %d", len(got), len(want))
	}
	days, err := analytics.SpreadsOf(ctx, cs, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := analytics.Spreads(analytics.DailyPrices(bars, f.Since, f.Until)); !reflect.DeepEqual(days, want) {
		t.Fatalf("SpreadsOf: %d days, want %d", len(days), len(want))
	}
}

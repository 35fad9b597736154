package duckdb_test

import (
	"database/sql"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/duckdb"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestViews checks the dashboard views the embedded store has (migration 5): the
// names and columns of ClickHouse's (docs/views.md), one row per key after the
// same rows were written twice.
func TestViews(t *testing.T) {
	path := filepath.Join(t.TempDir(), "views.duckdb")
	ctx := t.Context()
	st := openMigrated(t, path)
	all := storetest.RollupData()
	for range 2 {
		if err := st.WriteObservations(ctx, all); err != nil {
			t.Fatal(err)
		}
		if err := st.WriteQuarantine(ctx, storetest.Quarantined()); err != nil {
			t.Fatal(err)
		}
		for _, r := range storetest.Runs() {
			if err := st.WriteRun(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.(store.Rollups).Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	have := map[string]bool{schemas.ViewObservations: true, schemas.ViewLatest: true, schemas.ViewBars: true,
		schemas.ViewRuns: true, schemas.ViewQuarantine: true, schemas.ViewDayPrices: true}
	for _, v := range schemas.Views() {
		if !have[v.Name] {
			continue
		}
		rows, err := db.QueryContext(ctx, "SELECT * FROM "+v.Name+" LIMIT 0")
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		got, _ := rows.Columns()
		rows.Close()
		var want []string
		for _, c := range v.Columns {
			want = append(want, c.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s columns:\n got  %v\n want %v", v.Name, got, want)
		}
		var n, distinct int
		q := "SELECT count(*), count(DISTINCT (" + strings.Join(v.Key, ", ") + ")) FROM " + v.Name
		if err := db.QueryRowContext(ctx, q).Scan(&n, &distinct); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if n == 0 || n != distinct {
			t.Errorf("%s: %d rows for %d keys", v.Name, n, distinct)
		}
	}
	// v_day_prices: the day prices of analytics over the store's daily bars, through today.
	st2, err := duckdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	bars, err := st2.(store.Rollups).Bars(ctx, store.BarQuery{Width: store.Daily})
	st2.Close()
	if err != nil {
		t.Fatal(err)
	}
	from := bars[0].Start
	for _, b := range bars {
		if b.Start.Before(from) {
			from = b.Start
		}
	}
	want := map[string]float64{}
	for _, p := range analytics.DailyPrices(bars, from, time.Now().UTC().Truncate(store.Daily).Add(store.Daily)) {
		want[p.Series+"|"+p.Day.Format(time.DateOnly)] = p.Price
	}
	rows, err := db.QueryContext(ctx, "SELECT provider, sku, region, zone, pricing, day, price FROM v_day_prices")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var (
			b     store.Bar
			day   time.Time
			price float64
		)
		if err := rows.Scan(&b.Provider, &b.SKU, &b.Region, &b.Zone, &b.Pricing, &day, &price); err != nil {
			t.Fatal(err)
		}
		n++
		k := b.SeriesKey() + "|" + day.UTC().Format(time.DateOnly)
		if w, ok := want[k]; !ok || math.Abs(w-price) > 1e-9*math.Max(1, w) {
			t.Fatalf("v_day_prices %s: %v, analytics %v (present %v)", k, price, w, ok)
		}
	}
	rows.Close()
	if n != len(want) || n == 0 {
		t.Fatalf("v_day_prices: %d rows, analytics %d", n, len(want))
	}

	var onOffer int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM v_latest WHERE on_offer = 1").Scan(&onOffer); err != nil {
		t.Fatal(err)
	}
	if onOffer == 0 {
		t.Fatal("no series on offer")
	}
}

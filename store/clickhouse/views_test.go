package clickhouse_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// viewData is a synthetic history (storetest.Generate: SYNTHETIC, test data only)
// of 56 series over the last 12 days, every 6 hours, with one Vast.ai series that
// stops being listed after 3 days (withdrawn), so that day prices, spreads and the
// index have something to carry, end and trim, one derived and one GPU-only series
// that they must leave out.
func viewData(t *testing.T) []schemas.Observation {
	t.Helper()
	start := time.Now().UTC().Truncate(store.Daily).Add(-12 * store.Daily)
	var all []schemas.Observation
	err := storetest.Generate(storetest.GenSpec{Series: 56, Steps: 48, Start: start, Step: 6 * time.Hour, Seed: 11},
		1000, func(b []schemas.Observation) error {
			all = append(all, b...)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var withdrawn string
	for _, o := range all {
		if o.Provider == "vast" {
			withdrawn = o.SeriesKey()
			break
		}
	}
	out := all[:0]
	derived, gpuOnly := "", ""
	for _, o := range all {
		if o.SeriesKey() == withdrawn && o.EffectiveAt.After(start.Add(3*store.Daily)) {
			continue
		}
		// One aws series is a derived price and one gcp series a GPU-only price: day
		// prices, spreads and the index leave both out (analytics.Comparable).
		if o.Provider == "aws" && (derived == "" || derived == o.SeriesKey()) {
			derived, o.PriceBasis = o.SeriesKey(), schemas.BasisDerived
		}
		if o.Provider == "gcp" && (gpuOnly == "" || gpuOnly == o.SeriesKey()) {
			gpuOnly, o.PriceScope = o.SeriesKey(), schemas.ScopeGPUOnly
		}
		out = append(out, o)
	}
	return out
}

// TestIntegrationClickHouseViews checks every dashboard view (schemas/views.go)
// on tables holding unmerged versions: the same observations, runs and quarantined
// rows written twice in separate inserts with merges stopped, a third write that
// corrects some of them, bars rolled up twice. Each view must return each key once,
// with the newest version, and the day prices, spreads and index must equal what
// the analytics package computes from the store's bars.
func TestIntegrationClickHouseViews(t *testing.T) {
	ctx := t.Context()
	st, db, admin := openUnmerged(t, "observations", "bars", "runs", "quarantine")

	all := viewData(t)
	if err := st.WriteObservations(ctx, all); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteObservations(ctx, all); err != nil {
		t.Fatal(err)
	}
	// Every 7th row corrected: the newest version must win everywhere.
	var fixed []schemas.Observation
	for i := 0; i < len(all); i += 7 {
		o := all[i]
		o.PriceUSDGPUHour += 0.5
		o.PriceUSDHour = o.PriceUSDGPUHour * 8
		o.RunID = "fix"
		fixed = append(fixed, o)
	}
	if err := st.WriteObservations(ctx, fixed); err != nil {
		t.Fatal(err)
	}
	all = append(all, fixed...)
	r := st.(store.Rollups)
	for range 2 {
		if err := r.Rollup(ctx, time.Time{}, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	runs := storetest.Runs()
	for _, run := range runs {
		if err := st.WriteRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	runs[0].Status, runs[0].RowsAccepted = "ok", 4242
	if err := st.WriteRun(ctx, runs[0]); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := st.WriteQuarantine(ctx, storetest.Quarantined()); err != nil {
			t.Fatal(err)
		}
	}

	// The tables really hold unmerged versions.
	for tbl, key := range map[string]string{
		"observations": "provider, sku, region, zone, pricing, effective_at",
		"bars":         "width, provider, sku, region, zone, pricing, bar_start",
		"runs":         "run_id, source",
		"quarantine":   "run_id, source, reason, raw",
	} {
		var n, distinct uint64
		if err := admin.QueryRow(ctx, "SELECT count(), uniqExact("+key+") FROM `"+db+"`."+tbl).Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		if n <= distinct {
			t.Fatalf("%s: %d rows for %d keys: no duplicate versions, the test proves nothing", tbl, n, distinct)
		}
	}

	// Each view: every key once, and the columns docs/views.md lists, in order.
	for _, v := range schemas.Views() {
		var n, distinct uint64
		q := "SELECT count(), uniqExact(" + strings.Join(quoteCols(v.Key), ", ") + ") FROM `" + db + "`." + v.Name
		if err := admin.QueryRow(ctx, q).Scan(&n, &distinct); err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if n == 0 || n != distinct {
			t.Errorf("%s: %d rows for %d keys", v.Name, n, distinct)
		}
		got := describe(t, admin, db, v.Name)
		if fmt.Sprint(got) != fmt.Sprint(v.Columns) {
			t.Errorf("%s columns:\n got  %v\n want %v", v.Name, got, v.Columns)
		}
	}

	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	t.Run("observations", func(t *testing.T) {
		want := storetest.WantObservations(lastWrites(all), store.Filter{})
		rows, err := admin.Query(ctx, "SELECT provider, sku, region, zone, pricing, effective_at, price_usd_gpu_hour, run_id FROM `"+db+"`.v_observations ORDER BY provider, sku, region, zone, pricing, effective_at")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		i := 0
		for ; rows.Next(); i++ {
			var o schemas.Observation
			if err := rows.Scan(&o.Provider, &o.SKU, &o.Region, &o.Zone, &o.Pricing, &o.EffectiveAt, &o.PriceUSDGPUHour, &o.RunID); err != nil {
				t.Fatal(err)
			}
			if i >= len(want) {
				t.Fatalf("extra row %+v", o)
			}
			w := want[i]
			if o.SeriesKey() != w.SeriesKey() || !o.EffectiveAt.Equal(w.EffectiveAt) || !near(o.PriceUSDGPUHour, w.PriceUSDGPUHour) || o.RunID != w.RunID {
				t.Fatalf("row %d: got %s %s %v %s, want %s %s %v %s", i, o.SeriesKey(), o.EffectiveAt, o.PriceUSDGPUHour, o.RunID,
					w.SeriesKey(), w.EffectiveAt, w.PriceUSDGPUHour, w.RunID)
			}
		}
		if i != len(want) {
			t.Fatalf("%d rows, want %d", i, len(want))
		}
	})

	t.Run("latest", func(t *testing.T) {
		want := map[string]schemas.Observation{}
		for _, o := range storetest.WantLatest(lastWrites(all), store.Filter{}) {
			want[o.SeriesKey()] = o
		}
		rows, err := admin.Query(ctx, "SELECT provider, sku, region, zone, pricing, effective_at, price_usd_gpu_hour, on_offer FROM `"+db+"`.v_latest")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n, off := 0, 0
		for rows.Next() {
			var (
				o       schemas.Observation
				onOffer uint8
			)
			if err := rows.Scan(&o.Provider, &o.SKU, &o.Region, &o.Zone, &o.Pricing, &o.EffectiveAt, &o.PriceUSDGPUHour, &onOffer); err != nil {
				t.Fatal(err)
			}
			n++
			w, ok := want[o.SeriesKey()]
			if !ok || !o.EffectiveAt.Equal(w.EffectiveAt) || !near(o.PriceUSDGPUHour, w.PriceUSDGPUHour) {
				t.Fatalf("%s: got %s %v, want %s %v", o.SeriesKey(), o.EffectiveAt, o.PriceUSDGPUHour, w.EffectiveAt, w.PriceUSDGPUHour)
			}
			if onOffer == 0 {
				off++
				if o.Provider != "vast" {
					t.Errorf("%s: not on offer", o.SeriesKey())
				}
			}
		}
		if n != len(want) || off != 1 {
			t.Fatalf("%d rows (want %d), %d off offer (want 1: the withdrawn series)", n, len(want), off)
		}
	})

	t.Run("bars", func(t *testing.T) {
		for _, w := range store.Widths {
			rows, err := admin.Query(ctx, "SELECT provider, sku, region, zone, pricing, bar_start, gpu, tier, interconnect, price_scope, price_basis, open, high, low, close, mean, count, last_observed_at FROM `"+db+"`.v_bars WHERE width = ? ORDER BY provider, sku, region, zone, pricing, bar_start", uint32(w/time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var got []store.Bar
			for rows.Next() {
				var (
					b store.Bar
					n uint64
				)
				if err := rows.Scan(&b.Provider, &b.SKU, &b.Region, &b.Zone, &b.Pricing, &b.Start, &b.GPU, &b.Tier, &b.Interconnect,
					&b.PriceScope, &b.PriceBasis, &b.Open, &b.High, &b.Low, &b.Close, &b.Mean, &n, &b.LastObservedAt); err != nil {
					t.Fatal(err)
				}
				b.Count, b.Start, b.LastObservedAt = int64(n), b.Start.UTC(), b.LastObservedAt.UTC()
				got = append(got, b)
			}
			rows.Close()
			if d := storetest.BarsDiff(got, storetest.WantBars(all, w)); d != "" {
				t.Fatalf("%v: %s", w, d)
			}
		}
	})

	// The reference: analytics over the store's own bars, today included.
	bars, err := r.Bars(ctx, store.BarQuery{Width: store.Daily})
	if err != nil {
		t.Fatal(err)
	}
	from := bars[0].Start
	for _, b := range bars {
		if b.Start.Before(from) {
			from = b.Start
		}
	}
	to := time.Now().UTC().Truncate(store.Daily).Add(store.Daily)
	dayPrices := analytics.DailyPrices(bars, from, to)

	t.Run("day_prices", func(t *testing.T) {
		want := map[string]float64{}
		for _, p := range dayPrices {
			want[p.Series+"|"+p.Day.Format(time.DateOnly)] = p.Price
		}
		rows, err := admin.Query(ctx, "SELECT provider, sku, region, zone, pricing, day, price, withdrawn FROM `"+db+"`.v_day_prices")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n, withdrawnDays := 0, 0
		for rows.Next() {
			var (
				b         store.Bar
				day       time.Time
				price     float64
				withdrawn uint8
			)
			if err := rows.Scan(&b.Provider, &b.SKU, &b.Region, &b.Zone, &b.Pricing, &day, &price, &withdrawn); err != nil {
				t.Fatal(err)
			}
			n++
			k := b.SeriesKey() + "|" + day.UTC().Format(time.DateOnly)
			w, ok := want[k]
			if !ok || !near(price, w) {
				t.Fatalf("%s: got %v, want %v (present %v)", k, price, w, ok)
			}
			withdrawnDays += int(withdrawn)
		}
		if n != len(want) {
			t.Fatalf("%d day prices, want %d", n, len(want))
		}
		var excluded uint64
		if err := admin.QueryRow(ctx, "SELECT count() FROM `"+db+"`.v_day_prices WHERE provider IN ('aws', 'gcp') AND sku IN (SELECT sku FROM `"+db+"`.v_latest WHERE price_basis = 'derived' OR price_scope = 'gpu_only')").Scan(&excluded); err != nil {
			t.Fatal(err)
		}
		if excluded != 0 {
			t.Fatalf("%d day prices of derived or GPU-only series", excluded)
		}
		if withdrawnDays != 5 { // days 0..3 seen, day 4 of grace
			t.Fatalf("%d day prices of the withdrawn series, want 5", withdrawnDays)
		}
	})

	t.Run("spreads", func(t *testing.T) {
		want := map[string]analytics.SpreadDay{}
		for _, s := range analytics.Spreads(dayPrices) {
			want[s.GPU+"|"+s.Pricing+"|"+s.Day.Format(time.DateOnly)] = s
		}
		rows, err := admin.Query(ctx, "SELECT gpu, pricing, day, hyperscaler, specialist, marketplace, n_hyperscaler, n_specialist, n_marketplace, ratio, premium_pct FROM `"+db+"`.v_spreads")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n, ratios := 0, 0
		for rows.Next() {
			var (
				s                      analytics.SpreadDay
				nh, ns, nm             uint64
				hy, sp, mk, ratio, pct float64 // the view writes 0 where analytics has none (nil)
			)
			if err := rows.Scan(&s.GPU, &s.Pricing, &s.Day, &hy, &sp, &mk, &nh, &ns, &nm, &ratio, &pct); err != nil {
				t.Fatal(err)
			}
			orZero := func(p *float64) float64 {
				if p == nil {
					return 0
				}
				return *p
			}
			n++
			k := s.GPU + "|" + s.Pricing + "|" + s.Day.UTC().Format(time.DateOnly)
			w, ok := want[k]
			if !ok || !near(hy, orZero(w.Hyperscaler)) || !near(sp, orZero(w.Specialist)) || !near(mk, orZero(w.Marketplace)) ||
				int(nh) != w.NHyperscaler || int(ns) != w.NSpecialist || int(nm) != w.NMarketplace ||
				!near(ratio, orZero(w.Ratio)) || !near(pct, orZero(w.PremiumPct)) {
				t.Fatalf("%s:\n got  %v %v %v %v %v (%d %d %d)\n want %+v", k, hy, sp, mk, ratio, pct, nh, ns, nm, w)
			}
			if ratio > 0 {
				ratios++
			}
		}
		if n != len(want) || ratios == 0 {
			t.Fatalf("%d spread days (want %d), %d with a ratio", n, len(want), ratios)
		}
	})

	t.Run("index", func(t *testing.T) {
		want := map[string]analytics.IndexPoint{}
		for _, p := range analytics.Index(dayPrices) {
			want[p.GPU+"|"+p.Pricing+"|"+p.Group+"|"+p.Day.Format(time.DateOnly)] = p
		}
		rows, err := admin.Query(ctx, "SELECT gpu, pricing, group_name, day, price, offers, dropped, method FROM `"+db+"`.v_index")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		var groups []string
		for rows.Next() {
			var (
				p               analytics.IndexPoint
				offers, dropped uint64
			)
			if err := rows.Scan(&p.GPU, &p.Pricing, &p.Group, &p.Day, &p.Price, &offers, &dropped, &p.Method); err != nil {
				t.Fatal(err)
			}
			n++
			k := p.GPU + "|" + p.Pricing + "|" + p.Group + "|" + p.Day.UTC().Format(time.DateOnly)
			w, ok := want[k]
			if !ok || !near(p.Price, w.Price) || int(offers) != w.Offers || int(dropped) != w.Dropped || p.Method != analytics.IndexVersion {
				t.Fatalf("%s:\n got  %+v (%d offers, %d dropped)\n want %+v", k, p, offers, dropped, w)
			}
			groups = append(groups, p.Group)
		}
		if n != len(want) {
			t.Fatalf("%d index points, want %d", n, len(want))
		}
		sort.Strings(groups)
		if groups[0] != analytics.GroupHyperscaler || groups[len(groups)-1] != analytics.GroupOthers {
			t.Fatalf("groups %v…%v", groups[0], groups[len(groups)-1])
		}
	})

	t.Run("runs_and_quarantine", func(t *testing.T) {
		var status string
		var accepted int64
		if err := admin.QueryRow(ctx, "SELECT status, rows_accepted FROM `"+db+"`.v_runs WHERE run_id = ? AND source = ?",
			runs[0].RunID, runs[0].Source).Scan(&status, &accepted); err != nil {
			t.Fatal(err)
		}
		if status != "ok" || accepted != 4242 {
			t.Fatalf("run %s/%s: %s %d, want the last write", runs[0].RunID, runs[0].Source, status, accepted)
		}
		var n uint64
		if err := admin.QueryRow(ctx, "SELECT count() FROM `"+db+"`.v_quarantine").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := distinctQuarantined(storetest.Quarantined()); int(n) != want {
			t.Fatalf("v_quarantine: %d rows, want %d", n, want)
		}
	})
}

// lastWrites keeps the last row of each identity, as a store does.
func lastWrites(obs []schemas.Observation) []schemas.Observation {
	pos := map[string]int{}
	var out []schemas.Observation
	for _, o := range obs {
		k := o.SeriesKey() + "|" + o.EffectiveAt.UTC().Truncate(time.Second).String()
		if i, ok := pos[k]; ok {
			out[i] = o
			continue
		}
		pos[k] = len(out)
		out = append(out, o)
	}
	return out
}

func distinctQuarantined(q []schemas.Quarantined) int {
	seen := map[string]bool{}
	for _, r := range q {
		seen[r.RunID+"\x00"+r.Source+"\x00"+r.Reason+"\x00"+r.Raw] = true
	}
	return len(seen)
}

// describe returns the columns of a table or view in order (DESCRIBE: 18.16's
// system.columns has no position).
func describe(t *testing.T, conn driver.Conn, db, table string) []schemas.ViewColumn {
	t.Helper()
	rows, err := conn.Query(t.Context(), "DESCRIBE TABLE `"+db+"`.`"+table+"`")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []schemas.ViewColumn
	for rows.Next() {
		vals := make([]any, len(rows.ColumnTypes()))
		strs := make([]string, len(vals))
		for i := range vals {
			vals[i] = &strs[i]
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		out = append(out, schemas.ViewColumn{Name: strs[0], Type: strs[1]})
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func quoteCols(cs []string) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = "`" + c + "`"
	}
	return out
}

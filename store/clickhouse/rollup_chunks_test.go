package clickhouse_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestDayChunks checks how a rollup's span is cut: a week at least (the chunk of
// old), grown a day at a time while the rows stay within the budget, a day over
// the budget alone once the week before it is full.
func TestDayChunks(t *testing.T) {
	day := func(n int) time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n) }
	counts := func(perDay map[int]uint64) map[int64]uint64 {
		out := map[int64]uint64{}
		for d, n := range perDay {
			out[day(d).Unix()] = n
		}
		return out
	}
	span := func(chunks [][2]time.Time) string {
		var parts []string
		for _, c := range chunks {
			parts = append(parts, fmt.Sprintf("%d-%d", int(c[0].Sub(day(0)).Hours()/24), int(c[1].Sub(day(0)).Hours()/24)))
		}
		return strings.Join(parts, " ")
	}
	clickhouse.SetRollupBudget(t, 100)
	for _, c := range []struct {
		name   string
		days   int
		perDay map[int]uint64
		want   string
	}{
		{"sparse years: one chunk", 730, map[int]uint64{0: 10, 300: 10, 729: 10}, "0-730"},
		{"empty", 20, nil, "0-20"},
		{"shorter than a week", 5, map[int]uint64{0: 1000}, "0-5"},
		{"dense: a week each", 21, map[int]uint64{0: 200, 7: 200, 14: 200}, "0-7 7-14 14-21"},
		{"grown until the budget", 30, map[int]uint64{0: 40, 8: 40, 9: 30, 20: 50}, "0-9 9-30"},
		{"a heavy day ends the growth", 40, map[int]uint64{2: 10, 12: 500, 13: 1}, "0-12 12-19 19-40"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := span(clickhouse.DayChunks(day(0), day(c.days), counts(c.perDay)))
			if got != c.want {
				t.Fatalf("chunks %s, want %s", got, c.want)
			}
		})
	}
}

// TestIntegrationClickHouseRollupChunks checks Rollup and RollupFolded over a span
// cut into chunks of several sizes (a budget of 100 rows: weeks of sparse days grown
// into one chunk, a dense day alone): every bar of every width is the reference's,
// and what the store reads from its bars and their summaries (day series,
// volatility days) is the same after the fold, after a Rollup and after a Rollup a
// week at a time (a budget of one row).
func TestIntegrationClickHouseRollupChunks(t *testing.T) {
	ctx := t.Context()
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	base := storetest.Observations()[2]
	var all []schemas.Observation
	// Four series priced twice a day for 60 days, and a day of 5-minute spot prices
	// for one of them.
	for s := range 4 {
		o := base
		o.SKU = fmt.Sprintf("chunk-%d", s)
		for i := range 120 {
			o.EffectiveAt = start.Add(time.Duration(i) * 12 * time.Hour).Add(time.Duration(s) * time.Minute)
			o.ObservedAt = o.EffectiveAt
			o.PriceUSDGPUHour = 2 + float64((i*7+s*3)%11)/10
			all = append(all, o)
		}
	}
	spot := base
	spot.SKU, spot.EffectiveAt = "chunk-dense", start.Add(30*24*time.Hour)
	all = append(all, storetest.SpotHistory(spot, 288*5)...)

	reads := func(st store.Store) string {
		t.Helper()
		var b strings.Builder
		for _, w := range store.Widths {
			for _, q := range []store.BarQuery{{Width: w}, {Width: w, CarryIn: true,
				Filter: store.Filter{Since: start.Add(20 * 24 * time.Hour), Until: start.Add(45 * 24 * time.Hour)}}} {
				bars := storetest.Bars(t, st, q)
				fmt.Fprintf(&b, "%+v\n", bars)
				v, err := st.(store.VolatilityStats).Volatilities(ctx, q, start.Add(59*24*time.Hour), 0)
				if err != nil {
					t.Fatalf("Volatilities: %v", err)
				}
				fmt.Fprintf(&b, "%+v\n", v)
			}
		}
		return storetest.RoundFigures(b.String())
	}
	check := func(what string, st store.Store, obs []schemas.Observation) {
		t.Helper()
		for _, w := range store.Widths {
			if d := storetest.BarsDiff(storetest.Bars(t, st, store.BarQuery{Width: w}), storetest.WantBars(obs, w)); d != "" {
				t.Fatalf("%v bars %s: %s", w, what, d)
			}
		}
	}

	clickhouse.SetRollupBudget(t, 100)
	folded, _ := openMigrated(t)
	fold := store.NewBarFold(0)
	storetest.Write(t, folded, all)
	fold.Add(all)
	if err := folded.RollupFolded(ctx, fold); err != nil {
		t.Fatal(err)
	}
	check("after RollupFolded", folded, all)
	// Corrections into days rolled up before (rebuilt from the observations, in
	// chunks of their own) and a new day.
	more := []schemas.Observation{all[3], all[200], spot}
	more[0].PriceUSDGPUHour, more[1].PriceUSDGPUHour = 9.5, 0.25
	more[2].EffectiveAt, more[2].PriceUSDGPUHour = start.Add(59*24*time.Hour+time.Hour), 1.5
	storetest.Write(t, folded, more)
	fold = store.NewBarFold(0)
	fold.Add(more)
	if err := folded.RollupFolded(ctx, fold); err != nil {
		t.Fatal(err)
	}
	all = append(all, more...)
	check("after a second RollupFolded", folded, all)
	afterFold := reads(folded)

	since, until := store.RollupSpan(start, start.Add(60*24*time.Hour))
	chunks, err := folded.Chunks(ctx, since, until)
	if err != nil {
		t.Fatal(err)
	}
	grown := false
	for _, c := range chunks {
		grown = grown || c[1].Sub(c[0]) > 7*store.Daily
	}
	if len(chunks) < 3 || !grown {
		t.Fatalf("chunks %v: the test should cut the span into several chunks, some longer than a week", chunks)
	}

	storetest.Rollup(t, folded, time.Time{}, time.Time{})
	check("after a Rollup", folded, all)
	if got := reads(folded); got != afterFold {
		t.Fatalf("reads after a Rollup differ from those after the fold:\n%s\nafter the fold:\n%s", got, afterFold)
	}

	clickhouse.SetRollupBudget(t, 1)
	weekly, _ := openMigrated(t)
	storetest.Write(t, weekly, all)
	storetest.Rollup(t, weekly, time.Time{}, time.Time{})
	check("after a weekly Rollup", weekly, all)
	if got := reads(weekly); got != afterFold {
		t.Fatalf("reads after a weekly Rollup differ from those after the fold:\n%s\nafter the fold:\n%s", got, afterFold)
	}
}

package figurestest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// dayCloses checks a store's compact daily bars (store.DayCloses) against the
// daily bars the same store returns (Bars with carry-in, in the compact form:
// store.ClosesOfBars), bar for bar, and the spreads analytics.SpreadsOf computes
// from them against analytics.Spreads(analytics.DailyPrices(bars)), to within
// Nearly, on the
// day-price data plus a series with bars on both sides of a long gap, for windows
// whose carried-in bar comes from the days just before, from long before (the
// gap), from a withdrawn series' last bar, or does not exist; and the history
// analytics.HistoryFor computes from them against analytics.HistoryOf of the
// bars' day prices (figures to within Nearly). Stores without
// DayCloses are skipped.
func (s *suite) dayCloses(t *testing.T) {
	st := s.fresh(t)
	dc, ok := st.(store.DayCloses)
	if !ok {
		t.Skipf("%T returns no compact daily bars", st)
	}
	storetest.DayPriceData(t, st)
	day := func(d int) time.Time { return time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	// A series priced on 2025-02-03 and again from 2025-03-04 on: a window opening
	// between carries the first bar in from long before it (neither from the days
	// read before the window nor from its last bar, which is later).
	var gap []schemas.Observation
	for _, d := range []int{2, 31, 34, 41} {
		at := day(d).Add(5 * time.Hour)
		gap = append(gap, storetest.H100("lambda", schemas.TierSpecialist, "gap-2", at, at, 2+float64(d)/100))
	}
	storetest.Write(t, st, gap)
	storetest.Rollup(t, st, day(2), day(42))
	windows := [][2]time.Time{
		{day(20), day(50)},                    // carried in from the days before; the gap
		{day(30).Add(7 * time.Hour), day(33)}, // mid-day; the rewritten day
		{day(45), day(50)},                    // withdrawn series: their last bar
		{day(60), day(90)},                    // after every bar
		{day(-200), day(-190)},                // nothing
	}
	filters := []store.Filter{{}, {GPU: "H100-SXM-80GB"}, {Pricing: schemas.OnDemand}, {Tier: schemas.TierSpecialist},
		{Tier: schemas.TierHyperscaler}, {GPU: "A100-SXM-80GB", Region: "region-1"}, {Provider: "lambda"},
		{GPU: "H100-SXM-80GB", Tier: schemas.TierSpecialist}}
	spreads, histories := 0, 0
	for _, w := range windows {
		for _, f := range filters {
			f.Since, f.Until = w[0], w[1]
			bars := storetest.Bars(t, st, store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
			got, err := dc.DayCloses(ctx(t), f)
			if err != nil {
				t.Fatalf("DayCloses %+v: %v", f, err)
			}
			if d := closesDiff(got, store.ClosesOfBars(bars)); d != "" {
				t.Fatalf("DayCloses %+v: %s", f, d)
			}
			days, err := analytics.SpreadsOf(ctx(t), st.(store.Rollups), f)
			if err != nil {
				t.Fatal(err)
			}
			// To within Nearly: a store that computes the spreads itself (store.DayPriceStats)
			// takes its medians in another order.
			if d := spreadsDiff(days, analytics.Spreads(analytics.DailyPrices(bars, f.Since, f.Until))); d != "" {
				t.Fatalf("SpreadsOf %+v: %s", f, d)
			}
			spreads += len(days)
			// History reads the compact bars too (analytics.HistoryFor).
			h, err := analytics.HistoryFor(ctx(t), st.(store.Rollups), f, "H100-SXM-80GB", schemas.OnDemand, 3)
			if err != nil {
				t.Fatal(err)
			}
			wh := analytics.HistoryOf("H100-SXM-80GB", schemas.OnDemand, analytics.DailyPrices(bars, f.Since, f.Until),
				f.Since, f.Until, 3)
			if d := nearDiff(h, wh); d != "" {
				t.Fatalf("HistoryFor %+v: %s", f, d)
			}
			if wh.Overall.Samples > 0 {
				histories++
			}
		}
	}
	if spreads < 100 || histories < 5 {
		t.Fatalf("%d spread days, %d histories with samples: the data reaches too little", spreads, histories)
	}
}

// closesDiff describes the first difference between two compact bar lists ("" when
// equal: the same series, bars and attributes, times in UTC).
func closesDiff(got, want []store.SeriesCloses) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d series, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		gk := [5]string{g.Provider, g.SKU, g.Region, g.Zone, g.Pricing}
		if wk := [5]string{w.Provider, w.SKU, w.Region, w.Zone, w.Pricing}; gk != wk || len(g.Bars) != len(w.Bars) {
			return fmt.Sprintf("series %d: %v with %d bars, want %v with %d", i, gk, len(g.Bars), wk, len(w.Bars))
		}
		for j := range g.Bars {
			gb, wb := g.Bars[j], w.Bars[j]
			if !gb.Start.Equal(wb.Start) || gb.Start.Location() != time.UTC || gb.Close != wb.Close ||
				!gb.LastObservedAt.Equal(wb.LastObservedAt) || gb.LastObservedAt.Location() != time.UTC ||
				*gb.Attrs != *wb.Attrs {
				return fmt.Sprintf("%v bar %d:\n got  %+v %+v\n want %+v %+v", gk, j, gb, *gb.Attrs, wb, *wb.Attrs)
			}
		}
	}
	return ""
}

// nearDiff describes the first difference between two values as JSON gives them
// ("" when equal, numbers to within Nearly).
func nearDiff(got, want any) string {
	var g, w any
	for _, x := range []struct {
		v   any
		out *any
	}{{got, &g}, {want, &w}} {
		b, err := json.Marshal(x.v)
		if err != nil {
			return err.Error()
		}
		if err := json.Unmarshal(b, x.out); err != nil {
			return err.Error()
		}
	}
	return JSONDiff("", g, w)
}

// JSONDiff describes the first difference between two decoded JSON values (as
// encoding/json gives them into an any), at names where it is: "" when they are
// equal, numbers to within Nearly. It is the one comparison of answers whose
// figures may differ in their last bits (a sum's order: shards, parts, engines).
func JSONDiff(at string, g, w any) string {
	switch wv := w.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok || len(gv) != len(wv) {
			return fmt.Sprintf("%s: got %v, want %v", at, g, w)
		}
		for k := range wv {
			if d := JSONDiff(at+"."+k, gv[k], wv[k]); d != "" {
				return d
			}
		}
	case []any:
		gv, ok := g.([]any)
		if !ok || len(gv) != len(wv) {
			return fmt.Sprintf("%s: got %v, want %v", at, g, w)
		}
		for i := range wv {
			if d := JSONDiff(fmt.Sprintf("%s[%d]", at, i), gv[i], wv[i]); d != "" {
				return d
			}
		}
	case float64:
		if gv, ok := g.(float64); !ok || !Nearly(gv, wv) {
			return fmt.Sprintf("%s: got %v, want %v", at, g, w)
		}
	default:
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("%s: got %v, want %v", at, g, w)
		}
	}
	return ""
}

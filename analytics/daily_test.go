package analytics

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// seenBar is a daily bar of one of provider's series, closing at price, whose
// observations were last seen at seen.
func seenBar(provider, sku string, start time.Time, price float64, seen time.Time) store.Bar {
	b := bar(sku, start, price, price, price, price)
	b.Provider, b.Zone, b.LastObservedAt = provider, "", seen
	return b
}

// TestDailyPricesWithdrawn lays out, over the days 0…9 of a window:
//
//   - azure "nd": one bar from 2024-10-01, seen at day 9 13:00 (a list price
//     re-collected every hour): in force every day, 10 prices;
//   - vast "a": bars on days 0…3, last seen day 3 17:00, while vast's newest
//     sighting is day 9 12:00 (more than 24h later): withdrawn, in force through
//     day 3 and one day of grace, days 0…4, 5 prices;
//   - vast "b": bars on days 0…9, seen day 9 12:00 (the newest): 10 prices;
//   - vast "c": one bar on day 0, seen day 8 12:00, exactly 24h before vast's
//     newest: still on offer (as in `gpuprice prices`), 10 prices;
//   - vast "f": one bar starting on day 6, seen on day 2 (an announced price,
//     withdrawn since): only its own day, 1 price;
//   - lambda "l": one bar on day 0, seen day 2 01:00, and lambda not collected
//     since: its last known price stays, 10 prices;
//   - aws "u": one bar on day 1 with no sighting (rolled up before the stores kept
//     it): carried forward as before, days 1…9, 9 prices.
func TestDailyPricesWithdrawn(t *testing.T) {
	old := time.Date(2024, 10, 1, 0, 0, 0, 0, time.UTC)
	at := func(d, h int) time.Time { return day(d).Add(time.Duration(h) * time.Hour) }
	var bars []store.Bar
	for d := 0; d <= 3; d++ {
		bars = append(bars, seenBar("vast", "a", day(d), 2.0, at(d, 17)))
	}
	for d := 0; d <= 9; d++ {
		bars = append(bars, seenBar("vast", "b", day(d), 2.4, at(d, 12)))
	}
	bars = append(bars,
		seenBar("vast", "c", day(0), 2.3, at(8, 12)),
		seenBar("vast", "f", day(6), 1.9, at(2, 0)),
		seenBar("azure", "nd", old, 6.98, at(9, 13)),
		seenBar("lambda", "l", day(0), 2.49, at(2, 1)),
		seenBar("aws", "u", day(1), 4.0, time.Time{}),
	)
	// Bars come sorted by series then start, as stores return them.
	sortBars(bars)
	got := DailyPrices(bars, day(0), day(10))
	days := map[string][]int{}
	for _, p := range got {
		d := int(p.Day.Sub(t0) / store.Daily)
		days[p.Bar.SKU] = append(days[p.Bar.SKU], d)
		if p.Bar.SKU == "a" && !p.LastSeen.Equal(at(3, 17)) {
			t.Errorf("a on day %d: LastSeen %v", d, p.LastSeen)
		}
	}
	span := func(lo, hi int) string {
		var s []int
		for d := lo; d <= hi; d++ {
			s = append(s, d)
		}
		return fmt.Sprint(s)
	}
	for sku, want := range map[string]string{
		"nd": span(0, 9), "a": span(0, 4), "b": span(0, 9), "c": span(0, 9), "f": "[6]", "l": span(0, 9), "u": span(1, 9),
	} {
		if g := fmt.Sprint(days[sku]); g != want {
			t.Errorf("series %s priced on days %s, want %s", sku, g, want)
		}
	}
	// On day 4 six offers are in force, a (2.0, in its grace day) the cheapest; on
	// day 5 a is gone.
	h := HistoryOf("H100-SXM-80GB", "spot", got, day(0), day(5), 10)
	if len(h.Cheapest) != 6 || h.Cheapest[0].SKU != "a" || !h.Cheapest[0].LastSeen.Equal(at(3, 17)) {
		t.Errorf("cheapest offers on day 4: %+v", h.Cheapest)
	}
	h = HistoryOf("H100-SXM-80GB", "spot", got, day(0), day(6), 10)
	for _, o := range h.Cheapest {
		if o.SKU == "a" {
			t.Errorf("withdrawn offer a among the cheapest on day 5: %+v", h.Cheapest)
		}
	}
}

func sortBars(bars []store.Bar) {
	for i := 1; i < len(bars); i++ {
		for j := i; j > 0 && less(bars[j], bars[j-1]); j-- {
			bars[j], bars[j-1] = bars[j-1], bars[j]
		}
	}
}

func less(a, b store.Bar) bool {
	if a.SeriesKey() != b.SeriesKey() {
		return a.SeriesKey() < b.SeriesKey()
	}
	return a.Start.Before(b.Start)
}

// TestPriceEnd checks the boundaries: 24h behind the provider's newest sighting is
// still on offer, one second more is withdrawn; a sighting late in a day keeps the
// price through the next day.
func TestPriceEnd(t *testing.T) {
	newest := day(5).Add(12 * time.Hour)
	last := bar("x", day(1), 1, 1, 1, 1)
	for _, c := range []struct {
		seen time.Time
		want time.Time
	}{
		{time.Time{}, time.Time{}},
		{newest, time.Time{}},
		{newest.Add(-StaleAfter), time.Time{}},
		{newest.Add(-StaleAfter - time.Second), day(6)},     // seen day 4 11:59:59: through day 5
		{day(2).Add(23*time.Hour + 59*time.Minute), day(4)}, // through day 3
		{day(0), day(2)},                                    // seen before its last bar's day: the bar's own day still counts
	} {
		if got := PriceEnd(last, c.seen, newest); !got.Equal(c.want) {
			t.Errorf("PriceEnd(seen %v) = %v, want %v", c.seen, got, c.want)
		}
	}
}

// Spreads, history, the index and alerts compare like with like: a derived price,
// a "from" floor and a GPU-only price never become day prices; old bars ("")
// count as listed instance prices.
func TestDailyPricesComparableOnly(t *testing.T) {
	mk := func(sku, scope, basis string) store.Bar {
		b := bar(sku, day(0), 1, 1, 1, 1)
		b.PriceScope, b.PriceBasis = scope, basis
		return b
	}
	bars := []store.Bar{
		mk("a-old", "", ""),
		mk("b-listed", "instance", "listed"),
		mk("c-derived", "instance", "derived"),
		mk("d-floor", "instance", "floor"),
		mk("e-gpu-only", "gpu_only", "listed"),
	}
	got := map[string]bool{}
	for _, p := range DailyPrices(bars, day(0), day(1)) {
		got[p.Bar.SKU] = true
	}
	if len(got) != 2 || !got["a-old"] || !got["b-listed"] {
		t.Errorf("day prices from %v, want a-old and b-listed only", got)
	}
}

// mixedDayBars are daily bars of twelve series (by series then start): tiers,
// GPUs and pricing kinds mixed, a withdrawn series, one priced every third day,
// derived and GPU-only bars among them, from two days before day(0) to day(7).
func mixedDayBars() []store.Bar {
	tiers := []string{schemas.TierHyperscaler, schemas.TierSpecialist, schemas.TierMarketplace}
	var bars []store.Bar
	for i := range 12 {
		for d := -2; d < 8; d++ {
			if i == 4 && d > 3 { // withdrawn: no longer seen after day 3
				continue
			}
			if i == 7 && d%3 != 0 { // priced every third day: carried between
				continue
			}
			b := seenBar([]string{"aws", "lambda", "vast"}[i%3], fmt.Sprintf("s%d", i), day(d), 2+float64(i)/10+float64(d)/100, day(d).Add(12*time.Hour))
			b.Tier, b.GPU = tiers[i%3], []string{"H100-SXM-80GB", "A100-SXM-80GB"}[i%2]
			if i == 9 {
				b.Pricing = schemas.OnDemand
			}
			if i == 5 && d == 2 {
				b.PriceBasis = schemas.BasisDerived
			}
			if i == 10 {
				b.PriceScope = schemas.ScopeGPUOnly
			}
			bars = append(bars, b)
		}
	}
	sortBars(bars)
	return bars
}

// TestDailyPricesOfCloses checks that the day prices laid from the compact daily
// bars (eachCloseDayPrice, what HistoryFor reads) are those DailyPrices lays from
// the same bars as bars, day, series, bar and sighting, for a window opening mid-day
// (a price carried in) and one holding every bar.
func TestDailyPricesOfCloses(t *testing.T) {
	closes := store.ClosesOfBars(mixedDayBars())
	for _, w := range [][2]time.Time{{day(0).Add(5 * time.Hour), day(7)}, {day(-3), day(9)}, {day(20), day(22)}} {
		want := DailyPrices(store.BarsOfCloses(closes), w[0], w[1])
		var got []DayPrice
		eachCloseDayPrice(closes, w[0], w[1], func(int) {}, func(p *DayPrice) { got = append(got, *p) })
		if len(want) == 0 && w[0].Before(day(8)) {
			t.Fatalf("window %v: no day prices to compare", w)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("window %v: eachCloseDayPrice\n got %+v\nwant %+v", w, got, want)
		}
	}
}

// TestSpreadsOfBars checks that the spreads counted as the day prices are laid
// (SpreadsOfBars, and SpreadsOfCloses from the same bars in their compact form)
// are those of the day prices DailyPrices returns: tiers, GPUs and pricing kinds
// mixed, a withdrawn series, a price carried in from before the window, derived
// and GPU-only bars left out.
func TestSpreadsOfBars(t *testing.T) {
	bars := mixedDayBars()
	want := Spreads(DailyPrices(bars, day(0).Add(5*time.Hour), day(7)))
	got := SpreadsOfBars(bars, day(0).Add(5*time.Hour), day(7))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("SpreadsOfBars:\n got %+v\nwant %+v", got, want)
	}
	if got := SpreadsOfCloses(store.ClosesOfBars(bars), day(0).Add(5*time.Hour), day(7)); !reflect.DeepEqual(got, want) {
		t.Fatalf("SpreadsOfCloses:\n got %+v\nwant %+v", got, want)
	}
	ratios := 0
	for _, d := range got {
		if d.Ratio != nil {
			ratios++
		}
	}
	if len(got) < 14 || ratios < 7 {
		t.Fatalf("%d spread days, %d with a ratio: the test reaches too little", len(got), ratios)
	}
}

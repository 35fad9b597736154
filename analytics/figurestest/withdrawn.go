package figurestest

import (
	"math"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// withdrawnSeries runs the ten daily collections of Collection and reads spreads,
// history and the index over days 0…9 (2025-03-03 … 2025-03-12) from the bars.
// Vast's offer m1 was last seen on day 3 (2025-03-06 10:00), more than 24h before
// Vast's newest sighting (day 9): it is withdrawn, and priced through day 3 and one
// day of grace, day 4, never after. Azure's list price, whose only bar is from
// 2024, was seen on day 9: in force every day. By hand:
//
//   - spreads: hyperscaler 6.98 and specialist 2.49 every day (ratio 6.98/2.49);
//     marketplace median(2.00, 2.40) = 2.20 of two offers on days 0…4, 2.40 of one
//     on days 5…9;
//   - history (on demand): four series, 10 + 10 + 10 + 5 = 35 series-days; the
//     minimum 2.00 (m1 while listed); on day 9 the offers are m2 2.40, lambda 2.49,
//     azure 6.98 (latest 2.40, latest median 2.49);
//   - index, others (lambda and Vast): 2.49, 2.40, 2.00 → median 2.40 of 3 offers
//     on days 0…4; 2.49, 2.40 → 2.445 of 2 on days 5…9; hyperscaler 6.98 of 1.
func (s *suite) withdrawnSeries(t *testing.T) {
	st := s.fresh(t)
	for d := 0; d <= 9; d++ {
		storetest.Collect(t, st, d)
	}
	from, to := storetest.W0.Truncate(store.Daily), storetest.W0.Truncate(store.Daily).AddDate(0, 0, 10)
	got := storetest.Bars(t, st, store.BarQuery{Width: store.Daily, CarryIn: true,
		Filter: store.Filter{GPU: "H100-SXM-80GB", Since: from, Until: to}})
	if len(got) != 1+1+4+10 {
		t.Fatalf("%d daily bars, want 16 (azure's carried in, lambda's, m1's 4, m2's 10): %+v", len(got), got)
	}
	seen := map[string]time.Time{}
	for _, b := range got {
		if b.LastObservedAt.After(seen[b.SKU]) {
			seen[b.SKU] = b.LastObservedAt
		}
	}
	for sku, want := range map[string]time.Time{
		"Standard_ND96isr_H100_v5": storetest.W0.AddDate(0, 0, 9), "gpu_8x_h100_sxm5": storetest.W0.AddDate(0, 0, 9),
		"m1": storetest.W0.AddDate(0, 0, 3), "m2": storetest.W0.AddDate(0, 0, 9),
	} {
		if !seen[sku].Equal(want) {
			t.Errorf("%s last seen %v, want %v", sku, seen[sku], want)
		}
	}
	prices := analytics.DailyPrices(got, from, to)
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}

	days := analytics.Spreads(prices)
	if len(days) != 10 {
		t.Fatalf("%d spread days, want 10: %+v", len(days), days)
	}
	for i, d := range days {
		wantM, wantN := 2.20, 2
		if i >= 5 {
			wantM, wantN = 2.40, 1
		}
		if !d.Day.Equal(from.AddDate(0, 0, i)) || d.NHyperscaler != 1 || d.NSpecialist != 1 || d.NMarketplace != wantN {
			t.Errorf("spread day %d: %+v", i, d)
		}
		near("day "+d.Day.Format(time.DateOnly)+" marketplace", optVal(d.Marketplace), wantM)
		near("day "+d.Day.Format(time.DateOnly)+" ratio", optVal(d.Ratio), 6.98/2.49)
	}

	h := analytics.HistoryOf("H100-SXM-80GB", schemas.OnDemand, prices, from, to, 5)
	if h.Overall.Series != 4 || h.Overall.Samples != 35 {
		t.Errorf("history: %d series, %d samples; want 4, 35", h.Overall.Series, h.Overall.Samples)
	}
	near("history min", optVal(h.Overall.Min), 2.00)
	near("history latest", optVal(h.Overall.Latest), 2.40)
	near("history latest median", optVal(h.Overall.LatestMedian), 2.49)
	var offers []string
	for _, o := range h.Cheapest {
		offers = append(offers, o.SKU)
	}
	if len(offers) != 3 || offers[0] != "m2" || offers[1] != "gpu_8x_h100_sxm5" ||
		offers[2] != "Standard_ND96isr_H100_v5" {
		t.Errorf("cheapest offers now: %v, want m2, lambda, azure", offers)
	}
	if len(h.Cheapest) == 3 &&
		(!h.Cheapest[2].Since.Equal(storetest.AzureListed) || !h.Cheapest[2].LastSeen.Equal(storetest.W0.AddDate(0, 0, 9))) {
		t.Errorf("azure offer: %+v", h.Cheapest[2])
	}

	idx := analytics.Index(prices)
	if len(idx) != 20 {
		t.Fatalf("%d index points, want 20", len(idx))
	}
	for _, p := range idx {
		i := int(p.Day.Sub(from) / store.Daily)
		switch {
		case p.Group == analytics.GroupHyperscaler:
			near("hyperscaler index", p.Price, 6.98)
			if p.Offers != 1 {
				t.Errorf("hyperscaler day %d: %d offers", i, p.Offers)
			}
		case i <= 4:
			near("others index, day "+p.Day.Format(time.DateOnly), p.Price, 2.40)
			if p.Offers != 3 {
				t.Errorf("others day %d: %d offers, want 3", i, p.Offers)
			}
		default:
			near("others index, day "+p.Day.Format(time.DateOnly), p.Price, 2.445)
			if p.Offers != 2 {
				t.Errorf("others day %d: %d offers, want 2", i, p.Offers)
			}
		}
		if p.Method != analytics.IndexVersion {
			t.Errorf("index method %q", p.Method)
		}
	}
}

// optVal reads an optional figure; nil (undefined) is NaN, which no assertion accepts.
func optVal(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

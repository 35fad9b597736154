package storetest

import (
	"math"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// W0 is the first collection of the withdrawn-series data: 2025-03-03 10:00 UTC.
// Collections run daily at 10:00 for ten days, W0 … W0+9d.
var W0 = time.Date(2025, 3, 3, 10, 0, 0, 0, time.UTC)

// AzureListed is the Azure list price of the withdrawn-series data: a meter whose
// effectiveStartDate is 2024-10-01, re-written with that identity by every
// collection, so its only bar is from 2024 while its observed_at moves on.
var AzureListed = time.Date(2024, 10, 1, 0, 0, 0, 0, time.UTC)

// h100 is an H100 on-demand observation of one GPU at gpuHour $/GPU-hour.
func h100(provider, tier, sku string, observed, effective time.Time, gpuHour float64) schemas.Observation {
	return schemas.Observation{ObservedAt: observed, EffectiveAt: effective, Provider: provider, Tier: tier,
		SKU: sku, Region: "r1", GPU: "H100-SXM-80GB", GPUName: "H100", GPUCount: 1, GPUMemoryGB: 80,
		Pricing: schemas.OnDemand, PriceUSDHour: gpuHour, PriceUSDGPUHour: gpuHour, Currency: "USD",
		PriceNative: gpuHour, Unit: schemas.UnitHour, FXRate: 1, Interconnect: schemas.InterconnectInfiniband,
		SourceKind: schemas.SourceAPI, SourceURL: "https://example.test", RunID: "r"}
}

// Collection is what the collection on day d (0…9) of the withdrawn-series data
// writes: Azure's list price (effective 2024-10-01, $6.98), Lambda's (effective
// W0's day, $2.49), and the Vast.ai offers listed that day, effective when seen:
// offer m1 ($2.00) on days 0…3 only, offer m2 ($2.40) every day.
func Collection(d int) []schemas.Observation {
	at := W0.AddDate(0, 0, d)
	obs := []schemas.Observation{
		h100("azure", schemas.TierHyperscaler, "Standard_ND96isr_H100_v5", at, AzureListed, 6.98),
		h100("lambda", schemas.TierSpecialist, "gpu_8x_h100_sxm5", at, W0.Truncate(store.Daily), 2.49),
		h100("vast", schemas.TierMarketplace, "m2", at, at, 2.40),
	}
	if d <= 3 {
		obs = append(obs, h100("vast", schemas.TierMarketplace, "m1", at, at, 2.00))
	}
	return obs
}

// collect writes day d's collection and rebuilds the bars over the span of the
// effective_at it wrote, as the CLI does after each collection.
func collect(t *testing.T, st store.Store, d int) {
	t.Helper()
	obs := Collection(d)
	write(t, st, obs)
	lo, hi := obs[0].EffectiveAt, obs[0].EffectiveAt
	for _, o := range obs {
		if o.EffectiveAt.Before(lo) {
			lo = o.EffectiveAt
		}
		if o.EffectiveAt.After(hi) {
			hi = o.EffectiveAt
		}
	}
	rollup(t, st, lo, hi.Add(time.Second))
}

// rollupLastObserved checks that a bar's last_observed_at is the latest
// observed_at of its observations, and that an identity collected again with the
// same effective_at moves it on once its bar is rebuilt, as do the hourly bars.
func (s *suite) rollupLastObserved(t *testing.T) {
	st := s.fresh(t)
	azure := func() store.Bar {
		t.Helper()
		got := bars(t, st, store.BarQuery{Width: store.Daily, Filter: store.Filter{Provider: "azure"}})
		if len(got) != 1 || !got[0].Start.Equal(AzureListed) || got[0].Count != 1 || got[0].Close != 6.98 {
			t.Fatalf("azure daily bars: %+v", got)
		}
		return got[0]
	}
	collect(t, st, 0)
	if b := azure(); !b.LastObservedAt.Equal(W0) || b.LastObservedAt.Location() != time.UTC {
		t.Fatalf("after the first collection: last_observed_at %v, want %v", b.LastObservedAt, W0)
	}
	// Collected again nine days later: the same identity, a new observed_at. Until
	// the bar is rebuilt it shows the old one.
	again := Collection(9)
	write(t, st, again)
	if b := azure(); !b.LastObservedAt.Equal(W0) {
		t.Fatalf("before the rollup: last_observed_at %v, want %v", b.LastObservedAt, W0)
	}
	rollup(t, st, AzureListed, AzureListed.Add(time.Second))
	want := W0.AddDate(0, 0, 9)
	if b := azure(); !b.LastObservedAt.Equal(want) {
		t.Fatalf("after collecting again: last_observed_at %v, want %v", b.LastObservedAt, want)
	}
	hourly := bars(t, st, store.BarQuery{Width: store.Hourly, Filter: store.Filter{Provider: "azure"}})
	if len(hourly) != 1 || !hourly[0].LastObservedAt.Equal(want) {
		t.Fatalf("azure hourly bars: %+v", hourly)
	}
	// A bar of several observations: the latest observed_at among them, not that
	// of its last effective_at. Lambda's day bar: its list price (effective at
	// 00:00), last collected on day 9, and a point effective at 06:00, the bar's
	// close, observed once at W0−1h.
	early := h100(
		"lambda",
		schemas.TierSpecialist,
		"gpu_8x_h100_sxm5",
		W0.Add(-time.Hour),
		W0.Truncate(store.Daily).Add(6*time.Hour),
		2.59,
	)
	write(t, st, []schemas.Observation{early})
	rollup(t, st, early.EffectiveAt, early.EffectiveAt.Add(time.Second))
	got := bars(t, st, store.BarQuery{Width: store.Daily, Filter: store.Filter{Provider: "lambda"}})
	if len(got) != 1 || got[0].Count != 2 || got[0].Close != 2.59 || !got[0].LastObservedAt.Equal(want) {
		t.Fatalf("lambda daily bar: %+v", got)
	}
}

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
		collect(t, st, d)
	}
	from, to := W0.Truncate(store.Daily), W0.Truncate(store.Daily).AddDate(0, 0, 10)
	got := bars(t, st, store.BarQuery{Width: store.Daily, CarryIn: true,
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
		"Standard_ND96isr_H100_v5": W0.AddDate(0, 0, 9), "gpu_8x_h100_sxm5": W0.AddDate(0, 0, 9),
		"m1": W0.AddDate(0, 0, 3), "m2": W0.AddDate(0, 0, 9),
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
		(!h.Cheapest[2].Since.Equal(AzureListed) || !h.Cheapest[2].LastSeen.Equal(W0.AddDate(0, 0, 9))) {
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

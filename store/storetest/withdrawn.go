package storetest

import (
	"testing"
	"time"

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

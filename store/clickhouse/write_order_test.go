package clickhouse_test

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store/clickhouse"
)

// TestSortedRowsFollowTheSortKey checks the order WriteObservations sends a batch
// in: the observations' sort key (provider, gpu, pricing, region, sku, zone,
// effective_at), then the rows' order in the batch, so that of two writes of one
// identity the later is still the one with the higher version.
func TestSortedRowsFollowTheSortKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(vs ...string) string { return vs[rng.IntN(len(vs))] }
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	obs := make([]schemas.Observation, 5000)
	for i := range obs {
		obs[i] = schemas.Observation{Provider: pick("aws", "azure", "lambda"), GPU: pick("H100-SXM-80GB", "A100-SXM-80GB"),
			Pricing: pick("spot", "on_demand"), Region: pick("us-east-1", "eu-west-1", ""), SKU: pick("a", "b", "ab", "b a"),
			Zone: pick("", "z1", "z2"), EffectiveAt: t0.Add(time.Duration(rng.IntN(40)) * time.Minute)}
	}
	key := func(i int32) []string {
		o := obs[i]
		return []string{o.Provider, o.GPU, o.Pricing, o.Region, o.SKU, o.Zone}
	}
	order := clickhouse.SortedRows(obs)
	if len(order) != len(obs) {
		t.Fatalf("%d rows ordered, want %d", len(order), len(obs))
	}
	seen := make([]bool, len(obs))
	for n, i := range order {
		if seen[i] {
			t.Fatalf("row %d twice", i)
		}
		seen[i] = true
		if n == 0 {
			continue
		}
		p := order[n-1]
		c := slices.Compare(key(p), key(i))
		if c == 0 {
			c = cmp.Compare(obs[p].EffectiveAt.Unix(), obs[i].EffectiveAt.Unix())
		}
		if c == 0 {
			c = cmp.Compare(p, i)
		}
		if c >= 0 {
			t.Fatalf("rows %d then %d: not in the sort key's order: %+v, %+v", p, i, obs[p], obs[i])
		}
	}
}

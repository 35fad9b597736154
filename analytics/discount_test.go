package analytics

import (
	"math"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// TestCommitmentDiscountOneDefinition: the recorded example's two disagreeing
// discounts, by hand. AWS p5.48xlarge on-demand $6.88 in us-east-2 and its three
// one-year purchase options 4.1803 (all upfront, amortised), 4.2230 (partial),
// 4.2656 (no upfront): each is a pair, 39.24 %, 38.62 %, 38.00 %, median 38.62 %.
// Together's reserved cluster ($2.69) pairs with its own SKU's on-demand $3.99
// (32.58 %), never with the median of its on-demand products (3.99, 5.49 → 4.74).
// History's reserved_discount_pct gives the same figures.
func TestCommitmentDiscountOneDefinition(t *testing.T) {
	od := []Offer{
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-2", Price: 6.88},
		{Provider: "together", SKU: "together:gpu-clusters:hgx-h100", Price: 3.99},
		{Provider: "together", SKU: "together:serverless:h100", Price: 5.49},
	}
	res := []Offer{
		{Provider: "aws", SKU: "p5.48xlarge:all-upfront", Region: "us-east-2", Price: 4.1803},
		{Provider: "aws", SKU: "p5.48xlarge:partial-upfront", Region: "us-east-2", Price: 4.2230},
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-2", Price: 4.2656},
		{Provider: "aws", SKU: "p5.48xlarge", Region: "eu-west-1", Price: 4.0}, // no on-demand twin there
		{Provider: "together", SKU: "together:gpu-clusters:hgx-h100", Price: 2.69},
	}
	d := CommitmentDiscount(od, res)
	want := []float64{(1 - 4.1803/6.88) * 100, (1 - 4.2230/6.88) * 100, (1 - 4.2656/6.88) * 100, (1 - 2.69/3.99) * 100}
	if len(d) != len(want) {
		t.Fatalf("pairs %v, want %v", d, want)
	}
	for i := range want {
		if math.Abs(d[i]-want[i]) > 1e-9 {
			t.Errorf("pair %d: %.4f, want %.4f", i, d[i], want[i])
		}
	}
	// History: the same pairs, per provider.
	var prices []DayPrice
	add := func(pricing string, o Offer) {
		b := store.Bar{Provider: o.Provider, SKU: o.SKU, Region: o.Region, Pricing: pricing, GPU: "H100-SXM-80GB",
			Tier: schemas.TierSpecialist, Start: day(0), Close: o.Price}
		prices = append(prices, DayPrice{Bar: b, Day: day(0), Price: o.Price, Series: b.SeriesKey()})
	}
	for _, o := range od {
		add(schemas.OnDemand, o)
	}
	for _, o := range res {
		add(schemas.Reserved1Y, o)
	}
	h := HistoryOf("H100-SXM-80GB", schemas.OnDemand, prices, day(0), day(1), 10)
	got := map[string]float64{}
	for _, p := range h.Providers {
		got[p.Provider] = val(p.ReservedDiscountPct)
	}
	if math.Abs(got["aws"]-want[1]) > 1e-9 || math.Abs(got["together"]-want[3]) > 1e-9 {
		t.Errorf("history discounts %v, want aws %.4f together %.4f", got, want[1], want[3])
	}
	if math.Abs(val(h.Overall.ReservedDiscountPct)-Median(want)) > 1e-9 {
		t.Errorf("overall %v, want the median of every pair %.4f", val(h.Overall.ReservedDiscountPct), Median(want))
	}
}

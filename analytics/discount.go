package analytics

import "strings"

// purchaseOptions are the payment variants a source marks after the SKU ("p5.48xlarge:all-upfront"):
// the same machine and term paid another way, its upfront part already amortised over
// the term's hours into the $/GPU-hour (scrapers/aws).
var purchaseOptions = []string{":all-upfront", ":partial-upfront", ":no-upfront"}

// BaseSKU is the SKU without its purchase option: the machine a reservation is of.
func BaseSKU(sku string) string {
	for _, p := range purchaseOptions {
		if s, ok := strings.CutSuffix(sku, p); ok {
			return s
		}
	}
	return sku
}

// CommitmentDiscount is the one definition of a reserved or commitment discount, used
// by every table that shows one (history's reserved_discount_pct, the report's
// discount table): each committed offer is paired with the on-demand offer of the same
// provider, the same SKU (its purchase option aside: all, partial and no upfront are
// each a pair, their upfront amortised over the term), the same region and zone, in
// force at the same time; the discount of a pair is (1 − committed ÷ on-demand) × 100.
// It returns the discounts of the pairs in the order of committed; an offer without an
// on-demand twin has none (a missing discount, never 0).
func CommitmentDiscount(onDemand, committed []Offer) []float64 {
	key := func(o Offer) string {
		return o.Provider + "\x00" + BaseSKU(o.SKU) + "\x00" + o.Region + "\x00" + o.Zone
	}
	od := map[string]float64{}
	for _, o := range onDemand {
		od[key(o)] = o.Price
	}
	var out []float64
	for _, o := range committed {
		if base, ok := od[key(o)]; ok && base > 0 {
			out = append(out, (1-o.Price/base)*100)
		}
	}
	return out
}

// DiscountExplain names the definition, for --explain and the report's method.
const DiscountExplain = "reserved/commitment discount: each offer paired with the on-demand offer of the same " +
	"provider, SKU (purchase option aside, upfront amortised over the term), region and zone on the same day; " +
	"1 − committed ÷ on-demand, the median over the pairs; missing without an on-demand twin"

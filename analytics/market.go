package analytics

import (
	"fmt"
	"sort"
	"strings"
)

// How the offers of a cross-section are weighted (the market at one time).
const (
	// WeightOffer counts every offer in force once (the default).
	WeightOffer = "offer"
	// WeightProvider counts every provider once: its offers' median stands for
	// it, so one provider's many regions cannot outvote the rest.
	WeightProvider = "provider"
)

// MarketMethod says what "the market at a time" is, as every window statistic of
// history, spreads, the index and the report's verdict builds on it.
const MarketMethod = "gpuprice-market/1: the market at a time is the cross-section of the offers in force on one UTC " +
	"day " +
	"(same GPU, pricing kind and term, scope), each offer once (weight offer) or each provider once, its offers' " +
	"median standing for it (weight provider); a window's percentile is the median over its days of each day's " +
	"percentile (type 7), its minimum the lowest price of any day; never a pool of series-days"

// ParseWeight reads a weighting: "" or "offer" is WeightOffer, "provider"
// WeightProvider.
func ParseWeight(s string) (string, error) {
	switch strings.TrimSpace(s) {
	case "", WeightOffer:
		return WeightOffer, nil
	case WeightProvider:
		return WeightProvider, nil
	}
	return "", fmt.Errorf("%q: use offer or provider", s)
}

// CrossSection is the values a statistic of one day takes from the prices in force
// that day (each offer once) and each one's provider: the prices themselves
// (WeightOffer), or one value per provider, the median of its prices
// (WeightProvider), in provider order. The result is sorted ascending.
func CrossSection(prices []float64, providers []string, weight string) []float64 {
	if weight != WeightProvider {
		out := append([]float64(nil), prices...)
		sort.Float64s(out)
		return out
	}
	by := map[string][]float64{}
	for i, p := range prices {
		by[providers[i]] = append(by[providers[i]], p)
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]float64, 0, len(names))
	for _, n := range names {
		out = append(out, medianInPlace(by[n]))
	}
	sort.Float64s(out)
	return out
}

// OfferCrossSection is CrossSection of offers in force at one time: their prices
// (WeightOffer) or each provider's median (WeightProvider), sorted ascending.
func OfferCrossSection(offers []Offer, weight string) []float64 {
	prices, providers := make([]float64, len(offers)), make([]string, len(offers))
	for i, o := range offers {
		prices[i], providers[i] = o.Price, o.Provider
	}
	return CrossSection(prices, providers, weight)
}

// providerOf is the provider of a series key (provider|sku|region|zone|pricing).
func providerOf(series string) string {
	p, _, _ := strings.Cut(series, "|")
	return p
}

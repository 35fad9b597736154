package analytics

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/gpuprice/gpuprice/schemas"
)

// TermPoint is one point of a GPU's term curve: the offers of one pricing kind in
// force at one time (the market's, or one provider's), in $/GPU-hour with any
// upfront amortised over the term, against the term's length.
type TermPoint struct {
	Pricing string `json:"pricing"`
	// Months is the term's length in months (0 for on-demand and spot); Hours the
	// hours a commitment is paid for (schemas.TermHours), 0 for on-demand and spot.
	Months   float64 `json:"term_months"`
	Hours    float64 `json:"term_hours"`
	Provider string  `json:"provider"` // "" for the market
	Offers   int     `json:"offers"`
	Min      float64 `json:"min_usd_gpu_hour"`
	Median   float64 `json:"median_usd_gpu_hour"`
	Cheapest Offer   `json:"cheapest"`
	// DiscountPct is the median CommitmentDiscount over the like-for-like pairs
	// (same provider, SKU, region and zone priced on demand too), Pairs how many;
	// nil without a pair (and for on-demand and spot).
	DiscountPct *float64 `json:"discount_pct"`
	Pairs       int      `json:"pairs"`
	// VsOnDemandPct is (1 − Median ÷ the on-demand median of the same group) × 100:
	// the curve's drop against on-demand, not like for like (a different mix of
	// offers); nil without on-demand offers.
	VsOnDemandPct *float64 `json:"vs_on_demand_median_pct"`
}

// TermMonths is the length in months of a pricing kind's term: 12 and 36 for the
// reservations, n for commitment_<n>m, 0 for on-demand, spot and the rest.
func TermMonths(pricing string) float64 {
	switch pricing {
	case schemas.Reserved1Y:
		return 12
	case schemas.Reserved3Y:
		return 36
	}
	return schemas.TermHours(pricing) / 730
}

// PricingRank orders pricing kinds by term, as every table, tab and report lists
// them: on-demand, spot, then each kind sold for a term by its length in months
// (commitment_1m, commitment_6m, reserved_1y and commitment_12m, commitment_36m and
// reserved_3y: a reservation right after the commitment of its length), anything
// else (low priority) last.
func PricingRank(pricing string) int {
	switch pricing {
	case schemas.OnDemand:
		return 0
	case schemas.Spot:
		return 1
	}
	if m := TermMonths(pricing); m > 0 {
		r := 10 + int(m*2)
		if pricing == schemas.Reserved1Y || pricing == schemas.Reserved3Y {
			r++
		}
		return r
	}
	return 1 << 20
}

// onCurve reports whether a pricing kind belongs on the term curve: on-demand, spot
// and every kind sold for a term (low-priority capacity is a product of its own).
func onCurve(pricing string) bool {
	return pricing == schemas.OnDemand || pricing == schemas.Spot || schemas.TermHours(pricing) > 0
}

// TermCurve lays the offers of each pricing kind in force at one time (kinds: pricing
// kind → offers, one GPU and one price scope) on the term curve: one point per kind
// for the market, and one per kind and provider. Points are ordered on-demand, spot,
// then by term; a provider's points follow the market's, providers by name.
func TermCurve(kinds map[string][]Offer) (market, providers []TermPoint) {
	od := kinds[schemas.OnDemand]
	odByProvider := map[string][]Offer{}
	for _, o := range od {
		odByProvider[o.Provider] = append(odByProvider[o.Provider], o)
	}
	for k, offers := range kinds {
		if !onCurve(k) || len(offers) == 0 {
			continue
		}
		market = append(market, termPoint(k, "", offers, od))
		byProvider := map[string][]Offer{}
		for _, o := range offers {
			byProvider[o.Provider] = append(byProvider[o.Provider], o)
		}
		for p, os := range byProvider {
			providers = append(providers, termPoint(k, p, os, odByProvider[p]))
		}
	}
	order := func(pts []TermPoint) {
		sort.Slice(pts, func(i, j int) bool {
			a, b := pts[i], pts[j]
			if a.Provider != b.Provider {
				return a.Provider < b.Provider
			}
			return PricingRank(a.Pricing) < PricingRank(b.Pricing)
		})
	}
	order(market)
	order(providers)
	return market, providers
}

func termPoint(pricing, provider string, offers, onDemand []Offer) TermPoint {
	sorted := append([]Offer(nil), offers...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Price < sorted[j].Price })
	prices := make([]float64, len(sorted))
	for i, o := range sorted {
		prices[i] = o.Price
	}
	p := TermPoint{Pricing: pricing, Months: TermMonths(pricing), Hours: schemas.TermHours(pricing), Provider: provider,
		Offers: len(sorted), Min: Round(prices[0], 6), Median: Round(Median(prices), 6), Cheapest: sorted[0]}
	if p.Hours > 0 {
		if d := CommitmentDiscount(onDemand, sorted); len(d) > 0 {
			p.DiscountPct, p.Pairs = Opt(Round(Median(d), 4)), len(d)
		}
	}
	if pricing != schemas.OnDemand && len(onDemand) > 0 {
		odp := make([]float64, len(onDemand))
		for i, o := range onDemand {
			odp[i] = o.Price
		}
		if m := Median(odp); m > 0 {
			p.VsOnDemandPct = Opt(Round((1-p.Median/m)*100, 4))
		}
	}
	return p
}

// CostAt is what a commitment costs against an alternative paid by the hour used,
// per GPU over the term's hours, at a utilisation (the share of the term's hours
// the GPU is used, 0–1): the commitment is paid for every hour.
type CostAt struct {
	Utilisation float64 `json:"utilisation"`
	Hours       float64 `json:"hours"`
	Price       float64 `json:"price_usd_gpu_hour"`
	Alternative float64 `json:"alternative_usd_gpu_hour"`
	// BreakEven is Price ÷ Alternative: above it the commitment costs less (above 1,
	// the alternative costs less at any utilisation).
	BreakEven float64 `json:"break_even"`
	// Committed = Price × Hours; PayAsYouGo = Alternative × Hours × Utilisation;
	// Saving = PayAsYouGo − Committed (positive: the commitment wins).
	Committed  float64 `json:"committed_usd"`
	PayAsYouGo float64 `json:"pay_as_you_go_usd"`
	Saving     float64 `json:"saving_usd"`
}

// CostAtUtilisation computes CostAt; price and alternative are $/GPU-hour.
func CostAtUtilisation(price, alternative, hours, utilisation float64) (CostAt, error) {
	switch {
	case !(price > 0) || !(alternative > 0):
		return CostAt{}, fmt.Errorf("analytics: break-even of %v against %v: both prices must be positive",
			price, alternative)
	case !(hours > 0):
		return CostAt{}, fmt.Errorf("analytics: break-even over %v hours: must be positive", hours)
	case !(utilisation >= 0 && utilisation <= 1):
		return CostAt{}, fmt.Errorf("analytics: utilisation %v: must be in [0, 1]", utilisation)
	}
	c := CostAt{Utilisation: utilisation, Hours: hours, Price: price, Alternative: alternative}
	c.BreakEven = Round(price/alternative, 6)
	c.Committed = Round(price*hours, 2)
	c.PayAsYouGo = Round(alternative*hours*utilisation, 2)
	c.Saving = Round(alternative*hours*utilisation-price*hours, 2)
	return c, nil
}

// Sentence says the cost in a buyer's words: "At your 60 % utilisation this one-year
// quote beats on-demand by $X over the term (per GPU); below 41 % it loses."
func (c CostAt) Sentence(what, term, alt string) string {
	pct := func(x float64) string { return strconv.FormatFloat(math.Round(x*100), 'f', 0, 64) + " %" }
	usd := func(x float64) string { return "$" + strconv.FormatFloat(math.Abs(x), 'f', 0, 64) }
	tw := TermWords(term)
	if c.BreakEven >= 1 {
		return fmt.Sprintf("At your %s utilisation this %s %s loses to %s by %s over the term per GPU; "+
			"%s by the hour costs less at any utilisation.", pct(c.Utilisation), tw, what, alt, usd(c.Saving), alt)
	}
	if c.Saving < 0 {
		return fmt.Sprintf("At your %s utilisation this %s %s loses to %s by %s over the term per GPU; above %s it wins.",
			pct(c.Utilisation), tw, what, alt, usd(c.Saving), pct(c.BreakEven))
	}
	return fmt.Sprintf("At your %s utilisation this %s %s beats %s by %s over the term per GPU; below %s it loses.",
		pct(c.Utilisation), tw, what, alt, usd(c.Saving), pct(c.BreakEven))
}

// BreakEven is one commitment offer of a term against paying by the hour: against
// the on-demand median in force (the market, as QuoteVerdict compares a quote),
// against the same provider's on-demand price of the same SKU, region and zone
// (the like-for-like twin of CommitmentDiscount), and against the spot median.
type BreakEven struct {
	Offer Offer   `json:"offer"`
	Term  string  `json:"term"`
	Hours float64 `json:"hours"`
	// Market is against the on-demand median; nil without on-demand offers.
	Market *CostAt `json:"market"`
	// Twin is against the offer's own on-demand twin; nil without one.
	Twin *CostAt `json:"twin"`
	// Spot is against the spot median (spot can be interrupted); nil without spot.
	Spot *CostAt `json:"spot"`
	// UpfrontUSDPerGPU is the part paid before the term starts, per GPU, where the
	// provider publishes it (nil: not published in the data); Cancellation what the
	// provider publishes about ending the commitment early (empty: not known).
	UpfrontUSDPerGPU *float64 `json:"upfront_usd_per_gpu"`
	Cancellation     string   `json:"cancellation,omitempty"`
}

// BreakEvens computes the BreakEven of every offer of a term (termOffers: its
// reservations and commitments in force at one time) at a utilisation, against
// the on-demand and spot offers in force then; cheapest first.
func BreakEvens(term string, hours, utilisation float64, termOffers, onDemand, spot []Offer) ([]BreakEven, error) {
	sorted := append([]Offer(nil), termOffers...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Price < sorted[j].Price })
	out := make([]BreakEven, 0, len(sorted))
	for _, o := range sorted {
		b := BreakEven{Offer: o, Term: term, Hours: hours}
		v := QuoteVerdict(o.Price, term, hours, termOffers, onDemand, spot)
		at := func(alt *float64) (*CostAt, error) {
			if alt == nil || *alt <= 0 {
				return nil, nil
			}
			c, err := CostAtUtilisation(o.Price, *alt, hours, utilisation)
			return &c, err
		}
		var err error
		if b.Market, err = at(v.OnDemand); err != nil {
			return nil, err
		}
		if b.Spot, err = at(v.Spot); err != nil {
			return nil, err
		}
		if d := CommitmentDiscount(onDemand, []Offer{o}); len(d) == 1 && d[0] < 100 {
			twin := o.Price / (1 - d[0]/100)
			if b.Twin, err = at(&twin); err != nil {
				return nil, err
			}
			b.Twin.Alternative = Round(b.Twin.Alternative, 6)
		}
		out = append(out, b)
	}
	return out, nil
}

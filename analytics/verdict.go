package analytics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Verdict places a quoted price with a term like for like: among the offers of the
// same term in force at one time (each offer counted once), and separately against
// the on-demand and spot offers in force then for the same hours. It is what a buyer
// can repeat: "3rd cheapest of 7 one-year offers; $0.81 above the cheapest
// (together, $2.69); $0.54 below today's on-demand median".
type Verdict struct {
	Quote float64 `json:"quote"`
	Term  string  `json:"term"`
	Hours float64 `json:"hours"`
	// Weight is how the offers are counted: WeightOffer (each offer once) or
	// WeightProvider (each provider once, its offers' median standing for it: the
	// counts, ranks and medians are of providers).
	Weight string `json:"weight"`
	// Offers is how many offers of the term are in force (providers, weighted by
	// provider); Rank the quote's place among them (1 = cheapest: one more than the
	// offers, or providers' medians, cheaper than it). Cheapest is the lowest offer
	// whatever the weighting.
	Offers   int    `json:"term_offers"`
	Rank     int    `json:"rank"`
	Cheapest *Offer `json:"cheapest"`
	// TermMedian is the median of the term's offers.
	TermMedian *float64 `json:"term_median"`
	// OnDemand and Spot are the medians of the on-demand and spot offers in force,
	// with how many there are (of the providers' medians, and how many providers,
	// weighted by provider).
	OnDemand       *float64 `json:"on_demand_median"`
	OnDemandOffers int      `json:"on_demand_offers"`
	Spot           *float64 `json:"spot_median"`
	SpotOffers     int      `json:"spot_offers"`
	// OnDemandBreakEven and SpotBreakEven are the utilisations (0–1 of the term's
	// hours) above which the quote, paid for every hour of the term, costs less than
	// paying the median on-demand or spot price for the hours used: quote / price.
	// Above 1, the alternative is cheaper at any utilisation.
	OnDemandBreakEven *float64 `json:"on_demand_break_even"`
	SpotBreakEven     *float64 `json:"spot_break_even"`
}

// QuoteVerdict is the Verdict of quote over a term of hours, given the offers of the
// term, on-demand and spot in force at one time (one cross-section: every offer
// once, whatever its history).
func QuoteVerdict(quote float64, term string, hours float64, termOffers, onDemand, spot []Offer) Verdict {
	return QuoteVerdictWeighted(quote, term, hours, termOffers, onDemand, spot, WeightOffer)
}

// QuoteVerdictWeighted is QuoteVerdict with the cross-sections weighted as weight
// says (OfferCrossSection): by provider, each provider's median of its offers of a
// kind stands for it, so one provider's many regions cannot outvote the rest.
func QuoteVerdictWeighted(quote float64, term string, hours float64, termOffers, onDemand, spot []Offer,
	weight string) Verdict {
	if weight != WeightProvider {
		weight = WeightOffer
	}
	cs := OfferCrossSection(termOffers, weight)
	v := Verdict{Quote: quote, Term: term, Hours: hours, Weight: weight, Offers: len(cs), Rank: 1}
	for _, p := range cs {
		if p < quote {
			v.Rank++
		}
	}
	if len(termOffers) > 0 {
		sorted := append([]Offer(nil), termOffers...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Price < sorted[j].Price })
		c := sorted[0]
		v.Cheapest = &c
		v.TermMedian = Opt(percentileSorted(cs, .5))
	}
	med := func(offers []Offer) (*float64, int) {
		xs := OfferCrossSection(offers, weight)
		if len(xs) == 0 {
			return nil, 0
		}
		return Opt(percentileSorted(xs, .5)), len(xs)
	}
	v.OnDemand, v.OnDemandOffers = med(onDemand)
	v.Spot, v.SpotOffers = med(spot)
	if v.OnDemand != nil && *v.OnDemand > 0 {
		v.OnDemandBreakEven = Opt(quote / *v.OnDemand)
	}
	if v.Spot != nil && *v.Spot > 0 {
		v.SpotBreakEven = Opt(quote / *v.Spot)
	}
	return v
}

// TermWords names a term as a buyer says it: "one-year" for 1y, "three-year" for 3y,
// "6-month" for 6m; any other text as it is.
func TermWords(term string) string {
	switch term {
	case "1y":
		return "one-year"
	case "3y":
		return "three-year"
	}
	if n, ok := strings.CutSuffix(term, "m"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		return n + "-month"
	}
	return term
}

// Ordinal writes 1st, 2nd, 3rd, 4th, 11th, 21st…
func Ordinal(n int) string {
	suf := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suf = "st"
		case 2:
			suf = "nd"
		case 3:
			suf = "rd"
		}
	}
	return strconv.Itoa(n) + suf
}

// Sentences are the verdict in words: the quote's place among the term's offers,
// then against on-demand and spot with the utilisation at which each wins.
func (v Verdict) Sentences() []string {
	var out []string
	d2 := func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
	pct := func(x float64) string { return strconv.FormatFloat(x*100, 'f', 0, 64) + " %" }
	rel := func(diff float64, what string) string {
		switch {
		case diff > 0.005:
			return fmt.Sprintf("$%s above %s", d2(diff), what)
		case diff < -0.005:
			return fmt.Sprintf("$%s below %s", d2(-diff), what)
		}
		return "level with " + what
	}
	tw := TermWords(v.Term)
	// What is counted: offers, or providers (each its offers' median).
	of, units, median := tw+" offers", "offers", "the median "+tw+" offer"
	if v.Weight == WeightProvider {
		of, units, median = "providers' "+tw+" offers (each provider's median)", "providers",
			"the median provider's "+tw+" offer"
	}
	if v.Offers == 0 {
		out = append(out, fmt.Sprintf("No %s offer of this GPU is in force: the quote cannot be ranked among its term.", tw))
	} else {
		c := v.Cheapest
		first := fmt.Sprintf("The quote of $%s is the %s cheapest of %d %s; %s (%s, $%s)",
			d2(v.Quote), Ordinal(v.Rank), v.Offers, of, rel(v.Quote-c.Price, "the cheapest"), c.Provider, d2(c.Price))
		if v.Rank == 1 {
			first = fmt.Sprintf("The quote of $%s is the cheapest of %d %s; %s (%s, $%s)",
				d2(v.Quote), v.Offers, of, rel(v.Quote-c.Price, "the cheapest listed"), c.Provider, d2(c.Price))
		}
		out = append(out, first+fmt.Sprintf("; %s is $%s.", median, d2(*v.TermMedian)))
	}
	if v.OnDemand != nil {
		s := fmt.Sprintf("It is %s ($%s, %d %s).", rel(v.Quote-*v.OnDemand, "today's on-demand median"), d2(*v.OnDemand),
			v.OnDemandOffers, units)
		out = append(out, s+" "+winsAt("on-demand", *v.OnDemandBreakEven, v.Hours, pct))
	} else {
		out = append(out, "No on-demand offer is in force to compare with.")
	}
	if v.Spot != nil {
		s := fmt.Sprintf("It is %s ($%s, %d %s; spot can be interrupted).", rel(v.Quote-*v.Spot, "today's spot median"),
			d2(*v.Spot), v.SpotOffers, units)
		out = append(out, s+" "+winsAt("spot", *v.SpotBreakEven, v.Hours, pct))
	}
	return out
}

// winsAt says at which utilisation of the term's hours the quote beats an
// alternative paid by the hour used.
func winsAt(alt string, breakEven, hours float64, pct func(float64) string) string {
	h := strconv.FormatFloat(hours, 'f', 0, 64)
	if breakEven >= 1 {
		return fmt.Sprintf("Paying %s by the hour costs less at any utilisation of the %s hours.", alt, h)
	}
	return strings.TrimSpace(
		fmt.Sprintf("The quote costs less than %s when the GPUs are used more than %s of the %s hours "+
			"(%s hours); below that, %s wins.", alt, pct(breakEven), h,
			strconv.FormatFloat(breakEven*hours, 'f', 0, 64), alt))
}

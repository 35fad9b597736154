package analytics

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// TestIndexWeightedByProvider: one day, "others" holding x at 3.00 and m's eight
// regions at 1.00. Each offer once: mean 1.2222, sample SD 0.6667, so 3.00 lies
// 1.78 > 2.5 × 0.6667 = 1.67 from the mean and is dropped; the median of the rest
// is 1.00. Each provider once: {3, 1}, fewer than three values, nothing dropped,
// median 2.00. The offers counted stay 9.
func TestIndexWeightedByProvider(t *testing.T) {
	s, m := schemas.TierSpecialist, schemas.TierMarketplace
	prices := []DayPrice{dp("x", s, "on_demand", "a", 0, 3)}
	for r := 1; r <= 8; r++ {
		prices = append(prices, dp("m", m, "on_demand", fmt.Sprintf("r%d", r), 0, 1))
	}
	byOffer, byProvider := Index(prices), IndexWeighted(prices, WeightProvider)
	if len(byOffer) != 1 || byOffer[0].Price != 1 || byOffer[0].Dropped != 1 || byOffer[0].Offers != 9 {
		t.Errorf("by offer: %+v, want 1.00 with 1 dropped of 9", byOffer)
	}
	if len(byProvider) != 1 || byProvider[0].Price != 2 || byProvider[0].Dropped != 0 || byProvider[0].Offers != 9 {
		t.Errorf("by provider: %+v, want 2.00, none dropped, 9 offers", byProvider)
	}
}

// TestCrossSection: by offer the prices sorted; by provider each provider's median.
func TestCrossSection(t *testing.T) {
	got := CrossSection([]float64{6, 1, 1, 1, 3, 2}, []string{"big", "m", "m", "m", "x", "x"}, WeightProvider)
	if fmt.Sprint(got) != "[1 2.5 6]" {
		t.Errorf("by provider %v, want [1 2.5 6]", got)
	}
	if got := CrossSection([]float64{6, 1, 3}, []string{"a", "b", "c"}, WeightOffer); fmt.Sprint(got) != "[1 3 6]" {
		t.Errorf("by offer %v", got)
	}
	if w, err := ParseWeight("provider"); err != nil || w != WeightProvider {
		t.Errorf("ParseWeight: %q %v", w, err)
	}
	if _, err := ParseWeight("series-days"); err == nil {
		t.Error("ParseWeight accepted series-days")
	}
}

// TestCarriedLabels: a price in force on day 2 of a series last seen on day 0 is
// carried; index points, spreads days and history's daily points count it and name
// the last sighting.
func TestCarriedLabels(t *testing.T) {
	s := schemas.TierSpecialist
	seen := day(0).Add(10 * time.Hour)
	var prices []DayPrice
	for d := 0; d < 3; d++ {
		p := dp("x", s, "on_demand", "a", d, 3)
		p.LastSeen = seen
		prices = append(prices, p)
	}
	for _, p := range Index(prices) {
		if want := map[bool]int{true: 0, false: 1}[p.Day.Equal(day(0))]; p.Carried != want || !p.LastSeen.Equal(seen) {
			t.Errorf("index %v: carried %d last seen %v, want %d, %v", p.Day, p.Carried, p.LastSeen, want, seen)
		}
	}
	for _, d := range Spreads(prices) {
		if want := map[bool]int{true: 0, false: 1}[d.Day.Equal(day(0))]; d.Carried != want || !d.LastSeen.Equal(seen) {
			t.Errorf("spreads %v: carried %d last seen %v, want %d", d.Day, d.Carried, d.LastSeen, want)
		}
	}
	for _, d := range HistoryOf("H100-SXM-80GB", "on_demand", prices, day(0), day(3), 1).Daily {
		if want := map[bool]int{true: 0, false: 1}[d.Day.Equal(day(0))]; d.Carried != want {
			t.Errorf("history daily %s %v: carried %d, want %d", d.Group, d.Day, d.Carried, want)
		}
	}
}

// TestSpreadsWeightedByProvider: hyperscalers azure 10, 10, 10 (three regions) and
// aws 4; specialists lambda 2 and together 3. Each offer once: hyperscaler median
// of {4, 10, 10, 10} = 10, specialist 2.5, ratio 4. Each provider once: {4, 10},
// median 7, ratio 2.8. The counts stay counts of offers (4 and 2).
func TestSpreadsWeightedByProvider(t *testing.T) {
	h, s := schemas.TierHyperscaler, schemas.TierSpecialist
	prices := []DayPrice{dp("aws", h, "on_demand", "p5", 0, 4), dp("lambda", s, "on_demand", "l", 0, 2),
		dp("together", s, "on_demand", "t", 0, 3)}
	for r := 1; r <= 3; r++ {
		prices = append(prices, dp("azure", h, "on_demand", fmt.Sprintf("nd-r%d", r), 0, 10))
	}
	for _, c := range []struct {
		weight          string
		hyper, ratio    float64
		nHyper, nSpecia int
	}{{WeightOffer, 10, 4, 4, 2}, {WeightProvider, 7, 2.8, 4, 2}} {
		days := SpreadsWeighted(prices, c.weight)
		if len(days) != 1 {
			t.Fatalf("%s: %d days", c.weight, len(days))
		}
		d := days[0]
		if *d.Hyperscaler != c.hyper || *d.Specialist != 2.5 || math.Abs(*d.Ratio-c.ratio) > 1e-9 ||
			d.NHyperscaler != c.nHyper || d.NSpecialist != c.nSpecia {
			t.Errorf("%s: hyperscaler %v specialist %v ratio %v n %d/%d; want %v 2.5 %v %d/%d", c.weight, *d.Hyperscaler,
				*d.Specialist, *d.Ratio, d.NHyperscaler, d.NSpecialist, c.hyper, c.ratio, c.nHyper, c.nSpecia)
		}
	}
	if got := Spreads(prices); *got[0].Ratio != 4 {
		t.Errorf("Spreads is not the offer weighting: ratio %v", *got[0].Ratio)
	}
}

// TestQuoteVerdictWeightedByProvider: one-year offers azure 2.00, 2.10, 2.20 (three
// regions), together 2.69, crusoe 2.90; on-demand azure 4, 4, 4 and lambda 3; quote
// 2.50. Each offer once: 3 offers cheaper, so 4th of 5, median 2.20; on-demand
// median of {3, 4, 4, 4} = 4.00. Each provider once: medians azure 2.10, together
// 2.69, crusoe 2.90, so 2nd of 3, median 2.69; on-demand {3, 4}: 3.50 of 2
// providers, break-even 2.5 / 3.5. The cheapest is azure's 2.00 either way.
func TestQuoteVerdictWeightedByProvider(t *testing.T) {
	o := func(p string, price float64) Offer { return Offer{Provider: p, Price: price} }
	term := []Offer{o("azure", 2.0), o("azure", 2.1), o("azure", 2.2), o("together", 2.69), o("crusoe", 2.9)}
	od := []Offer{o("azure", 4), o("azure", 4), o("azure", 4), o("lambda", 3)}
	for _, c := range []struct {
		weight              string
		rank, offers, odN   int
		median, odMed, odBE float64
		words               string
	}{
		{WeightOffer, 4, 5, 4, 2.2, 4, 2.5 / 4, "the 4th cheapest of 5 one-year offers; $0.50 above the cheapest (azure, $2.00); " +
			"the median one-year offer is $2.20."},
		{WeightProvider, 2, 3, 2, 2.69, 3.5, 2.5 / 3.5, "the 2nd cheapest of 3 providers' one-year offers (each provider's median); " +
			"$0.50 above the cheapest (azure, $2.00); the median provider's one-year offer is $2.69."},
	} {
		v := QuoteVerdictWeighted(2.5, "1y", 8760, term, od, nil, c.weight)
		if v.Weight != c.weight || v.Rank != c.rank || v.Offers != c.offers || *v.TermMedian != c.median ||
			*v.OnDemand != c.odMed || v.OnDemandOffers != c.odN || math.Abs(*v.OnDemandBreakEven-c.odBE) > 1e-12 ||
			v.Cheapest.Price != 2.0 {
			t.Errorf("%s: %+v", c.weight, v)
		}
		if s := v.Sentences()[0]; !strings.Contains(s, c.words) {
			t.Errorf("%s: %q lacks %q", c.weight, s, c.words)
		}
	}
}

// TestWindowSpecialistsEnterLate: a market where hyperscalers list all 30 days of
// the window (aws 8, azure 10, gcp 12) and five specialists enter on its last two
// (2, 2.5, 3, 3.5, 4). Per day (type 7): days 0–27 {8, 10, 12} give p10 8.4, p50 10,
// p90 11.6; days 28–29 {2, 2.5, 3, 3.5, 4, 8, 10, 12} give p10 2.35, p50 3.75, p90
// 10.6; the window's figures are the medians over the 30 days: 8.4, 10, 11.6. A
// pool of the 100 series-days would give a p10 of 7.6 (x[9] = 4, x[10] = 8, h =
// 9.9). Today's median is 3.75, yet no price moved: composition. Like for like, the
// three offers in force on the first and the last day have a median of 10 over the
// window and 10 today; 5 entered, 0 left; the trend is 0.
func TestWindowSpecialistsEnterLate(t *testing.T) {
	h, s := schemas.TierHyperscaler, schemas.TierSpecialist
	var prices []DayPrice
	for d := 0; d < 30; d++ {
		prices = append(prices, dp("aws", h, "on_demand", "p5", d, 8), dp("azure", h, "on_demand", "nd", d, 10),
			dp("gcp", h, "on_demand", "a3", d, 12))
		if d >= 28 {
			for i, p := range []string{"lambda", "crusoe", "together", "coreweave", "gmi"} {
				prices = append(prices, dp(p, s, "on_demand", "h100", d, 2+0.5*float64(i)))
			}
		}
	}
	for _, w := range []string{WeightOffer, WeightProvider} { // one offer per provider: the same figures
		o := HistoryWeighted("H100-SXM-80GB", "on_demand", prices, day(0), day(30), 3, w).Overall
		for _, c := range []struct {
			what string
			got  *float64
			want float64
		}{{"p10", o.P10, 8.4}, {"p25", o.P25, 9}, {"p50", o.P50, 10}, {"p90", o.P90, 11.6}, {"min", o.Min, 2},
			{"latest", o.Latest, 2}, {"latest median", o.LatestMedian, 3.75}, {"trend %", o.TrendPctPer30d, 0},
			{"matched p50", o.MatchedP50, 10}, {"matched latest median", o.MatchedLatestMedian, 10}} {
			if c.got == nil || math.Abs(*c.got-c.want) > 1e-9 {
				t.Errorf("%s: %s = %v, want %v", w, c.what, optText(c.got), c.want)
			}
		}
		if o.Days != 30 || o.Samples != 100 || o.Series != 8 || o.SeriesEntered != 5 || o.SeriesLeft != 0 ||
			o.FirstDayOffers != 3 || o.LastDayOffers != 8 || o.MatchedOffers != 3 {
			t.Errorf("%s: days %d samples %d series %d entered %d left %d first %d last %d matched %d; want 30 100 8 5 0 3 8 3",
				w, o.Days, o.Samples, o.Series, o.SeriesEntered, o.SeriesLeft, o.FirstDayOffers, o.LastDayOffers, o.MatchedOffers)
		}
	}
}

// TestMatchedLevelNoneOnBoth: no series priced on both the first and the last day
// leaves the like-for-like level missing, never 0.
func TestMatchedLevelNoneOnBoth(t *testing.T) {
	ds := map[int64]map[string]float64{1: {"a|x|||on_demand": 3}, 2: {"b|y|||on_demand": 4}}
	first, last, matched, p50, latest := MatchedLevel([]int64{1, 2}, ds, WeightOffer)
	if first != 1 || last != 1 || matched != 0 || p50 != nil || latest != nil {
		t.Errorf("MatchedLevel = %d %d %d %v %v, want 1 1 0 nil nil", first, last, matched, p50, latest)
	}
}

func optText(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

// TestSpreadSummaryCarriedDays: a ratio day counts as carried only when every price
// of it is carried. Over days 0–3 aws (hyperscaler) is seen every day and lambda
// (specialist) only on day 0: no day is wholly carried. With aws also last seen on
// day 1, days 2 and 3 are (2 of 4), last seen on day 1.
func TestSpreadSummaryCarriedDays(t *testing.T) {
	h, s := schemas.TierHyperscaler, schemas.TierSpecialist
	build := func(awsLast int) []DayPrice {
		var prices []DayPrice
		for d := 0; d < 4; d++ {
			a, l := dp("aws", h, "on_demand", "p5", d, 8), dp("lambda", s, "on_demand", "l", d, 2)
			a.LastSeen = day(min(d, awsLast)).Add(time.Hour)
			l.LastSeen = day(0).Add(time.Hour)
			prices = append(prices, a, l)
		}
		return prices
	}
	for _, c := range []struct {
		awsLast, carried int
		seen             string
	}{{3, 0, ""}, {1, 2, day(1).Format(time.DateOnly)}} {
		sum := SummariseSpreads(Spreads(build(c.awsLast)))
		if len(sum) != 1 || sum[0].Days != 4 || sum[0].CarriedDays != c.carried || sum[0].LastSeen != c.seen {
			t.Errorf("aws last seen on day %d: summary %+v, want 4 days, %d carried, last seen %q", c.awsLast, sum, c.carried, c.seen)
		}
	}
}

package analytics

import (
	"math"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// SpreadsVersion names the method of Spreads (the median day price of each tier's
// series, hyperscaler ÷ specialist); it changes whenever the method does.
const SpreadsVersion = "gpuprice-spreads/1"

// SpreadDay is the tier spread of one GPU and pricing kind on one day (defined in
// store, so that a store can compute it where the bars are; see SpreadsOf).
type SpreadDay = store.SpreadDay

// SpreadSummary is how the spread of one GPU and pricing kind moved over the
// window: its first and last day with a ratio, and the change between them.
type SpreadSummary struct {
	GPU          string    `json:"gpu"`
	Pricing      string    `json:"pricing"`
	First, Last  time.Time `json:"-"`
	FirstDay     string    `json:"first_day"`
	LastDay      string    `json:"last_day"`
	FirstRatio   float64   `json:"first_ratio"`
	LastRatio    float64   `json:"last_ratio"`
	RatioChange  float64   `json:"ratio_change"`  // LastRatio − FirstRatio
	PremiumMoved float64   `json:"premium_moved"` // in percentage points
	MinRatio     float64   `json:"min_ratio"`
	MaxRatio     float64   `json:"max_ratio"`
	Days         int       `json:"days_with_ratio"`
	// CarriedDays is how many of those days were not observed: every price of the
	// three tiers carried past its series' last sighting, the ratio repeating an
	// earlier day's; LastSeen is the latest sighting among them ("" when none).
	CarriedDays int    `json:"carried_days"`
	LastSeen    string `json:"last_seen,omitempty"`
}

// Spreads computes the daily tier spreads of the day prices, by GPU, pricing, day,
// each offer counted once (SpreadsWeighted with WeightOffer).
func Spreads(prices []DayPrice) []SpreadDay { return SpreadsWeighted(prices, WeightOffer) }

// SpreadsWeighted is Spreads with each tier's day cross-section weighted as weight
// says (CrossSection): by provider, a tier's median is the median of its
// providers' medians, so one provider's many regions cannot outvote the rest of
// its tier (the N counts stay counts of offers).
func SpreadsWeighted(prices []DayPrice, weight string) []SpreadDay {
	acc := newSpreadAcc(weight)
	for i := range prices {
		p := &prices[i]
		acc.add(p.Bar.GPU, p.Bar.Pricing, p.Bar.Tier, p.Bar.Provider, p.Day, p.Price, p.LastSeen)
	}
	return acc.days()
}

// SpreadsOfBars is Spreads(DailyPrices(bars, from, to)) without holding the day
// prices: each is counted as DailyPrices lays it.
func SpreadsOfBars(bars []store.Bar, from, to time.Time) []SpreadDay {
	acc := newSpreadAcc(WeightOffer)
	eachDayPrice(ComparableBars(bars), from, to, func(int) {}, func(p *DayPrice) {
		acc.add(p.Bar.GPU, p.Bar.Pricing, p.Bar.Tier, p.Bar.Provider, p.Day, p.Price, p.LastSeen)
	})
	return acc.days()
}

// SpreadsOfCloses is SpreadsOfBars over daily bars in the compact form a store
// returns them (store.DayCloses; the same bars give the same spreads): each series'
// comparable bars laid on the days as DailyPrices lays them.
func SpreadsOfCloses(series []store.SeriesCloses, from, to time.Time) []SpreadDay {
	runs, of := comparableRuns(series)
	// Each series' group (GPU and pricing kind) is looked up when its bars'
	// attributes change, and each group's tiers kept per day: no hashing of strings
	// per day price.
	type group struct{ gpu, pricing string }
	groups := map[group]int{}
	var byDay [][]*spreadTiers // per group, per day of the window
	attrs, groupOf := make([]*store.BarAttrs, len(runs)), make([]int, len(runs))
	days := 0
	acc := newSpreadAcc(WeightOffer)
	layDays(runs, func(n int) string { return of[n].Provider },
		func(b *store.CloseBar) (time.Time, time.Time) { return b.Start, b.LastObservedAt }, from, to,
		func(n int) { days = n },
		func(d time.Time, day, n, i int, seen time.Time) {
			b := &runs[n][i]
			if b.Attrs != attrs[n] {
				k := group{b.Attrs.GPU, of[n].Pricing}
				g, ok := groups[k]
				if !ok {
					g = len(byDay)
					groups[k], byDay = g, append(byDay, make([]*spreadTiers, days))
				}
				attrs[n], groupOf[n] = b.Attrs, g
			}
			t := byDay[groupOf[n]][day]
			if t == nil {
				t = acc.tiers(b.Attrs.GPU, of[n].Pricing, d)
				byDay[groupOf[n]][day] = t
			}
			t.add(b.Attrs.Tier, of[n].Provider, b.Close, d, seen)
		})
	return acc.days()
}

// spreadKey and spreadTiers accumulate Spreads: each tier's day prices per GPU,
// pricing kind and day.
type (
	spreadKey struct {
		gpu, pricing string
		day          int64
	}
	spreadTiers struct {
		h, s, m    []float64
		hp, sp, mp []string // the provider of each price of h, s, m, when weighted by provider
		providers  bool     // hp, sp and mp are kept
		carried    int
		seen       time.Time
	}
	spreadAcc struct {
		tiersOf map[spreadKey]*spreadTiers
		weight  string
	}
)

// newSpreadAcc accumulates spreads weighted as weight says: each price's provider
// is kept only when weight is WeightProvider (with WeightOffer, a tier's median is
// of its prices alone).
func newSpreadAcc(weight string) spreadAcc {
	return spreadAcc{tiersOf: map[spreadKey]*spreadTiers{}, weight: weight}
}

// add counts the day price of a series of gpu, pricing kind, tier and provider on
// day, last seen at seen.
func (acc spreadAcc) add(gpu, pricing, tier, provider string, day time.Time, price float64, seen time.Time) {
	acc.tiers(gpu, pricing, day).add(tier, provider, price, day, seen)
}

// tiers returns the day prices of gpu and pricing kind on day, by tier.
func (acc spreadAcc) tiers(gpu, pricing string, day time.Time) *spreadTiers {
	k := spreadKey{gpu, pricing, day.Unix()}
	t := acc.tiersOf[k]
	if t == nil {
		t = &spreadTiers{providers: acc.weight == WeightProvider}
		acc.tiersOf[k] = t
	}
	return t
}

// add counts a day price on day of a series of tier and provider last seen at seen.
func (t *spreadTiers) add(tier, provider string, price float64, day, seen time.Time) {
	var xs *[]float64
	var provs *[]string
	switch tier {
	case schemas.TierHyperscaler:
		xs, provs = &t.h, &t.hp
	case schemas.TierSpecialist:
		xs, provs = &t.s, &t.sp
	case schemas.TierMarketplace:
		xs, provs = &t.m, &t.mp
	default:
		return
	}
	*xs = append(*xs, price)
	if t.providers {
		*provs = append(*provs, provider)
	}
	if Carried(day, seen) {
		t.carried++
	}
	if seen.After(t.seen) {
		t.seen = seen
	}
}

// Carried reports whether a price in force on day is carried past its series' last
// sighting seen: seen before the day began (an unknown sighting, zero, is not).
func Carried(day, seen time.Time) bool { return !seen.IsZero() && seen.Before(day) }

// days are the accumulated days' spreads, each tier's median of its cross-section
// weighted as the accumulator's weight says.
func (acc spreadAcc) days() []SpreadDay {
	med := func(xs []float64, provs []string) float64 {
		if acc.weight == WeightProvider && len(xs) > 0 {
			return percentileSorted(CrossSection(xs, provs, acc.weight), .5)
		}
		return medianInPlace(xs)
	}
	out := make([]SpreadDay, 0, len(acc.tiersOf))
	for k, t := range acc.tiersOf {
		d := SpreadDay{GPU: k.gpu, Pricing: k.pricing, Day: time.Unix(k.day, 0).UTC(),
			Hyperscaler: Opt(Round(med(t.h, t.hp), 9)), Specialist: Opt(Round(med(t.s, t.sp), 9)),
			Marketplace:  Opt(Round(med(t.m, t.mp), 9)),
			NHyperscaler: len(t.h), NSpecialist: len(t.s), NMarketplace: len(t.m), Carried: t.carried, LastSeen: t.seen.UTC()}
		if d.Hyperscaler != nil && d.Specialist != nil && *d.Hyperscaler > 0 && *d.Specialist > 0 {
			r := *d.Hyperscaler / *d.Specialist
			d.Ratio, d.PremiumPct = Opt(Round(r, 12)), Opt(Round((r-1)*100, 9)) // no float noise
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.GPU != b.GPU {
			return a.GPU < b.GPU
		}
		if a.Pricing != b.Pricing {
			return a.Pricing < b.Pricing
		}
		return a.Day.Before(b.Day)
	})
	return out
}

// SummariseSpreads reports, per GPU and pricing kind, how the ratio moved.
func SummariseSpreads(days []SpreadDay) []SpreadSummary {
	var out []SpreadSummary
	for _, d := range days {
		if d.Ratio == nil {
			continue
		}
		ratio := *d.Ratio
		n := len(out)
		if n == 0 || out[n-1].GPU != d.GPU || out[n-1].Pricing != d.Pricing {
			out = append(out, SpreadSummary{GPU: d.GPU, Pricing: d.Pricing, First: d.Day, FirstRatio: ratio,
				MinRatio: math.Inf(1), MaxRatio: math.Inf(-1)})
			n++
		}
		s := &out[n-1]
		s.Last, s.LastRatio = d.Day, ratio
		s.MinRatio, s.MaxRatio = math.Min(s.MinRatio, ratio), math.Max(s.MaxRatio, ratio)
		s.Days++
		if d.Carried > 0 && d.Carried >= d.NHyperscaler+d.NSpecialist+d.NMarketplace {
			s.CarriedDays++
			if seen := d.LastSeen.UTC().Format(time.DateOnly); !d.LastSeen.IsZero() && seen > s.LastSeen {
				s.LastSeen = seen
			}
		}
	}
	for i := range out {
		s := &out[i]
		s.RatioChange = Round(s.LastRatio-s.FirstRatio, 12)
		s.PremiumMoved = Round(s.RatioChange*100, 9)
		s.FirstDay, s.LastDay = s.First.Format(time.DateOnly), s.Last.Format(time.DateOnly)
	}
	return out
}

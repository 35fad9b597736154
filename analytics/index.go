package analytics

import (
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// IndexMethod names the method of the reference index; it changes whenever the
// method does, and every index row carries it.
const IndexMethod = "gpuprice-index/2: day prices (last daily close in force; a series its provider no longer lists, " +
	"seen more than 24h before the provider's newest sighting, ends the day after its last sighting), per GPU × pricing " +
	"× day × group; drop values beyond 2.5 sample SD from the mean (n ≥ 3), median of the rest"

// IndexVersion is the short form of IndexMethod. Version 1 carried every series'
// last close forward without end, withdrawn offers included.
const IndexVersion = "gpuprice-index/2"

// Index groups: hyperscalers are reported apart from everyone else.
const (
	GroupHyperscaler = "hyperscaler"
	GroupOthers      = "others"
)

// IndexPoint is the reference price of one GPU, pricing kind and group on one day.
type IndexPoint struct {
	GPU     string    `json:"gpu"`
	Pricing string    `json:"pricing"`
	Group   string    `json:"group"`
	Day     time.Time `json:"day"`
	Price   float64   `json:"price_usd_gpu_hour"`
	Offers  int       `json:"offers"`
	Dropped int       `json:"dropped"`
	Method  string    `json:"method"`
	// Chained is the matched-sample chained index of the same line on the same day
	// ($/GPU-hour, anchored at the line's first day's median): moved only by series
	// priced on both this day and the one before (Matched of them), never by offers
	// entering or leaving the mix. ChainedMethod is its method version.
	Chained       float64 `json:"chained_usd_gpu_hour"`
	Matched       int     `json:"chained_matched"`
	ChainedMethod string  `json:"chained_method"`
	// Carried is how many of the day's offers are carried past their last sighting
	// (last seen before the day), LastSeen the latest sighting among them (zero when
	// unknown): a day whose offers are all carried was not observed (Carried ==
	// Offers), its price repeats an earlier sighting's.
	Carried  int       `json:"carried"`
	LastSeen time.Time `json:"last_seen"`
}

// Index computes the daily reference prices of the day prices, sorted by GPU,
// pricing, group, day: each offer once (IndexWeighted with WeightOffer).
func Index(prices []DayPrice) []IndexPoint { return IndexWeighted(prices, WeightOffer) }

// IndexWeighted is Index with each day's cross-section weighted as weight says:
// WeightProvider takes the trimmed median of the providers' medians (Offers still
// counts the offers). The chained index is of the offers either way.
func IndexWeighted(prices []DayPrice, weight string) []IndexPoint {
	type key struct {
		gpu, pricing, group string
		day                 int64
	}
	acc := map[key][]float64{}
	provs := map[key][]string{}
	type sighting struct {
		carried int
		seen    time.Time
	}
	seen := map[key]*sighting{}
	for _, p := range prices {
		g := GroupOthers
		if p.Bar.Tier == schemas.TierHyperscaler {
			g = GroupHyperscaler
		}
		k := key{p.Bar.GPU, p.Bar.Pricing, g, p.Day.Unix()}
		acc[k] = append(acc[k], p.Price)
		provs[k] = append(provs[k], p.Bar.Provider)
		sg := seen[k]
		if sg == nil {
			sg = &sighting{}
			seen[k] = sg
		}
		if Carried(p.Day, p.LastSeen) {
			sg.carried++
		}
		if p.LastSeen.After(sg.seen) {
			sg.seen = p.LastSeen
		}
	}
	ch := chained(prices)
	out := make([]IndexPoint, 0, len(acc))
	for k, v := range acc {
		m, dropped := TrimmedMedian(v)
		if weight == WeightProvider {
			m, dropped = TrimmedMedian(CrossSection(v, provs[k], weight))
		}
		c := ch[indexKey{k.gpu, k.pricing, k.group}][k.day]
		out = append(out, IndexPoint{GPU: k.gpu, Pricing: k.pricing, Group: k.group, Day: time.Unix(k.day, 0).UTC(),
			Price: Round(m, 9), Offers: len(v), Dropped: dropped, Method: IndexVersion,
			Chained: Round(c.level, 6), Matched: c.matched, ChainedMethod: ChainedVersion,
			Carried: seen[k].carried, LastSeen: seen[k].seen.UTC()})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.GPU != b.GPU {
			return a.GPU < b.GPU
		}
		if a.Pricing != b.Pricing {
			return a.Pricing < b.Pricing
		}
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.Day.Before(b.Day)
	})
	return out
}

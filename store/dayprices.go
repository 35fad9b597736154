package store

import (
	"context"
	"slices"
	"time"
)

// SpreadDay is the tier spread of one GPU and pricing kind on one day
// (analytics.Spreads; the definitions are in docs/analytics.md).
type SpreadDay struct {
	GPU     string    `json:"gpu"`
	Pricing string    `json:"pricing"`
	Day     time.Time `json:"day"`
	// Medians of the day's prices per GPU-hour of each tier's series (nil when the
	// tier has none), and how many series each took.
	Hyperscaler  *float64 `json:"hyperscaler"`
	Specialist   *float64 `json:"specialist"`
	Marketplace  *float64 `json:"marketplace"`
	NHyperscaler int      `json:"n_hyperscaler"`
	NSpecialist  int      `json:"n_specialist"`
	NMarketplace int      `json:"n_marketplace"`
	// Ratio is Hyperscaler / Specialist and PremiumPct (Ratio − 1) × 100; both nil
	// when either tier has no price that day.
	Ratio      *float64 `json:"ratio"`
	PremiumPct *float64 `json:"premium_pct"`
	// Carried is how many of the day's prices (of the three tiers) are carried past
	// their series' last sighting (last seen before the day), and LastSeen the latest
	// sighting among them (zero when unknown): a day whose prices are all carried was
	// not observed, its figures repeat an earlier sighting's.
	Carried  int       `json:"carried"`
	LastSeen time.Time `json:"last_seen"`
}

// HistoryStats is what a buyer brings to a negotiation, for one provider or for all
// ("*"), over the day prices of one GPU and pricing kind in a window
// (analytics.HistoryOf).
type HistoryStats struct {
	Provider string `json:"provider"`
	Series   int    `json:"series"`
	Samples  int    `json:"samples"` // series-days: the days' cross-sections' sizes summed
	// Days is how many days of the window have a cross-section (offers in force).
	Days int `json:"days"`
	// Percentiles (type 7) of the market at a time (analytics.MarketMethod): each
	// the median over the days of that day's percentile, of the offers in force then
	// (each once, or each provider once: History.Weight), never of pooled
	// series-days; the minimum is the lowest price of any day. Every figure of
	// HistoryStats is nil when it is undefined (no samples; a trend needs two days;
	// a discount needs both prices).
	P10 *float64 `json:"p10"`
	P25 *float64 `json:"p25"`
	P50 *float64 `json:"p50"`
	P75 *float64 `json:"p75"`
	P90 *float64 `json:"p90"`
	Min *float64 `json:"min"`
	// Latest is the lowest price in force on the window's last day among the
	// series; LatestMedian their median.
	Latest       *float64 `json:"latest"`
	LatestMedian *float64 `json:"latest_median"`
	// TrendPctPer30d is the change of the same series (matched samples, chained day
	// to day: analytics.MatchedTrend) in percent per 30 days, and TrendPer30d that
	// percent of the mean daily median, in $/GPU-hour per 30 days. Series entering
	// or leaving the sample never move it: SeriesEntered and SeriesLeft count them
	// (on the last day and not the first, and the other way round).
	TrendPer30d    *float64 `json:"trend_per_30d"`
	TrendPctPer30d *float64 `json:"trend_pct_per_30d"`
	SeriesEntered  int      `json:"series_entered"`
	SeriesLeft     int      `json:"series_left"`
	// Composition of the window's market, so that a window figure is compared like
	// for like: FirstDayOffers and LastDayOffers are the offers in force on the
	// first and the last day with any, MatchedOffers those in force on both (the
	// series neither entering nor leaving). MatchedP50 is the median over the days
	// of each day's median of the matched offers (weighted as History.Weight says)
	// and MatchedLatestMedian their median on the last day: what the same offers
	// cost over the window and at its end, which offers entering or leaving never
	// move. Both nil without matched offers.
	FirstDayOffers      int      `json:"first_day_offers"`
	LastDayOffers       int      `json:"last_day_offers"`
	MatchedOffers       int      `json:"matched_offers"`
	MatchedP50          *float64 `json:"matched_p50"`
	MatchedLatestMedian *float64 `json:"matched_latest_median"`
	// ReservedDiscountPct is 1 − median(latest reserved_1y) / median(latest
	// on_demand) of the same GPU at the same providers, in percent; nil when either
	// is missing.
	ReservedDiscountPct *float64 `json:"reserved_discount_pct"`
}

// Offer is one series' price in force on the window's last day.
type Offer struct {
	Provider string    `json:"provider"`
	SKU      string    `json:"sku"`
	Region   string    `json:"region"`
	Zone     string    `json:"zone"`
	Pricing  string    `json:"pricing"`
	Tier     string    `json:"tier"`
	Price    float64   `json:"price_usd_gpu_hour"`
	Since    time.Time `json:"since"` // start of the bar the price comes from
	// LastSeen is when a collection last saw the offer (zero when unknown).
	LastSeen time.Time `json:"last_seen"`
}

// History is the negotiation report of one GPU and pricing kind.
type History struct {
	GPU     string `json:"gpu"`
	Pricing string `json:"pricing"`
	// Weight is how each day's cross-section counts its offers: "offer" (each
	// once) or "provider" (each provider once, its offers' median); Method the
	// definition of the market at a time the figures use (analytics.MarketMethod).
	Weight    string         `json:"weight"`
	Method    string         `json:"method"`
	From      time.Time      `json:"from"`
	To        time.Time      `json:"to"`
	Overall   HistoryStats   `json:"overall"`
	Providers []HistoryStats `json:"providers"`
	Cheapest  []Offer        `json:"cheapest"`
	// Daily is the price of each day of the window: of all series (Group "all"),
	// of each provider's and of each tier's, for charts of the market over time.
	Daily []HistoryDay `json:"daily"`
}

// HistoryDay is one day's prices of one group of series: their median, the
// p10 and p90 (type 7) and the lowest, over the series priced that day.
type HistoryDay struct {
	Day    time.Time `json:"day"`
	Group  string    `json:"group"` // all, provider or tier
	Name   string    `json:"name"`  // "*", the provider's or the tier's name
	Series int       `json:"series"`
	Median float64   `json:"median"`
	P10    float64   `json:"p10"`
	P90    float64   `json:"p90"`
	Min    float64   `json:"min"`
	// Carried and LastSeen are as SpreadDay's: of the day's prices of the group,
	// how many are carried past their last sighting, and the latest sighting.
	Carried  int       `json:"carried"`
	LastSeen time.Time `json:"last_seen"`
}

// DayPriceStats is the optional ability of a store to compute, where its daily
// bars are, the tier spreads built on day prices (analytics.DailyPrices: each
// series' comparable price in force per UTC day, withdrawn series ending) and to
// return only them. It reads the daily bars f selects with the bar in force before
// the window (BarQuery{Filter: f, Width: Daily, CarryIn: true}, f.Since and f.Until
// the window [from, to) as DailyPrices takes it).
//
// Spreads returns what analytics.Spreads computes from those day prices, ordered
// by GPU, pricing and day.
type DayPriceStats interface {
	Spreads(ctx context.Context, f Filter) ([]SpreadDay, error)
}

// DayCloses is the optional ability of a store to return daily bars in the compact
// form day prices read (analytics.SpreadsOf): of each bar only its start, close,
// last sighting and attributes, the series' names once. It returns the bars Bars
// returns for BarQuery{Filter: f, Width: Daily, CarryIn: true}, by series in
// Bars' order, each series' bars by start (the carried-in bar first).
type DayCloses interface {
	DayCloses(ctx context.Context, f Filter) ([]SeriesCloses, error)
}

// SeriesCloses is the daily bars of one series as DayCloses returns them.
type SeriesCloses struct {
	Provider, SKU, Region, Zone, Pricing string
	Bars                                 []CloseBar
}

// CloseBar is a daily bar as day prices read it: the fields of Bar of the same
// names, its attributes shared with the other bars that have them.
type CloseBar struct {
	Start          time.Time
	Close          float64
	LastObservedAt time.Time
	Attrs          *BarAttrs
}

// BarAttrs are a bar's attributes beside its series (Bar's fields of the same names).
type BarAttrs struct {
	GPU, Tier, Interconnect, PriceScope, PriceBasis string
}

// ClosesOfBars is bars (by series then start, as Bars returns them) in the form
// DayCloses returns.
func ClosesOfBars(bars []Bar) []SeriesCloses {
	var out []SeriesCloses
	closes := make([]CloseBar, len(bars)) // every series' bars, one allocation
	for i, b := range bars {
		n := len(out)
		if n == 0 || out[n-1].Provider != b.Provider || out[n-1].SKU != b.SKU || out[n-1].Region != b.Region ||
			out[n-1].Zone != b.Zone || out[n-1].Pricing != b.Pricing {
			out = append(out, SeriesCloses{Provider: b.Provider, SKU: b.SKU, Region: b.Region, Zone: b.Zone,
				Pricing: b.Pricing, Bars: closes[i:i:len(closes)]})
			n++
		}
		s := &out[n-1]
		s.Bars = append(s.Bars, CloseBar{Start: b.Start, Close: b.Close, LastObservedAt: b.LastObservedAt,
			Attrs: &BarAttrs{GPU: b.GPU, Tier: b.Tier, Interconnect: b.Interconnect, PriceScope: b.PriceScope,
				PriceBasis: b.PriceBasis}})
	}
	for i := range out {
		out[i].Bars = slices.Clip(out[i].Bars) // an append must not reach the next series'
	}
	return out
}

// Bar is bar i of s back as a Bar: its series, start, close, last sighting and
// attributes (its open, high, low, mean and count, which the compact form does not
// keep, are zero).
func (s *SeriesCloses) Bar(i int) Bar {
	c := &s.Bars[i]
	return Bar{Provider: s.Provider, SKU: s.SKU, Region: s.Region, Zone: s.Zone, Pricing: s.Pricing, Start: c.Start,
		GPU: c.Attrs.GPU, Tier: c.Attrs.Tier, Interconnect: c.Attrs.Interconnect, PriceScope: c.Attrs.PriceScope,
		PriceBasis: c.Attrs.PriceBasis, Close: c.Close, LastObservedAt: c.LastObservedAt}
}

// BarsOfCloses is compact daily bars back as bars, in their order (SeriesCloses.Bar).
// What day prices read of BarsOfCloses(ClosesOfBars(bars)) is what they read of bars.
func BarsOfCloses(series []SeriesCloses) []Bar {
	n := 0
	for _, s := range series {
		n += len(s.Bars)
	}
	out := make([]Bar, 0, n)
	for i := range series {
		for j := range series[i].Bars {
			out = append(out, series[i].Bar(j))
		}
	}
	return out
}

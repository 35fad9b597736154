package store

import (
	"context"
	"fmt"
	"time"
)

// Bar widths the stores keep.
const (
	Hourly = time.Hour
	Daily  = 24 * time.Hour
)

// Widths are the bar widths every Rollup builds.
var Widths = []time.Duration{Hourly, Daily}

// Bar summarises one series over one bar (an hour or a UTC day) from its
// deduplicated observations: the first, highest, lowest and last price per GPU-hour
// by effective_at, their plain mean and their number, and the latest observed_at
// among them. A bar exists only where the series has at least one observation.
type Bar struct {
	Provider     string `json:"provider"`
	SKU          string `json:"sku"`
	Region       string `json:"region"`
	Zone         string `json:"zone"`
	Pricing      string `json:"pricing"`
	GPU          string `json:"gpu"`
	Tier         string `json:"tier"`
	Interconnect string `json:"interconnect"`
	// PriceScope and PriceBasis are those of the bar's last observation (see
	// schemas.Observation); "" in bars rolled up before schema version 5.
	PriceScope string    `json:"price_scope"`
	PriceBasis string    `json:"price_basis"`
	Start      time.Time `json:"start"`
	Open       float64   `json:"open"`
	High       float64   `json:"high"`
	Low        float64   `json:"low"`
	Close      float64   `json:"close"`
	Mean       float64   `json:"mean"`
	Count      int64     `json:"count"`
	// LastObservedAt is the latest observed_at of the bar's observations (each
	// identity's last write): when a collection last saw any of them. A re-collected
	// identity keeps its effective_at, so a price published once, whose only bar is
	// old, has a fresh LastObservedAt once that bar is rebuilt. Zero when unknown: a
	// bar rolled up before the stores kept it (schema version 4).
	LastObservedAt time.Time `json:"last_observed_at"`
}

// SeriesKey identifies the series of a bar, as schemas.Observation.SeriesKey does.
func (b Bar) SeriesKey() string {
	return b.Provider + "|" + b.SKU + "|" + b.Region + "|" + b.Zone + "|" + b.Pricing
}

// BarQuery selects bars of one width. Filter's Since and Until bound bar_start; its
// other fields select series as they do observations. With CarryIn, each series
// matching the filter that has a bar before Since also yields its last such bar,
// so that a price in force when the window opened is known.
type BarQuery struct {
	Filter
	Width   time.Duration
	CarryIn bool
}

// Rollups is the optional ability of a store to keep bars. Both backends have it.
//
// Rollup recomputes, from the deduplicated observations, every bar of every width
// in Widths whose UTC day meets [since, until) (zero since: from the beginning;
// zero until: to the end), replacing bars computed before. Call it after each
// write of observations with the span of their effective_at, and once over
// everything to backfill. Bars reads them, ordered by series then bar start.
type Rollups interface {
	Rollup(ctx context.Context, since, until time.Time) error
	Bars(ctx context.Context, q BarQuery) ([]Bar, error)
}

// FoldedRollups is the optional ability of a store that keeps bars to write a
// run's bars from the fold of the rows the run wrote (BarFold) instead of reading
// them back: after it, the bars of the fold's series over its span are those a
// Rollup over that span would have written. The ClickHouse store has it; a store
// without it is rolled up with Rollup.
type FoldedRollups interface {
	RollupFolded(ctx context.Context, f *BarFold) error
}

// CheckWidth reports an error for a width the stores do not keep.
func CheckWidth(w time.Duration) error {
	for _, k := range Widths {
		if w == k {
			return nil
		}
	}
	return fmt.Errorf("store: bar width %v: use 1h or 24h", w)
}

// RollupSpan returns the span of observations a Rollup(since, until) reads: since
// moved down and until moved up to whole UTC days, so that every bar it rewrites is
// computed from all its observations. Zero bounds stay zero.
func RollupSpan(since, until time.Time) (time.Time, time.Time) {
	if !since.IsZero() {
		since = since.UTC().Truncate(Daily)
	}
	if !until.IsZero() {
		u := until.UTC()
		if t := u.Truncate(Daily); t.Before(u) {
			u = t.Add(Daily)
		}
		until = u
	}
	return since, until
}

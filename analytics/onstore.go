package analytics

import (
	"context"

	"github.com/gpuprice/gpuprice/store"
)

// dayBars reads the daily bars of f with the bar in force before the window, as day
// prices read them: in their compact form when the store has one (store.DayCloses:
// of each bar its series, start, close, last sighting and attributes; the other
// figures are zero).
func dayBars(ctx context.Context, r store.Rollups, f store.Filter) ([]store.Bar, error) {
	if c, ok := r.(store.DayCloses); ok {
		series, err := c.DayCloses(ctx, f)
		if err != nil {
			return nil, err
		}
		return store.BarsOfCloses(series), nil
	}
	return r.Bars(ctx, store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
}

// SpreadsOf returns the daily tier spreads of the series f selects over the days
// [f.Since, f.Until), as Spreads(DailyPrices(bars, f.Since, f.Until)) computes
// them from the daily bars with carry-in: on the store when it can
// (store.DayPriceStats: only the spreads are read), else from the bars read, in
// their compact form when the store has one (store.DayCloses: what day prices
// need of each bar, not every figure).
func SpreadsOf(ctx context.Context, r store.Rollups, f store.Filter) ([]SpreadDay, error) {
	if s, ok := r.(store.DayPriceStats); ok && !f.Since.IsZero() && !f.Until.IsZero() {
		return s.Spreads(ctx, f)
	}
	if c, ok := r.(store.DayCloses); ok {
		series, err := c.DayCloses(ctx, f)
		if err != nil {
			return nil, err
		}
		return SpreadsOfCloses(series, f.Since, f.Until), nil
	}
	bars, err := dayBars(ctx, r, f)
	if err != nil {
		return nil, err
	}
	return SpreadsOfBars(bars, f.Since, f.Until), nil
}

// HistoryFor returns the negotiation report of one GPU and pricing kind over the
// days [f.Since, f.Until), as HistoryOf(gpu, pricing, DailyPrices(bars, f.Since,
// f.Until), f.Since, f.Until, cheapest) computes it from the daily bars f selects
// (every pricing kind: f.Pricing should be empty), in their compact form when the
// store has one (dayBars).
func HistoryFor(ctx context.Context, r store.Rollups, f store.Filter, gpu, pricing string, cheapest int) (History,
	error) {
	bars, err := dayBars(ctx, r, f)
	if err != nil {
		return History{}, err
	}
	return HistoryOf(gpu, pricing, DailyPrices(bars, f.Since, f.Until), f.Since, f.Until, cheapest), nil
}

package analytics

import (
	"context"

	"github.com/gpuprice/gpuprice/store"
)

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
	bars, err := r.Bars(ctx, store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
	if err != nil {
		return nil, err
	}
	return SpreadsOfBars(bars, f.Since, f.Until), nil
}

// HistoryFor returns the negotiation report of one GPU and pricing kind over the
// days [f.Since, f.Until), as HistoryOf(gpu, pricing, DailyPrices(bars, f.Since,
// f.Until), f.Since, f.Until, cheapest) computes it from the daily bars f selects
// (every pricing kind: f.Pricing should be empty), with the bar in force before the
// window: in their compact form when the store has one (store.DayCloses: of each
// bar its series, start, close, last sighting and attributes; eachCloseDayPrice).
func HistoryFor(ctx context.Context, r store.Rollups, f store.Filter, gpu, pricing string, cheapest int) (History,
	error) {
	if c, ok := r.(store.DayCloses); ok {
		series, err := c.DayCloses(ctx, f)
		if err != nil {
			return History{}, err
		}
		// HistoryOf of the day prices, each read as it is laid.
		return historyWeighted(gpu, pricing, func(yield func(*DayPrice)) {
			eachCloseDayPrice(series, f.Since, f.Until, func(int) {}, yield)
		}, f.Since, f.Until, cheapest, WeightOffer), nil
	}
	bars, err := r.Bars(ctx, store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
	if err != nil {
		return History{}, err
	}
	return HistoryOf(gpu, pricing, DailyPrices(bars, f.Since, f.Until), f.Since, f.Until, cheapest), nil
}

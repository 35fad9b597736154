package query

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/store"
)

// MovesQuery selects the series whose moves Reader.Moves computes over the window
// of Since ending At.
type MovesQuery struct {
	Filter
	Since time.Duration
	At    time.Time
}

// MoveSource is the optional ability of a Source to compute moves: the Reader over
// a store has it (the digest's largest spot moves); the API client does not.
type MoveSource interface {
	Moves(ctx context.Context, q MovesQuery) (Result[[]analytics.SeriesMove], error)
}

var _ MoveSource = (*Reader)(nil)

// Moves is each series' move over the window from the price in force when it
// opened (analytics.SeriesMoveOf over hourly bars with the bar carried in from
// before it), as the alerts' spot_move computes it; the largest move, up or down,
// first.
func (r *Reader) Moves(ctx context.Context, q MovesQuery) (Result[[]analytics.SeriesMove], error) {
	var res Result[[]analytics.SeriesMove]
	sel, err := r.Resolve(ctx, q.Filter)
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	ro, err := r.rollups()
	if err != nil {
		return res, err
	}
	f := sel.Filter
	since := q.At.Add(-q.Since)
	f.Since, f.Until = since, q.At
	bars, err := ro.Bars(ctx, store.BarQuery{Filter: f, Width: store.Hourly, CarryIn: true})
	if err != nil {
		return res, err
	}
	moves := []analytics.SeriesMove{}
	for _, s := range analytics.SplitSeries(sel.KeepBars(bars)) {
		if m, ok := analytics.SeriesMoveOf(s, store.Hourly, since, q.At); ok {
			moves = append(moves, m)
		}
	}
	sort.SliceStable(moves, func(i, j int) bool { return math.Abs(moves[i].MovePct) > math.Abs(moves[j].MovePct) })
	res.Data = moves
	if res.Recorded, err = r.recorded(ctx, f); err != nil {
		return res, err
	}
	return res, nil
}

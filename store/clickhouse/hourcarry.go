package clickhouse

import (
	"context"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// hourlyCarry is the bar carried into each series of an hourly bar query (what
// carryBars finds over all history before q.Since) without reading all history:
// the latest bar before the window that matches q lies in the days before it for
// a series collected then (the bars of [q.Since − carryLookback, q.Since) are
// read first); for a series that stopped before those days, in or after the day
// of its last daily bar (day_series), so the bars from the earliest such day are
// read for those series alone; only a series found in neither (bars on both
// sides of a longer gap, or whose last bars are of another GPU or tier than q's)
// has its history read whole, alone. A series is carried in only if its first
// bar is before the window and some bar of it had q's GPU and tier, as with the
// daily bars (dailyBars). The answer is carryBars' by construction: a query
// bounded below finds a series' latest matching bar whenever it finds any.
//
// When day_series cannot name the series (a window series missing from it, as
// while a rollup that adds the series is still writing), all history is read.
// window reads the window's bars, by series (while the days before it and the
// states are read); they are returned with the carried-in bars.
func (s *Store) hourlyCarry(
	ctx context.Context,
	q store.BarQuery,
	window func() ([]series, error),
) ([]series, map[[5]string]store.Bar, carryPaths, error) {
	var paths carryPaths
	lo := q.Since.Add(-carryLookback)
	// The window's bars, the bars of the days before it and the series' states
	// are read at once (three round trips in the time of one).
	type recentRead struct {
		carried map[[5]string]store.Bar
		err     error
	}
	type stateRead struct {
		states map[uint64]*daySeries
		ok     bool
		err    error
	}
	recentCh, stateCh := make(chan recentRead, 1), make(chan stateRead, 1)
	go func() {
		c, err := s.carryBarsFrom(ctx, q, lo, nil)
		recentCh <- recentRead{c, err}
	}()
	go func() {
		states, ok, err := s.daySeriesOf(ctx, q)
		stateCh <- stateRead{states, ok, err}
	}()
	win, werr := window()
	recent, got := <-recentCh, <-stateCh
	for _, err := range []error{werr, recent.err, got.err} {
		if err != nil {
			return nil, nil, paths, err
		}
	}
	carried, states, ok := recent.carried, got.states, got.ok
	paths.recent = len(carried)
	known := make(map[[5]string]bool, len(states))
	for _, st := range states {
		known[st.key] = true
	}
	for _, sr := range win {
		if !known[sr.key] {
			ok = false
		}
	}
	if !ok {
		paths.whole = true
		carried, err := s.carryBars(ctx, q, nil)
		return win, carried, paths, err
	}
	need, err := s.carryCandidates(ctx, q, states, func(_ uint64, st *daySeries) bool {
		_, ok := carried[st.key]
		return ok
	})
	if err != nil {
		return nil, nil, paths, err
	}
	var stopped, deep []uint64
	var from time.Time
	for _, id := range need {
		if l := states[id].last.Start; !l.IsZero() && l.Before(lo) {
			stopped = append(stopped, id)
			if from.IsZero() || l.Before(from) {
				from = l
			}
			continue
		}
		deep = append(deep, id)
	}
	if len(stopped) > 0 {
		more, err := s.carryBarsFrom(ctx, q, from, stopped)
		if err != nil {
			return nil, nil, paths, err
		}
		for _, id := range stopped {
			if b, ok := more[states[id].key]; ok {
				carried[states[id].key] = b
				paths.stopped++
			} else {
				deep = append(deep, id)
			}
		}
	}
	if len(deep) > 0 {
		more, err := s.carryBars(ctx, q, deep)
		if err != nil {
			return nil, nil, paths, err
		}
		for k, b := range more {
			carried[k] = b
		}
		paths.deep = len(more)
	}
	return win, carried, paths, nil
}

// carryPaths counts the series hourlyCarry carried in by each way (for tests):
// from the days before the window, from the days of their last daily bar, from
// their whole history; whole when all history was read for every series.
type carryPaths struct {
	recent, stopped, deep int
	whole                 bool
}

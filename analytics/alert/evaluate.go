package alert

import (
	"context"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Evaluate evaluates the rules at now with the state file at statePath, sends what
// is due and saves the state (neither when dry), and records the episodes that
// started or resolved in the store's alert history when it keeps one. The rules
// read bars from r and the latest prices of series still on offer from st.
func (e Engine) Evaluate(ctx context.Context, st store.Store, r store.Rollups, statePath string, now time.Time,
	dry bool) (Report, error) {
	state, err := LoadState(statePath)
	if err != nil {
		return Report{}, err
	}
	rep := e.Run(ctx, storeReader{st: st, r: r}, state, now, dry)
	if !dry {
		if err := state.Save(statePath); err != nil {
			return rep, err
		}
		// The history the API and the web app list: what started firing and what
		// resolved (kept in the store, so it survives the state file).
		if h, ok := st.(store.AlertHistory); ok {
			if err := RecordEpisodes(ctx, h, state, rep, now); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// storeReader reads what the rules need through the store, as the analytics
// commands do: bars from store.Rollups, latest prices of series still on offer.
type storeReader struct {
	st store.Store
	r  store.Rollups
}

func (r storeReader) Bars(ctx context.Context, q store.BarQuery) ([]store.Bar, error) {
	return r.r.Bars(ctx, q)
}

func (r storeReader) Latest(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	rows, err := r.st.Latest(ctx, f)
	return analytics.CurrentOnly(rows, analytics.StaleAfter), err
}

func (r storeReader) Runs(ctx context.Context, source string, limit int) ([]schemas.Run, error) {
	return r.st.Runs(ctx, source, limit)
}

// Signals reads the store's signals (risk_rise), when it keeps them.
func (r storeReader) Signals(ctx context.Context, q store.SignalQuery) ([]schemas.Signal, error) {
	sg, err := store.SignalsOf(r.st)
	if err != nil {
		return nil, err
	}
	return sg.Signals(ctx, q)
}

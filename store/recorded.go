package store

import (
	"context"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// RecordedCounter is the optional ability of a store to say, by row, which series an
// answer over a window reads hold rows of a recorded example (attrs origin
// "recorded", `gpuprice reparse examples/recorded`), whatever ran since: a live run
// that failed leaves them recorded.
type RecordedCounter interface {
	// RecordedSeries counts, per provider, the series matching f (f.Since and f.Until
	// the window, either open) with a recorded row in the window, or whose price is
	// carried into it from a recorded row (its newest row before f.Since is recorded;
	// with f.Since zero every row before f.Until counts). No recorded series is an
	// empty map.
	RecordedSeries(ctx context.Context, f Filter) (map[string]int, error)
}

// RecordedSeries is st's RecordedSeries when it has one, else the same count from
// the rows Each streams (every row of f before f.Until: slower, the same answer).
func RecordedSeries(ctx context.Context, st Store, f Filter) (map[string]int, error) {
	if c, ok := st.(RecordedCounter); ok {
		return c.RecordedSeries(ctx, f)
	}
	all := f
	all.Since = time.Time{}
	type carried struct {
		recorded bool
		provider string
	}
	inWindow := map[string]string{} // series key → provider
	before := map[string]carried{}  // newest row before f.Since, per series
	err := st.Each(ctx, all, func(o schemas.Observation) error {
		k := o.SeriesKey()
		if f.Since.IsZero() || !o.EffectiveAt.Before(f.Since) {
			if o.Recorded() {
				inWindow[k] = o.Provider
			}
			return nil
		}
		before[k] = carried{o.Recorded(), o.Provider} // Each orders a series' rows by effective_at
		return nil
	})
	if err != nil {
		return nil, err
	}
	for k, c := range before {
		if c.recorded {
			inWindow[k] = c.provider
		}
	}
	out := map[string]int{}
	for _, p := range inWindow {
		out[p]++
	}
	return out, nil
}

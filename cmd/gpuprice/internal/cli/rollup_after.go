package cli

import (
	"context"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// spanWriter is a store that notes the effective_at span of the observations written
// through it (a spool replay), so that their bars can be rebuilt.
type spanWriter struct {
	store.Store
	since, until time.Time
}

func (w *spanWriter) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	if err := w.Store.WriteObservations(ctx, obs); err != nil {
		return err
	}
	for _, o := range obs {
		if w.since.IsZero() || o.EffectiveAt.Before(w.since) {
			w.since = o.EffectiveAt
		}
		if end := o.EffectiveAt.Add(time.Second); end.After(w.until) {
			w.until = end
		}
	}
	return nil
}

// rollupAfter rebuilds the hourly and daily bars over the span the results wrote, so
// that analytics read bars that include them. A failure is logged: the bars are
// rebuilt by the next run over the same span, or by `gpuprice rollup`.
func (a *app) rollupAfter(ctx context.Context, st store.Store, results []ingest.Result) {
	r, ok := st.(store.Rollups)
	if !ok {
		return
	}
	var since, until time.Time
	for _, res := range results {
		if res.Since.IsZero() || res.RowsAccepted == res.Spooled {
			continue // nothing reached the store
		}
		if since.IsZero() || res.Since.Before(since) {
			since = res.Since
		}
		if res.Until.After(until) {
			until = res.Until
		}
	}
	if since.IsZero() {
		return
	}
	if err := r.Rollup(ctx, since, until); err != nil {
		a.log.Warn("rollups not rebuilt; run `gpuprice rollup`", "since", since, "until", until, "error", err.Error())
	}
}

package cli

import (
	"context"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/store"
)

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

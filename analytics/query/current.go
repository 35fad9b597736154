package query

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Current is a snapshot of the current prices: the newest observation of
// every stored series (store.Latest with no filter), read once and kept. It is
// refreshed after each collection of this server and when the store's write
// marker changes (another process collected or imported), in the background: a
// request never waits for the deduplicated latest query, except the very first.
//
// Latest answers from the snapshot when the filter has no time bounds: the series'
// newest observations whose GPU, provider, pricing kind, region and tier equal the
// filter's, in the store's order (cheapest per GPU-hour first). A series is judged
// by its newest observation, as a GPU family filter always did; the store's own
// Latest with a GPU or tier filter takes the newest observation that has that GPU
// or tier, which differs only for a series whose GPU or tier changed. Time-bounded
// filters (alerts as of a time) are read from the store.
type Current struct {
	st     store.Store
	mu     sync.RWMutex
	rows   []schemas.Observation
	marker string
	loaded bool
	flight singleflight.Group
}

// NewCurrent returns the snapshot of st's current prices, empty until the first
// Latest or Refresh.
func NewCurrent(st store.Store) *Current { return &Current{st: st} }

// Latest returns the newest observation of every series matching f (see Current).
// The slice is the caller's.
func (c *Current) Latest(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	if !f.Since.IsZero() || !f.Until.IsZero() {
		return c.st.Latest(ctx, f)
	}
	c.mu.RLock()
	rows, loaded := c.rows, c.loaded
	c.mu.RUnlock()
	if !loaded {
		if err := c.Refresh(ctx); err != nil {
			return nil, err
		}
		c.mu.RLock()
		rows = c.rows
		c.mu.RUnlock()
	}
	out := make([]schemas.Observation, 0, len(rows))
	for _, o := range rows {
		if (f.GPU == "" || o.GPU == f.GPU) && (f.Provider == "" || o.Provider == f.Provider) &&
			(f.Pricing == "" || o.Pricing == f.Pricing) && (f.Region == "" || o.Region == f.Region) &&
			(f.Tier == "" || o.Tier == f.Tier) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Refresh reads the current prices from the store again (once for every caller at
// the same time). The write marker is read first, so that a write landing during
// the read is seen by the next Changed.
func (c *Current) Refresh(ctx context.Context) error {
	_, err, _ := c.flight.Do("refresh", func() (any, error) {
		marker, _ := c.writeMarker(ctx)
		rows, err := c.st.Latest(ctx, store.Filter{})
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.rows, c.marker, c.loaded = rows, marker, true
		c.mu.Unlock()
		return nil, nil
	})
	return err
}

// Changed reports whether the store's write marker moved since the last refresh
// (always false for a store without one, or before the first refresh).
func (c *Current) Changed(ctx context.Context) bool {
	m, ok := c.writeMarker(ctx)
	if !ok {
		return false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.loaded && m != c.marker
}

func (c *Current) writeMarker(ctx context.Context) (string, bool) {
	cm, ok := c.st.(store.ChangeMarker)
	if !ok {
		return "", false
	}
	m, err := cm.WriteMarker(ctx)
	return m, err == nil
}

// Watch refreshes the snapshot, and forgets the answers computed from the old one
// (onChange), whenever the store's write marker moves, until ctx ends.
func (c *Current) Watch(ctx context.Context, every time.Duration, onChange func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, every)
		if c.Changed(qctx) {
			cancel()
			rctx, rcancel := context.WithTimeout(ctx, time.Minute)
			if err := c.Refresh(rctx); err == nil {
				onChange()
			}
			rcancel()
			continue
		}
		cancel()
	}
}

package ingest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Spooler keeps batches the store could not take, to replay them later.
type Spooler interface {
	Spool(ctx context.Context, obs []schemas.Observation) error
}

// BatchConfig sets how writes are grouped; kept apart from the writer.
type BatchConfig struct {
	Size          int           // flush when this many rows are waiting (default 5000)
	FlushInterval time.Duration // and at least this often (default 2s)
}

func (c BatchConfig) withDefaults() BatchConfig {
	if c.Size <= 0 {
		c.Size = 5000
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = 2 * time.Second
	}
	return c
}

// Batcher groups observations into batches for a store.Writer. It is fed from one
// goroutine and flushes from its own; Close flushes what is left.
type Batcher struct {
	w     store.Writer
	spool Spooler
	cfg   BatchConfig
	in    chan schemas.Observation
	done  chan struct{}

	// results, read after Close
	written int
	spooled int
	errs    []error
}

// NewBatcher starts a batcher writing to w; spool may be nil. ctx bounds the writes.
func NewBatcher(ctx context.Context, w store.Writer, spool Spooler, cfg BatchConfig) *Batcher {
	b := &Batcher{w: w, spool: spool, cfg: cfg.withDefaults(), in: make(chan schemas.Observation, 256), done: make(chan struct{})}
	go b.loop(ctx)
	return b
}

// Add queues one observation.
func (b *Batcher) Add(o schemas.Observation) { b.in <- o }

// Close flushes and stops the batcher. It returns the rows written, the rows spooled
// because the store was unavailable, and the write errors met (joined).
func (b *Batcher) Close() (written, spooled int, err error) {
	close(b.in)
	<-b.done
	return b.written, b.spooled, errors.Join(b.errs...)
}

func (b *Batcher) loop(ctx context.Context) {
	defer close(b.done)
	buf := make([]schemas.Observation, 0, b.cfg.Size)
	tick := time.NewTicker(b.cfg.FlushInterval)
	defer tick.Stop()
	flush := func() {
		if len(buf) == 0 {
			return
		}
		b.flush(ctx, buf)
		buf = make([]schemas.Observation, 0, b.cfg.Size)
	}
	for {
		select {
		case o, ok := <-b.in:
			if !ok {
				flush()
				return
			}
			buf = append(buf, o)
			if len(buf) >= b.cfg.Size {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

func (b *Batcher) flush(ctx context.Context, batch []schemas.Observation) {
	err := b.w.WriteObservations(ctx, batch)
	if err == nil {
		b.written += len(batch)
		return
	}
	if errors.Is(err, store.ErrUnavailable) && b.spool != nil {
		if serr := b.spool.Spool(ctx, batch); serr == nil {
			b.spooled += len(batch)
			return
		} else {
			err = errors.Join(err, fmt.Errorf("ingest: spooling failed: %w", serr))
		}
	}
	b.errs = append(b.errs, fmt.Errorf("ingest: writing %d rows: %w", len(batch), err))
}

package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	// Size is how many rows make a batch. 0 means the store's own size
	// (store.WriteBatchSize: ClickHouse and DuckDB each say theirs), else
	// DefaultBatchSize.
	Size          int
	FlushInterval time.Duration // and at least this often (default 2s)
}

func (c BatchConfig) withDefaults(w store.Writer) BatchConfig {
	if c.Size <= 0 {
		c.Size = store.WriteBatchSize(w, DefaultBatchSize)
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = 2 * time.Second
	}
	return c
}

// Batcher groups observations into batches for a store.Writer. It is fed from one
// goroutine; a second one groups the rows, and a third writes the batches, one at
// a time and in order, so that the next batch fills while the last one is written
// (the source never waits for the store unless two batches are ready). Close
// flushes what is left.
type Batcher struct {
	w     store.Writer
	spool Spooler
	cfg   BatchConfig
	in    chan []schemas.Observation // small runs of rows, to spare a channel send per row
	out   chan []schemas.Observation // full batches, to the writer
	done  chan struct{}

	mu      sync.Mutex
	pending []schemas.Observation // rows Add gathered, not yet sent on in

	// results, read after Close
	written int
	spooled int
	errs    []error
}

// addRun is how many rows Add gathers before it hands them on.
const addRun = 256

// NewBatcher starts a batcher writing to w; spool may be nil. ctx bounds the writes.
func NewBatcher(ctx context.Context, w store.Writer, spool Spooler, cfg BatchConfig) *Batcher {
	b := &Batcher{w: w, spool: spool, cfg: cfg.withDefaults(w), in: make(chan []schemas.Observation, 4),
		out: make(chan []schemas.Observation), done: make(chan struct{})}
	go b.loop()
	go func() {
		defer close(b.done)
		for batch := range b.out {
			b.flush(ctx, batch)
		}
	}()
	return b
}

// Add queues one observation. Rows are handed on in runs; the run is sent while
// the lock is held, so that the loop, which takes the rows left over only while
// holding it too, never takes newer rows before older ones.
func (b *Batcher) Add(o schemas.Observation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil {
		b.pending = make([]schemas.Observation, 0, addRun)
	}
	b.pending = append(b.pending, o)
	if len(b.pending) == addRun {
		b.in <- b.pending
		b.pending = nil
	}
}

// Close flushes and stops the batcher. It returns the rows written, the rows spooled
// because the store was unavailable, and the write errors met (joined).
func (b *Batcher) Close() (written, spooled int, err error) {
	b.mu.Lock()
	if len(b.pending) > 0 {
		b.in <- b.pending
		b.pending = nil
	}
	close(b.in)
	b.mu.Unlock()
	<-b.done
	return b.written, b.spooled, errors.Join(b.errs...)
}

// loop groups the runs Add sends into batches of cfg.Size rows (or what came within
// FlushInterval) and hands them to the writer.
func (b *Batcher) loop() {
	defer close(b.out)
	buf := make([]schemas.Observation, 0, b.cfg.Size)
	tick := time.NewTicker(b.cfg.FlushInterval)
	defer tick.Stop()
	add := func(run []schemas.Observation) {
		for len(run) > 0 {
			n := min(len(run), b.cfg.Size-len(buf))
			buf = append(buf, run[:n]...)
			run = run[n:]
			if len(buf) >= b.cfg.Size {
				b.out <- buf
				buf = make([]schemas.Observation, 0, b.cfg.Size)
			}
		}
	}
	flush := func() {
		if len(buf) == 0 {
			return
		}
		b.out <- buf
		buf = make([]schemas.Observation, 0, b.cfg.Size)
	}
	for {
		select {
		case run, ok := <-b.in:
			if !ok {
				flush()
				return
			}
			add(run)
		case <-tick.C:
			// Rows Add holds are taken only when it is not sending a run (then
			// more rows are coming anyway), after every run sent before them.
			if b.mu.TryLock() {
				for drained := false; !drained; {
					select {
					case run, ok := <-b.in:
						if !ok {
							drained = true
							break
						}
						add(run)
					default:
						drained = true
					}
				}
				add(b.pending)
				b.pending = nil
				b.mu.Unlock()
			}
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

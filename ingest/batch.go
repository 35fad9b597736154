package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

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
	Size int
	// Bytes bounds a batch by the memory its rows hold (RowBytes, an estimate): a
	// batch is written when it has Size rows or Bytes bytes, whichever comes first.
	// 0 means the store's own bound (store.WriteBatchBytes), else DefaultBatchBytes;
	// negative means none.
	Bytes         int
	FlushInterval time.Duration // and at least this often (default 2s)
}

// DefaultBatchBytes bounds the batches of a writer that does not say its own
// (store.BatchByteSizer).
const DefaultBatchBytes = 16 << 20

func (c BatchConfig) withDefaults(w store.Writer) BatchConfig {
	if c.Size <= 0 {
		c.Size = store.WriteBatchSize(w, DefaultBatchSize)
	}
	if c.Bytes == 0 {
		c.Bytes = store.WriteBatchBytes(w, DefaultBatchBytes)
	}
	if c.FlushInterval <= 0 {
		c.FlushInterval = 2 * time.Second
	}
	return c
}

// attrBytes is what one attrs entry holds in a Go map besides its key's and
// value's bytes: the two string headers and the map's slot overhead.
const attrBytes = 48

// RowBytes estimates the memory an observation holds while it waits in a batch: the
// struct and its attrs map, whose keys and values are counted at a typical length.
// Strings shared between rows (provider, URL, GPU…) are not counted; it is meant to
// bound batches, not to account for the heap.
func RowBytes(o *schemas.Observation) int {
	n := int(unsafe.Sizeof(*o))
	if len(o.Attrs) > 0 {
		n += 64 + len(o.Attrs)*(attrBytes+24)
	}
	return n
}

// Batcher groups observations into batches for a store.Writer. It is fed from one
// goroutine; a second one groups the rows, and a third writes the batches, one at
// a time and in order, so that the next batch fills while the last one is written
// (the source never waits for the store unless two batches are ready). Close
// flushes what is left.
//
// A batch the store refuses for a reason other than being away is split until the
// rows at fault are found: those go to the reject function (quarantine), the others
// are written. Rows the store could not take while away, or once ctx ended and a
// fresh bounded write failed too, are spooled; rows neither written, spooled nor
// quarantined are counted as lost.
type Batcher struct {
	w      store.Writer
	spool  Spooler
	reject func(o schemas.Observation, reason string)
	cfg    BatchConfig
	in     chan []schemas.Observation // small runs of rows, to spare a channel send per row
	out    chan []schemas.Observation // full batches, to the writer
	free   chan []schemas.Observation // batches written, cleared, to be filled again
	runs   chan []schemas.Observation // runs copied into a batch, cleared, for Add again
	done   chan struct{}

	mu      sync.Mutex
	pending []schemas.Observation // rows Add gathered, not yet sent on in

	// results, read after Close
	stats BatchStats
	errs  []error
}

// BatchStats counts what became of the rows given to a Batcher.
type BatchStats struct {
	Written     int // stored
	Spooled     int // kept in the spool: the store was unavailable
	Quarantined int // refused by the store on their own, handed to the reject function
	Lost        int // none of the above: neither the store nor the spool took them
}

// addRun is how many rows Add gathers before it hands them on.
const addRun = 256

// NewBatcher starts a batcher writing to w; spool may be nil. ctx bounds the writes;
// once it ends (a signal), what is left is written with a fresh context bounded by
// FinalWriteTimeout, else spooled. reject, when not nil, takes the rows the store
// refused on their own; nil counts them as lost.
func NewBatcher(
	ctx context.Context,
	w store.Writer,
	spool Spooler,
	cfg BatchConfig,
	reject func(schemas.Observation, string),
) *Batcher {
	b := &Batcher{w: w, spool: spool, reject: reject, cfg: cfg.withDefaults(w), in: make(chan []schemas.Observation, 4),
		out: make(chan []schemas.Observation), free: make(chan []schemas.Observation, 1),
		runs: make(chan []schemas.Observation, 8), done: make(chan struct{})}
	go b.loop()
	go func() {
		defer close(b.done)
		for batch := range b.out {
			b.flush(ctx, batch)
			// The batch is filled again rather than a new one grown (a store's batch is
			// tens of megabytes of Observations); cleared first, so that it keeps no
			// row's strings alive meanwhile.
			clear(batch)
			select {
			case b.free <- batch[:0]:
			default:
			}
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
		select {
		case run := <-b.runs:
			b.pending = run
		default:
			b.pending = make([]schemas.Observation, 0, addRun)
		}
	}
	b.pending = append(b.pending, o)
	if len(b.pending) == addRun {
		b.in <- b.pending
		b.pending = nil
	}
}

// Close flushes and stops the batcher. It returns what became of the rows and the
// write errors met (joined).
func (b *Batcher) Close() (BatchStats, error) {
	b.mu.Lock()
	if len(b.pending) > 0 {
		b.in <- b.pending
		b.pending = nil
	}
	close(b.in)
	b.mu.Unlock()
	<-b.done
	return b.stats, errors.Join(b.errs...)
}

// loop groups the runs Add sends into batches of cfg.Size rows (or what came within
// FlushInterval, once the writer is free) and hands them to the writer.
func (b *Batcher) loop() {
	defer close(b.out)
	// A batch grows as rows come rather than being made whole up front: a store's
	// batch (a 122,880-row group for DuckDB) is tens of megabytes of Observations, and each
	// source of a collection has its own batcher, most of them with a few hundred rows.
	// A batch the writer is done with is filled again.
	newBuf := func() []schemas.Observation {
		select {
		case buf := <-b.free:
			return buf
		default:
			return make([]schemas.Observation, 0, min(b.cfg.Size, 4*addRun))
		}
	}
	buf := newBuf()
	bufBytes := 0 // RowBytes of buf's rows
	tick := time.NewTicker(b.cfg.FlushInterval)
	defer tick.Stop()
	// due is set when FlushInterval passed while the writer was busy: the rows
	// gathered go to it as soon as it is free (with the rows that came meanwhile)
	// rather than as a small batch queued behind the one it is writing.
	due := false
	flush := func() {
		if len(buf) == 0 {
			return
		}
		b.out <- buf
		buf, bufBytes, due = newBuf(), 0, false
	}
	tryFlush := func() {
		if len(buf) == 0 {
			due = false
			return
		}
		select {
		case b.out <- buf:
			buf, bufBytes, due = newBuf(), 0, false
		default:
			due = true
		}
	}
	add := func(run []schemas.Observation) {
		for i := range run {
			buf = append(buf, run[i])
			if b.cfg.Bytes > 0 {
				bufBytes += RowBytes(&run[i])
			}
			if len(buf) >= b.cfg.Size || (b.cfg.Bytes > 0 && bufBytes >= b.cfg.Bytes) {
				flush()
			}
		}
		if due {
			tryFlush()
		}
	}
	for {
		select {
		case run, ok := <-b.in:
			if !ok {
				flush()
				return
			}
			add(run)
			// Its rows are in the batch now: the run is handed back to Add, cleared so
			// that it keeps no row's strings alive meanwhile.
			clear(run)
			select {
			case b.runs <- run[:0]:
			default:
			}
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
			tryFlush()
		}
	}
}

func (b *Batcher) flush(ctx context.Context, batch []schemas.Observation) {
	if ctx.Err() != nil {
		// Shutting down: the batch in flight is written with a fresh, bounded context
		// (else spooled below).
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), FinalWriteTimeout)
		defer cancel()
	}
	s := writeSplit(ctx, b.w, batch)
	b.stats.Written += s.stored
	for _, bad := range s.bad {
		if b.reject == nil {
			b.stats.Lost++
			b.errs = append(b.errs, fmt.Errorf("ingest: a row was refused: %s", bad.Reason))
			continue
		}
		b.reject(bad.Row, bad.Reason)
		b.stats.Quarantined++
	}
	if len(s.rest) == 0 {
		return
	}
	err := s.err
	if b.spool != nil {
		// The store is away, or the bounded write after a signal failed: keep the
		// rows for the replay.
		serr := b.spool.Spool(context.WithoutCancel(ctx), s.rest)
		if serr == nil {
			b.stats.Spooled += len(s.rest)
			return
		}
		err = errors.Join(err, fmt.Errorf("ingest: spooling failed: %w", serr))
	}
	b.stats.Lost += len(s.rest)
	b.errs = append(b.errs, fmt.Errorf("ingest: %d rows lost: %w", len(s.rest), err))
}

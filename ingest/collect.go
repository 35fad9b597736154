package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

// Sink is the part of a store a collection writes to.
type Sink interface {
	store.Writer
	WriteQuarantine(ctx context.Context, q []schemas.Quarantined) error
	WriteRun(ctx context.Context, r schemas.Run) error
}

// Job is one source to run in a collection.
type Job struct {
	Name   string
	Source scrapers.Source
}

// Result is what one job did.
type Result struct {
	schemas.Run
	Spooled  int
	Duration time.Duration
	// Span of the accepted rows' effective_at: [Since, Until). Zero when none were
	// accepted. Rollups are rebuilt over it.
	Since, Until time.Time
	fold         *store.BarFold // the bars of the rows stored, when the run folded them
}

// Collector runs sources in parallel into a sink. A failing or slow source never
// stops or delays the others: each runs in its own goroutine under its own timeout.
type Collector struct {
	Sink          Sink
	Normalizer    *Normalizer
	Batch         BatchConfig
	Spool         Spooler       // may be nil
	SourceTimeout time.Duration // per source; 0 means none beyond ctx
	Logger        *slog.Logger  // nil: no logging
	Now           func() time.Time
	SourceKind    string // when set, written on every row (imports)
	// Journal: each source's run is recorded as started before its rows are
	// written (schemas.RunStarted), so that a killed run leaves a record.
	Journal bool
	// Signals stores the signals sources' rows carry (scrapers.Info.Signals); nil:
	// they are not read.
	Signals store.Signals
	// Fold: each run folds the rows it stores into their bars (store.BarFold) for a
	// store that writes bars from them (store.FoldedRollups).
	Fold bool
}

// FinalWriteTimeout bounds what a run writes after its context ended (a signal):
// the batch in flight, its quarantined rows and its run record.
var FinalWriteTimeout = 30 * time.Second

// NewRunID returns a fresh collection run id (time-ordered, unique).
func NewRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// Collect runs every job once under one run id and returns their results in job order.
func (c *Collector) Collect(ctx context.Context, runID string, jobs []Job) []Result {
	out := make([]Result, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = c.one(ctx, runID, j)
		}()
	}
	wg.Wait()
	return out
}

// newFold is a run's fold of bars, nil when the collector folds none.
func (c *Collector) newFold() *store.BarFold {
	if !c.Fold {
		return nil
	}
	return store.NewBarFold(0)
}

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now().UTC()
	}
	return time.Now().UTC()
}

func (c *Collector) one(ctx context.Context, runID string, j Job) Result {
	log := c.Logger
	if log != nil {
		log = log.With("source", j.Name, "run_id", runID)
	}
	sctx := ctx
	if c.SourceTimeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, c.SourceTimeout)
		defer cancel()
	}
	_, expects := j.Source.(scrapers.Expecter)
	run := newStreamingRun(
		ctx,
		c.Sink,
		c.Spool,
		c.Batch,
		c.Normalizer,
		j.Name,
		runID,
		c.SourceKind,
		c.now,
		expects,
		c.journalLog(log),
		c.newFold(),
	)
	if c.Signals != nil {
		run.signalStore = c.Signals
		if info, _, ok := scrapers.Lookup(j.Name); ok && info.Signals != nil {
			run.signalsOf = info.Signals
		}
	}
	srcErr := safeCollect(sctx, j.Source, run)
	var ex *scrapers.Expectation
	if x, ok := j.Source.(scrapers.Expecter); ok {
		e := x.Expect()
		ex = &e
	}
	// The run record is written even when ctx ended (a signal): with a fresh, bounded
	// context, so that a shutdown records the run as interrupted with its counts.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), FinalWriteTimeout)
	defer cancel()
	res, err := run.finish(fctx, srcErr, ex)
	if err != nil && log != nil {
		log.Warn("run record not stored", "error", err.Error())
	}
	if log != nil {
		// A source that failed or came back degraded is something to look at (WARN);
		// an ok run is routine (INFO).
		level := slog.LevelInfo
		if res.Status == schemas.RunFailed || res.Status == schemas.RunDegraded {
			level = slog.LevelWarn
		}
		log.Log(
			ctx,
			level,
			"source collected",
			"status",
			res.Status,
			"accepted",
			res.RowsAccepted,
			"quarantined",
			res.RowsQuarantine,
			"not_offered",
			res.RowsNotOffered,
			"unknown_gpus",
			res.UnknownGPUs,
			"spooled",
			res.Spooled,
			"error",
			res.Error,
		)
	}
	return res
}

// journalLog is the logger of a run's journal: nil when the Collector keeps none.
func (c *Collector) journalLog(log *slog.Logger) *slog.Logger {
	if !c.Journal {
		return nil
	}
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// safeCollect turns a panicking source into an error so siblings go on.
func safeCollect(ctx context.Context, s scrapers.Source, e scrapers.Emitter) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("source panicked: %v", r)
		}
	}()
	return s.Collect(ctx, e)
}

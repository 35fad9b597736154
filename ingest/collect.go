package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
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
}

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

func (c *Collector) now() time.Time {
	if c.Now != nil {
		return c.Now().UTC()
	}
	return time.Now().UTC()
}

// jobEmitter normalises and routes one job's rows. Sources may emit from several
// goroutines, so it locks.
type jobEmitter struct {
	ctx        context.Context
	c          *Collector
	name       string
	runID      string
	batcher    *Batcher
	mu         sync.Mutex
	accepted   int
	unknownGPU int
	skus       map[string]bool
	minEff     time.Time
	maxEff     time.Time
	quarantine []schemas.Quarantined
	reasons    map[string]int
}

func (e *jobEmitter) Emit(o schemas.Observation) {
	o.RunID = e.runID
	if e.c.SourceKind != "" {
		o.SourceKind = e.c.SourceKind
	}
	if o.ObservedAt.IsZero() {
		o.ObservedAt = e.c.now()
	}
	n, unknown, err := e.c.Normalizer.Normalize(e.ctx, o)
	if err != nil {
		var rej *Rejection
		reason := err.Error()
		if errors.As(err, &rej) {
			reason = rej.Reason
		}
		raw, _ := json.Marshal(o)
		e.Reject(string(raw), reason)
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.accepted++
	if e.minEff.IsZero() || n.EffectiveAt.Before(e.minEff) {
		e.minEff = n.EffectiveAt
	}
	if n.EffectiveAt.After(e.maxEff) {
		e.maxEff = n.EffectiveAt
	}
	if unknown {
		e.unknownGPU++
	}
	e.skus[n.SKU] = true
	e.batcher.Add(n)
}

// Reject implements scrapers.Rejecter.
func (e *jobEmitter) Reject(raw, reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.quarantine = append(e.quarantine, schemas.Quarantined{
		QuarantinedAt: e.c.now().Truncate(time.Second), RunID: e.runID, Source: e.name, Reason: reason, Raw: raw,
	})
	e.reasons[reason]++
}

func (c *Collector) one(ctx context.Context, runID string, j Job) Result {
	log := c.Logger
	if log != nil {
		log = log.With("source", j.Name, "run_id", runID)
	}
	start := c.now()
	sctx := ctx
	if c.SourceTimeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeout(ctx, c.SourceTimeout)
		defer cancel()
	}
	e := &jobEmitter{ctx: ctx, c: c, name: j.Name, runID: runID, skus: map[string]bool{}, reasons: map[string]int{}}
	e.batcher = NewBatcher(ctx, c.Sink, c.Spool, c.Batch)
	srcErr := safeCollect(sctx, j.Source, e)
	written, spooled, werr := e.batcher.Close()

	var problems []string
	if srcErr != nil {
		problems = append(problems, srcErr.Error())
	}
	if werr != nil {
		problems = append(problems, werr.Error())
	}
	if spooled > 0 {
		problems = append(problems, fmt.Sprintf("%d rows spooled: the store was unavailable; the next run or `gpuprice spool replay` writes them", spooled))
	}
	if len(e.quarantine) > 0 {
		if err := c.Sink.WriteQuarantine(ctx, e.quarantine); err != nil {
			problems = append(problems, fmt.Sprintf("ingest: writing quarantine: %v", err))
		}
		problems = append(problems, fmt.Sprintf("%d rows quarantined: %s", len(e.quarantine), summarize(e.reasons)))
	}
	if ex, ok := j.Source.(scrapers.Expecter); ok && srcErr == nil {
		if miss := shortfall(ex.Expect(), e.accepted, e.skus); miss != "" {
			problems = append(problems, "coverage: "+miss)
		}
	}
	status := schemas.RunOK
	switch {
	case e.accepted == 0:
		status = schemas.RunFailed
		if srcErr == nil && len(e.quarantine) == 0 {
			problems = append(problems, "no rows: the source returned nothing usable")
		}
	case written+spooled == 0 && werr != nil:
		status = schemas.RunFailed
	case len(problems) > 0:
		status = schemas.RunDegraded
	}
	run := schemas.Run{
		RunID: runID, Source: j.Name, StartedAt: start.Truncate(time.Second), FinishedAt: c.now().Truncate(time.Second),
		Status: status, RowsAccepted: e.accepted, RowsQuarantine: len(e.quarantine), UnknownGPUs: e.unknownGPU,
		Error: strings.Join(problems, "; "),
	}
	if err := c.Sink.WriteRun(ctx, run); err != nil && log != nil {
		log.Warn("run record not stored", "error", err.Error())
	}
	if log != nil {
		log.Info("source collected", "status", status, "accepted", e.accepted, "quarantined", len(e.quarantine),
			"unknown_gpus", e.unknownGPU, "spooled", spooled, "error", run.Error)
	}
	res := Result{Run: run, Spooled: spooled, Duration: c.now().Sub(start)}
	if e.accepted > 0 {
		res.Since, res.Until = e.minEff, e.maxEff.Add(time.Second)
	}
	return res
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

func summarize(reasons map[string]int) string {
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if reasons[keys[i]] != reasons[keys[j]] {
			return reasons[keys[i]] > reasons[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for i, k := range keys {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more reasons", len(keys)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", k, reasons[k]))
	}
	return strings.Join(parts, ", ")
}

func shortfall(x scrapers.Expectation, accepted int, skus map[string]bool) string {
	var miss []string
	if accepted < x.MinRows {
		miss = append(miss, fmt.Sprintf("%d rows, expected at least %d", accepted, x.MinRows))
	}
	var gone []string
	for _, s := range x.SKUs {
		if !skus[s] {
			gone = append(gone, s)
		}
	}
	if len(gone) > 0 {
		miss = append(miss, "missing SKUs "+strings.Join(gone, ", "))
	}
	return strings.Join(miss, "; ")
}

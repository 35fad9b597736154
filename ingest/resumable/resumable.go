// Package resumable ingests long imports and backfills in steps that survive an
// interruption. Rows are normalised and gated like collected ones (ingest.Normalizer:
// rejects go to quarantine with the reason), but instead of the Collector's
// background batcher each step is written synchronously: Commit returns only once the
// step's rows and quarantined rows are in the store, so the caller saves its
// checkpoint after Commit and a resumed run starts exactly after the last stored step.
// The store keeps one row per observation identity, so a step written twice (an
// interruption between Commit and the checkpoint save) adds nothing. One run record
// covers the whole import.
package resumable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
)

// DefaultBatchSize is the number of rows per store write within a step.
const DefaultBatchSize = 5000

// Run is one resumable import: an emitter (scrapers.Emitter and scrapers.Rejecter)
// that buffers the current step, and the counts of its run record. It is safe for
// use from several goroutines.
type Run struct {
	Sink       ingest.Sink
	Normalizer *ingest.Normalizer
	Source     string // run record source, e.g. "backfill:aws-spot"
	RunID      string
	SourceKind string // when set, written on every row (imports)
	BatchSize  int    // rows per write (default DefaultBatchSize)
	Now        func() time.Time

	mu         sync.Mutex
	started    time.Time
	pending    []schemas.Observation
	quarantine []schemas.Quarantined
	accepted   int
	quarCount  int
	unknownGPU int
	reasons    map[string]int
	notes      []string
	minEff     time.Time // span of the committed rows' effective_at
	maxEff     time.Time
}

func (r *Run) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

func (r *Run) init() {
	if r.started.IsZero() {
		r.started = r.now()
		r.reasons = map[string]int{}
	}
}

// Emit normalises and gates o and keeps it for the next Commit.
func (r *Run) Emit(o schemas.Observation) {
	o.RunID = r.RunID
	if r.SourceKind != "" {
		o.SourceKind = r.SourceKind
	}
	if o.ObservedAt.IsZero() {
		o.ObservedAt = r.now()
	}
	n, unknown, err := r.Normalizer.Normalize(context.Background(), o)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	if err != nil {
		var rej *ingest.Rejection
		reason := err.Error()
		if errors.As(err, &rej) {
			reason = rej.Reason
		}
		raw, _ := json.Marshal(o)
		r.quarantineLocked(string(raw), reason)
		return
	}
	if unknown {
		r.unknownGPU++
	}
	r.pending = append(r.pending, n)
}

// Reject quarantines a raw record with the reason (scrapers.Rejecter).
func (r *Run) Reject(raw, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	r.quarantineLocked(raw, reason)
}

func (r *Run) quarantineLocked(raw, reason string) {
	r.quarantine = append(r.quarantine, schemas.Quarantined{
		QuarantinedAt: r.now().Truncate(time.Second), RunID: r.RunID, Source: r.Source, Reason: reason, Raw: raw,
	})
	r.reasons[reason]++
}

// Note adds a line to the run record's error text (something the user should know
// that is not a failure of the rows, such as a skipped file).
func (r *Run) Note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	r.notes = append(r.notes, s)
}

// Commit writes the rows and quarantined rows emitted since the last Commit. When it
// returns nil they are stored; on error nothing of the step counts as done and the
// caller must not advance its checkpoint.
func (r *Run) Commit(ctx context.Context) error {
	r.mu.Lock()
	r.init()
	rows, q := r.pending, r.quarantine
	r.pending, r.quarantine = nil, nil
	r.mu.Unlock()
	size := r.BatchSize
	if size <= 0 {
		size = DefaultBatchSize
	}
	for i := 0; i < len(rows); i += size {
		if err := r.Sink.WriteObservations(ctx, rows[i:min(i+size, len(rows))]); err != nil {
			return fmt.Errorf("resumable: writing observations: %w", err)
		}
	}
	if len(q) > 0 {
		if err := r.Sink.WriteQuarantine(ctx, q); err != nil {
			return fmt.Errorf("resumable: writing quarantine: %w", err)
		}
	}
	r.mu.Lock()
	r.accepted += len(rows)
	r.quarCount += len(q)
	for _, o := range rows {
		if r.minEff.IsZero() || o.EffectiveAt.Before(r.minEff) {
			r.minEff = o.EffectiveAt
		}
		if o.EffectiveAt.After(r.maxEff) {
			r.maxEff = o.EffectiveAt
		}
	}
	r.mu.Unlock()
	return nil
}

// Span returns the span [since, until) of the committed rows' effective_at (until
// is one second past the newest), zero when none was committed: what rollups must
// be rebuilt over.
func (r *Run) Span() (since, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.minEff.IsZero() {
		return time.Time{}, time.Time{}
	}
	return r.minEff, r.maxEff.Add(time.Second)
}

// Counts are what the committed steps of a run held so far.
type Counts struct {
	Accepted, Quarantined, UnknownGPU int
}

// Counts returns the counts of the committed steps.
func (r *Run) Counts() Counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Counts{Accepted: r.accepted, Quarantined: r.quarCount, UnknownGPU: r.unknownGPU}
}

// Finish writes the run record and returns it. importErr is the import's own error
// (nil when it ran to the end). A run that stored nothing new is ok when it failed in
// no way (a resumed import with nothing left to do); a run with an error is failed
// when it stored nothing and degraded otherwise. Rows emitted but not committed are
// dropped (they were not stored).
func (r *Run) Finish(ctx context.Context, importErr error) (schemas.Run, error) {
	r.mu.Lock()
	r.init()
	var problems []string
	if importErr != nil {
		problems = append(problems, importErr.Error())
	}
	problems = append(problems, r.notes...)
	if r.quarCount > 0 {
		problems = append(problems, fmt.Sprintf("%d rows quarantined: %s", r.quarCount, summarize(r.reasons)))
	}
	status := schemas.RunOK
	switch {
	case importErr != nil && r.accepted == 0:
		status = schemas.RunFailed
	case importErr != nil || r.quarCount > 0:
		status = schemas.RunDegraded
	}
	run := schemas.Run{
		RunID: r.RunID, Source: r.Source, StartedAt: r.started.Truncate(time.Second), FinishedAt: r.now().Truncate(time.Second),
		Status: status, RowsAccepted: r.accepted, RowsQuarantine: r.quarCount, UnknownGPUs: r.unknownGPU,
		Error: strings.Join(problems, "; "),
	}
	r.mu.Unlock()
	if err := r.Sink.WriteRun(ctx, run); err != nil {
		return run, fmt.Errorf("resumable: writing run record: %w", err)
	}
	return run, nil
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
	if len(keys) > 5 {
		keys = append(keys[:5], fmt.Sprintf("and %d more reasons", len(keys)-5))
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		if n, ok := reasons[k]; ok {
			parts[i] = fmt.Sprintf("%s (%d)", k, n)
		} else {
			parts[i] = k
		}
	}
	return strings.Join(parts, ", ")
}

// Checkpoint is a JSON file holding an import's progress. Save replaces it atomically
// (a temporary file renamed over it), so an interruption leaves the old or the new
// state, never a torn one.
type Checkpoint struct {
	Path string
}

// Load reads the checkpoint into v. It reports false, with v untouched, when there is
// none.
func (c Checkpoint) Load(v any) (bool, error) {
	data, err := os.ReadFile(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resumable: checkpoint: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("resumable: checkpoint %s: %w", c.Path, err)
	}
	return true, nil
}

// Save writes v as the checkpoint.
func (c Checkpoint) Save(v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	dir := filepath.Dir(c.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(c.Path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	if err := os.Rename(f.Name(), c.Path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	return nil
}

// Remove deletes the checkpoint; a missing one is not an error.
func (c Checkpoint) Remove() error {
	if err := os.Remove(c.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	return nil
}

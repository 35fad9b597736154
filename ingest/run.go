package ingest

import (
	"context"
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

// DefaultBatchSize is the number of rows per store write of a writer that does not
// say its own (store.BatchSizer).
const DefaultBatchSize = 5000

// Run is the record of one run of one source or import, from its first row to its
// run record: it is the scrapers.Emitter and scrapers.Rejecter the source or importer
// emits into, normalises and gates every row (a row failing a gate is quarantined
// with the reason, like an unreadable one), counts what it accepted, quarantined and
// could not place, keeps the effective_at span of what it stored (the bars to
// rebuild), and writes the run record. It is safe for use from several goroutines.
//
// A Run writes in one of two ways:
//   - streaming (a Collector's job): accepted rows go to a background batcher as
//     they come (spooled while the store is down), quarantined rows are written at
//     the end, and a run that accepted nothing failed;
//   - stepwise (a long import or backfill, built as a struct literal): rows wait
//     until Commit, which returns only once they and the quarantined rows are stored,
//     so the caller can checkpoint after it; rows not committed are not counted, and
//     a run with nothing new to store is ok.
type Run struct {
	Sink       Sink
	Normalizer *Normalizer
	Source     string // the run record's source, e.g. "azure" or "backfill:aws-spot"
	RunID      string
	SourceKind string // when set, written on every row (imports)
	BatchSize  int    // stepwise: rows per write (default: the store's, store.WriteBatchSize)
	Now        func() time.Time
	// QuarantineShare is the share of priced rows (accepted + quarantined) that may
	// be quarantined before the run is degraded (the source's
	// scrapers.Info.QuarantineShare); 0: any quarantined row degrades it.
	QuarantineShare float64

	ctx     context.Context // normalisation context; nil: context.Background()
	batcher *Batcher        // streaming when set
	journal *journal        // the started record, when the run keeps one (startJournal)
	fold    *store.BarFold  // the bars of the rows stored, when the store writes bars from them
	jmu     sync.Mutex      // guards journal's span and end; taken before mu

	mu         sync.Mutex
	started    time.Time
	pending    []schemas.Observation // stepwise: emitted since the last Commit
	quarantine []schemas.Quarantined // not yet written
	accepted   int                   // streaming: emitted and accepted; stepwise: committed
	quarCount  int                   // quarantined rows written (or, streaming, handed to the sink)
	suspect    int                   // of the quarantined rows, those the relative gate held as suspect
	unknownGPU int
	notOffered int             // rows the source said are not offered: counted, neither stored nor quarantined
	skus       map[string]bool // accepted SKUs, for a source's expectation (nil: not noted)
	models     map[string]bool // GPU models of the accepted rows (scrapers.Model), likewise
	reasons    map[string]int
	notes      []string
	minEff     time.Time // span of the accepted rows' effective_at
	maxEff     time.Time

	signalsOf   func(schemas.Observation) []schemas.Signal // the source's scrapers.Info.Signals
	signalStore store.Signals                              // where they go
	signals     []schemas.Signal
}

// newStreamingRun returns a Run whose accepted rows go to a batcher into sink.
// expects says whether the source has an expectation (scrapers.Expecter) to check
// the accepted SKUs against; without one they are not noted.
// With journal set, the run keeps a started record (startJournal), logging to it.
func newStreamingRun(ctx context.Context, sink Sink, spool Spooler, batch BatchConfig, norm *Normalizer,
	source, runID, kind string, now func() time.Time, expects bool, journal *slog.Logger, fold *store.BarFold) *Run {
	r := &Run{Sink: sink, Normalizer: norm, Source: source, RunID: runID, SourceKind: kind, Now: now, ctx: ctx,
		fold: fold}
	if info, _, ok := scrapers.Lookup(source); ok {
		r.QuarantineShare = info.QuarantineShare
	}
	if journal != nil {
		r.startJournal(ctx, journal)
	}
	r.batcher = NewBatcher(ctx, r.rowWriter(), spool, batch, r.refused)
	r.init()
	if !expects {
		r.skus, r.models = nil, nil
	}
	return r
}

func (r *Run) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

// init starts the run's clock and maps; callers hold r.mu (or own r alone).
func (r *Run) init() {
	if r.started.IsZero() {
		r.started = r.now()
		r.reasons = map[string]int{}
		r.skus = map[string]bool{}
		r.models = map[string]bool{}
	}
}

// EmitSignal keeps s to be stored with the run's signals (scrapers.SignalEmitter):
// a signal the source read apart from its rows. A run whose store keeps no signals
// drops it.
func (r *Run) EmitSignal(s schemas.Signal) {
	if r.signalStore == nil {
		return
	}
	r.mu.Lock()
	r.signals = append(r.signals, s)
	r.mu.Unlock()
}

// Emit normalises and gates o: accepted, it is written (streaming) or kept for the
// next Commit (stepwise); rejected, it is quarantined with the reason.
func (r *Run) Emit(o schemas.Observation) {
	o.RunID = r.RunID
	if r.SourceKind != "" {
		o.SourceKind = r.SourceKind
	}
	if o.ObservedAt.IsZero() {
		o.ObservedAt = r.now()
	}
	if r.signalsOf != nil {
		// Offered or not: a GPU out of stock is a fact of the series' history.
		sigs := r.signalsOf(o)
		r.mu.Lock()
		r.signals = append(r.signals, sigs...)
		r.mu.Unlock()
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	n, unknown, err := r.Normalizer.Normalize(ctx, o)
	if err == nil {
		if serr := Storable(n, r.now()); serr != nil {
			err = &Rejection{Reason: serr.Error()}
		}
	}
	if err != nil {
		var rej *Rejection
		reason := err.Error()
		if errors.As(err, &rej) {
			reason = rej.Reason
			if rej.NotOffered {
				r.mu.Lock()
				r.init()
				r.notOffered++
				r.mu.Unlock()
				return
			}
		}
		o.PriceNative = round(o.PriceNative) // kept as ingest stores prices: no float noise in the quarantine
		raw, _ := json.Marshal(o)
		r.Reject(string(raw), reason)
		return
	}
	r.mu.Lock()
	r.init()
	if unknown {
		r.unknownGPU++
	}
	if r.batcher == nil {
		r.pending = append(r.pending, n)
		r.mu.Unlock()
		return
	}
	r.countLocked(n)
	r.mu.Unlock()
	// Outside the lock: the batcher may be flushing, and a row the store refuses
	// comes back through refused, which takes the lock.
	r.batcher.Add(n)
}

// refused quarantines a row the store refused on its own (found by splitting the
// batch it was in), with the store's error as the reason.
func (r *Run) refused(o schemas.Observation, reason string) {
	raw, _ := json.Marshal(o)
	r.Reject(string(raw), reason)
}

// countLocked counts n as accepted.
func (r *Run) countLocked(n schemas.Observation) {
	r.accepted++
	if r.skus != nil {
		r.skus[n.SKU] = true
	}
	if r.models != nil {
		r.models[scrapers.Model(n.GPU)] = true
	}
	if r.minEff.IsZero() || n.EffectiveAt.Before(r.minEff) {
		r.minEff = n.EffectiveAt
	}
	if n.EffectiveAt.After(r.maxEff) {
		r.maxEff = n.EffectiveAt
	}
}

// Reject quarantines a raw record with the reason (scrapers.Rejecter).
func (r *Run) Reject(raw, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	q := storableQuarantine(schemas.Quarantined{
		QuarantinedAt: r.now().Truncate(time.Second), RunID: r.RunID, Source: r.Source, Reason: reason, Raw: raw,
	})
	r.quarantine = append(r.quarantine, q)
	r.reasons[q.Reason]++
	if strings.HasPrefix(reason, SuspectPrefix) {
		r.suspect++
	}
}

// Note adds a line to the run record's error text (something the user should know
// that is not a failure of the rows, such as a skipped file).
func (r *Run) Note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	r.notes = append(r.notes, s)
}

// Commit writes the rows and quarantined rows of a stepwise run emitted since the
// last Commit. When it returns nil they are stored; on error nothing of the step
// counts as done and the caller must not advance its checkpoint. A streaming run
// writes its rows as they come: Commit does nothing.
func (r *Run) Commit(ctx context.Context) error {
	r.mu.Lock()
	r.init()
	if r.batcher != nil {
		r.mu.Unlock()
		return nil
	}
	rows, q := r.pending, r.quarantine
	r.pending, r.quarantine = nil, nil
	r.mu.Unlock()
	size := r.BatchSize
	if size <= 0 {
		size = store.WriteBatchSize(r.Sink, DefaultBatchSize)
	}
	refused := map[int]bool{}
	for i := 0; i < len(rows); i += size {
		s := writeSplit(ctx, r.rowWriter(), rows[i:min(i+size, len(rows))])
		if s.err != nil {
			return fmt.Errorf("ingest: writing observations: %w", s.err)
		}
		// Rows the store refused on their own are quarantined; the others are stored.
		for _, b := range s.bad {
			raw, _ := json.Marshal(b.Row)
			q = append(q, storableQuarantine(schemas.Quarantined{QuarantinedAt: r.now().Truncate(time.Second),
				RunID: r.RunID, Source: r.Source, Reason: b.Reason, Raw: string(raw)}))
		}
		for j := i; j < min(i+size, len(rows)); j++ {
			for _, b := range s.bad {
				if sameRow(b.Row, rows[j]) {
					refused[j] = true
				}
			}
		}
	}
	if len(q) > 0 {
		if err := r.Sink.WriteQuarantine(ctx, q); err != nil {
			return fmt.Errorf("ingest: writing quarantine: %w", err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for j, o := range rows {
		if refused[j] {
			r.reasons["store refused the row"]++
			continue
		}
		r.countLocked(o)
	}
	r.quarCount += len(q)
	return nil
}

// sameRow reports whether a and b are the same observation (identity and price).
func sameRow(a, b schemas.Observation) bool {
	return a.SeriesKey() == b.SeriesKey() && a.EffectiveAt.Equal(b.EffectiveAt) && a.PriceNative == b.PriceNative &&
		a.ObservedAt.Equal(b.ObservedAt)
}

// Span returns the span [since, until) of the accepted rows' effective_at (until is
// one second past the newest), zero when none was accepted: what the bars must be
// rebuilt over.
func (r *Run) Span() (since, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.minEff.IsZero() {
		return time.Time{}, time.Time{}
	}
	return r.minEff, r.maxEff.Add(time.Second)
}

// Counts are what a run accepted (stepwise: committed), quarantined and could not
// place on the GPU catalog so far.
type Counts struct {
	Accepted, Quarantined, UnknownGPU int
}

// Counts returns the run's counts so far.
func (r *Run) Counts() Counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Counts{Accepted: r.accepted, Quarantined: r.quarCount, UnknownGPU: r.unknownGPU}
}

// Finish ends the run and writes its run record, which it returns. runErr is the
// source's or the import's own error (nil when it ran to the end). A stepwise run
// that stored nothing new is ok when it failed in no way (a resumed import with
// nothing left to do); a run with an error is failed when it stored nothing and
// degraded otherwise. Rows emitted but not committed are dropped (they were not
// stored).
func (r *Run) Finish(ctx context.Context, runErr error) (schemas.Run, error) {
	res, err := r.finish(ctx, runErr, nil)
	return res.Run, err
}

// finish closes the batcher (streaming), writes what is quarantined, decides the
// status, writes the run record and returns the result. ex, when set, is checked
// against what was accepted (a source's expected coverage).
func (r *Run) finish(ctx context.Context, runErr error, ex *scrapers.Expectation) (Result, error) {
	var st BatchStats
	var werr error
	if r.batcher != nil {
		st, werr = r.batcher.Close()
	}
	r.endJournal() // every row is written: the final record replaces the started one
	written, spooled := st.Written, st.Spooled
	r.mu.Lock()
	defer r.mu.Unlock()
	r.init()
	if r.batcher != nil {
		// Rows the store refused are quarantined (by refused), not accepted.
		r.accepted -= st.Quarantined
	} else {
		written = r.accepted
	}
	var problems []string
	if runErr != nil {
		problems = append(problems, runErr.Error())
	}
	if werr != nil {
		problems = append(problems, werr.Error())
	}
	if st.Lost > 0 {
		// First, so that a summary cut short still says it.
		problems = append(
			[]string{fmt.Sprintf("%d rows lost: neither the store nor the spool took them", st.Lost)},
			problems...)
	}
	if spooled > 0 {
		problems = append(
			problems,
			fmt.Sprintf(
				"%d rows spooled: the store was unavailable; the next run or `gpuprice spool replay` writes them",
				spooled,
			),
		)
	}
	if len(r.signals) > 0 {
		if err := r.writeSignals(ctx); err != nil {
			problems = append(problems, "signals not stored: "+err.Error())
		}
	}
	problems = append(problems, r.notes...)
	notes := len(r.notes)
	lost := st.Lost
	if r.batcher != nil && len(r.quarantine) > 0 {
		if err := r.Sink.WriteQuarantine(ctx, r.quarantine); err != nil {
			problems = append(problems, fmt.Sprintf("ingest: writing quarantine: %v", err))
			// Neither stored nor spooled: those rows are lost.
			lost += len(r.quarantine)
		} else {
			r.quarCount += len(r.quarantine)
		}
		r.quarantine = nil
	}
	tolerated := 0
	if r.quarCount > 0 {
		problems = append(problems, fmt.Sprintf("%d rows quarantined: %s", r.quarCount, summarize(r.reasons)))
		// Within the share the source's normal answers carry, the quarantined rows
		// are said but do not degrade the run.
		if float64(r.quarCount) <= r.QuarantineShare*float64(r.accepted+r.quarCount) {
			tolerated = 1
		}
	}
	if ex != nil && runErr == nil {
		if miss := shortfall(*ex, r.accepted, r.skus, r.models); miss != "" {
			problems = append(problems, "coverage: "+miss)
		}
	}
	streaming := r.batcher != nil
	interrupted := r.ctx != nil && errors.Is(r.ctx.Err(), context.Canceled)
	if interrupted {
		problems = append(problems, "interrupted: stopped before the end of its input")
	}
	status := schemas.RunOK
	switch {
	case interrupted:
		status = schemas.RunInterrupted
	case lost > 0:
		status = schemas.RunFailed
	case r.accepted == 0 && (streaming || runErr != nil):
		status = schemas.RunFailed
		if streaming && runErr == nil && r.quarCount == 0 {
			why := "no rows: the source returned nothing usable"
			if r.notOffered > 0 {
				why = fmt.Sprintf("no rows: the source said every one of its %d rows is not offered", r.notOffered)
			}
			problems = append(problems, why)
		}
	case streaming && written+spooled == 0 && werr != nil:
		status = schemas.RunFailed
	case len(problems) > notes+tolerated:
		status = schemas.RunDegraded
	}
	finished := r.now()
	run := schemas.Run{
		RunID: r.RunID, Source: r.Source, StartedAt: r.started.Truncate(time.Second),
		FinishedAt: finished.Truncate(time.Second),
		Status:     status, RowsAccepted: r.accepted, RowsQuarantine: r.quarCount, RowsSuspect: r.suspect,
		UnknownGPUs:    r.unknownGPU,
		RowsNotOffered: r.notOffered,
		RowsStored:     written, RowsSpooled: spooled, RowsLost: lost,
		Error: strings.Join(problems, "; "), Owner: store.Owner(),
	}
	res := Result{Run: run, Spooled: spooled, Duration: finished.Sub(r.started), fold: r.fold}
	if !r.minEff.IsZero() {
		res.Since, res.Until = r.minEff, r.maxEff.Add(time.Second)
		run.SpanSince, run.SpanUntil = res.Since, res.Until
	}
	if err := r.Sink.WriteRun(ctx, storableRun(run)); err != nil {
		return res, fmt.Errorf("ingest: writing run record: %w", err)
	}
	return res, nil
}

// summarize lists the quarantine reasons, most frequent first, at most five.
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

func shortfall(x scrapers.Expectation, accepted int, skus, models map[string]bool) string {
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
	var priced []string
	for _, m := range x.Models {
		if models[m] {
			priced = append(priced, m)
		}
	}
	if len(priced) < x.MinModels {
		with := "none"
		if len(priced) > 0 {
			with = "only " + strings.Join(priced, ", ")
		}
		miss = append(miss, fmt.Sprintf("%s of the major models %s priced, expected at least %d",
			with, strings.Join(x.Models, ", "), x.MinModels))
	}
	return strings.Join(miss, "; ")
}

// writeSignals stores the signals the run's rows carried (a store keeps the last
// of each series and time: a row's on-demand and spot prices may carry the same
// stock), each with the run's id and source and, without a GPU, the canonical GPU
// of its gpu_name attribute; an invalid one is quarantined. Callers hold r.mu.
func (r *Run) writeSignals(ctx context.Context) error {
	keep := r.signals[:0]
	for _, s := range r.signals {
		s = CleanSignal(s)
		s.RunID = r.RunID
		if s.Source == "" {
			s.Source = r.Source
		}
		if s.ObservedAt.IsZero() {
			s.ObservedAt = r.now()
		}
		if s.GPU == "" && s.Attrs["gpu_name"] != "" {
			s.GPU = signalGPU(s, r.Normalizer)
		}
		if err := s.Validate(); err != nil {
			r.quarantine = append(r.quarantine, storableQuarantine(signalQuarantined(s, err, r.RunID, r.Source,
				r.now().Truncate(time.Second))))
			r.reasons[err.Error()]++
			continue
		}
		keep = append(keep, s)
	}
	r.signals = nil
	if len(keep) == 0 {
		return nil
	}
	return r.signalStore.WriteSignals(ctx, keep)
}

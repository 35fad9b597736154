package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// A run's journal is its started record (schemas.RunStarted): written when the run
// begins, rewritten before every batch whose effective_at reaches past the span it
// holds (so the span covers every row the store may hold, even when the process is
// killed in the middle of the write) and at least every store.HeartbeatEvery, and
// replaced by the run's final record at its end. A run whose process was killed
// leaves it: Runner.Recover rebuilds the bars over its span and rewrites it as
// interrupted.
type journal struct {
	log          *slog.Logger
	since, until time.Time // the span the started record holds
	stop         chan struct{}
	done         chan struct{}
	ended        bool
	failed       bool // a started record could not be written (said once, in the final record)
}

// startJournal gives r a journal: it writes the run's started record and rewrites
// it every store.HeartbeatEvery until endJournal. Callers own r alone (before its
// rows are written: a streaming run's batcher is made after it).
func (r *Run) startJournal(ctx context.Context, log *slog.Logger) {
	r.mu.Lock()
	r.init()
	r.mu.Unlock()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r.journal = &journal{log: log, stop: make(chan struct{}), done: make(chan struct{})}
	r.writeStarted(ctx, time.Time{}, time.Time{})
	go func() {
		defer close(r.journal.done)
		t := time.NewTicker(store.HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-r.journal.stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				r.writeStarted(ctx, time.Time{}, time.Time{})
			}
		}
	}()
}

// endJournal stops the heartbeat: nothing writes the started record after it.
func (r *Run) endJournal() {
	r.jmu.Lock()
	j := r.journal
	if j == nil || j.ended {
		r.jmu.Unlock()
		return
	}
	j.ended = true
	close(j.stop)
	r.jmu.Unlock()
	<-j.done
}

// writeStarted writes the started record with its span widened to [since, until)
// (zero: as it is). An error other than the store being unavailable (the rows go
// to the spool then, and so does nothing of the journal) is noted in the final
// record, once.
func (r *Run) writeStarted(ctx context.Context, since, until time.Time) {
	r.jmu.Lock()
	defer r.jmu.Unlock()
	j := r.journal
	if j == nil || j.ended || ctx.Err() != nil {
		return
	}
	if !since.IsZero() && (j.since.IsZero() || since.Before(j.since)) {
		j.since = since
	}
	if until.After(j.until) {
		j.until = until
	}
	// FinishedAt is the heartbeat other processes judge (store.Gone): the wall
	// clock's time of the write, whatever the run's Now says.
	r.mu.Lock()
	rec := schemas.Run{RunID: r.RunID, Source: r.Source, StartedAt: r.started.Truncate(time.Second),
		FinishedAt: time.Now().UTC().Truncate(time.Second), Status: schemas.RunStarted, RowsAccepted: r.accepted,
		RowsQuarantine: r.quarCount, RowsSuspect: r.suspect, UnknownGPUs: r.unknownGPU, RowsNotOffered: r.notOffered,
		Owner: store.Owner(), SpanSince: j.since, SpanUntil: j.until}
	r.mu.Unlock()
	err := r.Sink.WriteRun(ctx, rec)
	if err == nil {
		j.log.Debug("run recorded as started", "rows", rec.RowsAccepted, "since", j.since, "until", j.until)
	}
	if err != nil && !errors.Is(err, store.ErrUnavailable) && !j.failed {
		j.failed = true
		r.Note(fmt.Sprintf("run journal: the started record was not written (a kill would leave no record): %v", err))
	}
}

// widen writes the started record with a span covering obs unless it covers them
// already: before obs are written.
func (r *Run) widen(ctx context.Context, obs []schemas.Observation) {
	if len(obs) == 0 {
		return
	}
	since, until := obs[0].EffectiveAt, obs[0].EffectiveAt
	for _, o := range obs[1:] {
		if o.EffectiveAt.Before(since) {
			since = o.EffectiveAt
		}
		if o.EffectiveAt.After(until) {
			until = o.EffectiveAt
		}
	}
	until = until.Add(time.Second)
	r.jmu.Lock()
	j := r.journal
	covered := j == nil || (!j.since.IsZero() && !since.Before(j.since) && !until.After(j.until))
	r.jmu.Unlock()
	if !covered {
		r.writeStarted(ctx, since, until)
	}
}

// journalWriter is the writer a journaled run's rows go through: the started
// record is widened before each write.
type journalWriter struct {
	store.Writer
	run *Run
}

// Unwrap returns the writer it wraps (for store.WriteBatchSize).
func (w journalWriter) Unwrap() store.Writer { return w.Writer }

func (w journalWriter) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	w.run.widen(ctx, obs)
	return w.Writer.WriteObservations(ctx, obs)
}

// rowWriter is where the run's rows are written: through the journal when it has
// one, and into the run's fold of bars when it keeps one.
func (r *Run) rowWriter() store.Writer {
	var w store.Writer = r.Sink
	if r.journal != nil {
		w = journalWriter{Writer: r.Sink, run: r}
	}
	if r.fold != nil {
		w = foldWriter{Writer: w, fold: r.fold}
	}
	return w
}

// foldWriter folds the rows its writer stored into the bars of their run
// (store.BarFold): rows a write refused or that went to the spool are not folded.
type foldWriter struct {
	store.Writer
	fold *store.BarFold
}

// Unwrap returns the writer it wraps (for store.WriteBatchSize).
func (w foldWriter) Unwrap() store.Writer { return w.Writer }

func (w foldWriter) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	if err := w.Writer.WriteObservations(ctx, obs); err != nil {
		return err
	}
	w.fold.Add(obs)
	return nil
}

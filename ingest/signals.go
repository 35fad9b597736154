package ingest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

// ErrNoSignals marks a store that keeps no risk or availability signals.
var ErrNoSignals = store.ErrNoSignals

// SignalImport is what ImportSignals did: the run record it wrote.
type SignalImport struct {
	Run schemas.Run
}

// ImportSignals stores signals read by source (e.g. "import:aws-spot-advisor") as
// one run: every signal gets the run's id and, when it has none, observed_at now;
// a signal without a canonical GPU gets the catalog's reading of its gpu_name
// (and gpu_memory_gb) attributes, as an observation does in normalisation;
// a signal that fails Validate and every rejected record are quarantined with the
// reason; the run record says how many were stored. The run fails when nothing
// could be stored.
func ImportSignals(ctx context.Context, st store.Store, source string, sigs []schemas.Signal,
	rejects []scrapers.Rejected, now time.Time) (SignalImport, error) {
	sg, err := store.SignalsOf(st)
	if err != nil {
		return SignalImport{}, err
	}
	now = now.UTC().Truncate(time.Second)
	runID := NewRunID(now)
	var keep []schemas.Signal
	var quar []schemas.Quarantined
	for _, s := range sigs {
		s = CleanSignal(s)
		s.RunID = runID
		if s.Source == "" {
			s.Source = source
		}
		if s.ObservedAt.IsZero() {
			s.ObservedAt = now
		}
		if s.GPU == "" && s.Attrs["gpu_name"] != "" {
			s.GPU = signalGPU(s, nil)
		}
		if err := s.Validate(); err != nil {
			quar = append(quar, signalQuarantined(s, err, runID, source, now))
			continue
		}
		keep = append(keep, s)
	}
	for _, r := range rejects {
		quar = append(quar, schemas.Quarantined{QuarantinedAt: now, RunID: runID, Source: source, Reason: r.Reason,
			Raw: r.Raw})
	}
	run := schemas.Run{RunID: runID, Source: source, StartedAt: now, Status: schemas.RunOK, Owner: store.Owner()}
	var problems []string
	if err := sg.WriteSignals(ctx, keep); err != nil {
		problems = append(problems, "writing signals: "+err.Error())
		keep = nil
	}
	if len(quar) > 0 {
		if err := st.WriteQuarantine(ctx, quar); err != nil {
			problems = append(problems, "writing quarantine: "+err.Error())
		}
		problems = append(problems, fmt.Sprintf("%d records quarantined", len(quar)))
		run.Status = schemas.RunDegraded
	}
	if len(keep) == 0 {
		run.Status = schemas.RunFailed
		problems = append(problems, "no signals stored")
	}
	run.RowsAccepted, run.RowsStored, run.RowsQuarantine = len(keep), len(keep), len(quar)
	run.FinishedAt = time.Now().UTC().Truncate(time.Second)
	if run.FinishedAt.Before(now) {
		run.FinishedAt = now
	}
	for i, p := range problems {
		if i > 0 {
			run.Error += "; "
		}
		run.Error += p
	}
	if err := st.WriteRun(ctx, storableRun(run)); err != nil {
		return SignalImport{Run: run}, fmt.Errorf("ingest: writing run record: %w", err)
	}
	if run.Status == schemas.RunFailed {
		return SignalImport{Run: run}, fmt.Errorf("ingest: %s: %s", source, run.Error)
	}
	return SignalImport{Run: run}, nil
}

// signalGPU is the canonical GPU of a signal's gpu_name and gpu_memory_gb
// attributes: by n's cached canonicaliser (a collection's, the one its rows got
// their GPU from), else by the default catalog (schemas.UnknownGPU when it cannot
// tell, or there is none).
func signalGPU(s schemas.Signal, n *Normalizer) string {
	mem, _ := strconv.ParseFloat(s.Attrs["gpu_memory_gb"], 64)
	h := schemas.Hint{Provider: s.Provider, Name: s.Attrs["gpu_name"], SKU: s.SKU, MemoryGB: mem}
	if n != nil && n.GPUs != nil {
		return n.canonicalize(h)
	}
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		return schemas.UnknownGPU
	}
	return cat.Canonicalize(h)
}

// signalQuarantined is the quarantine record of a signal that failed validation.
func signalQuarantined(s schemas.Signal, why error, runID, source string, at time.Time) schemas.Quarantined {
	return schemas.Quarantined{QuarantinedAt: at, RunID: runID, Source: source, Reason: why.Error(),
		Raw: fmt.Sprintf("%s %s %s %s %v", s.Provider, s.SKU, s.Region, s.Kind, s.Value)}
}

package ingest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// recordSink is a fake Sink whose store is down until up is set.
type recordSink struct {
	up    bool
	obs   []schemas.Observation
	quar  []schemas.Quarantined
	runs  []schemas.Run
	order []string
}

func (f *recordSink) down(what string) error {
	if f.up {
		f.order = append(f.order, what)
		return nil
	}
	return fmt.Errorf("fake: %s: %w", what, store.ErrUnavailable)
}

func (f *recordSink) WriteObservations(_ context.Context, obs []schemas.Observation) error {
	if err := f.down("obs"); err != nil {
		return err
	}
	f.obs = append(f.obs, obs...)
	return nil
}

func (f *recordSink) WriteQuarantine(_ context.Context, q []schemas.Quarantined) error {
	if err := f.down("quarantine"); err != nil {
		return err
	}
	f.quar = append(f.quar, q...)
	return nil
}

func (f *recordSink) WriteRun(_ context.Context, r schemas.Run) error {
	if err := f.down("run"); err != nil {
		return err
	}
	f.runs = append(f.runs, r)
	return nil
}

func TestSpoolingSinkKeepsQuarantineAndRunsThroughAnOutage(t *testing.T) {
	ctx := context.Background()
	sp := &DirSpool{Dir: t.TempDir()}
	fake := &recordSink{}
	sink := SpoolingSink{Sink: fake, Spool: sp}
	if err := sp.Spool(ctx, []schemas.Observation{spooled(nil)}); err != nil {
		t.Fatal(err)
	}
	if err := sink.WriteQuarantine(ctx, []schemas.Quarantined{{RunID: "r1", Source: "s", Reason: "absurd price", Raw: "{}"}}); err != nil {
		t.Fatalf("quarantine not spooled: %v", err)
	}
	if err := sink.WriteRun(ctx, schemas.Run{RunID: "r1", Source: "s", Status: schemas.RunOK, RowsAccepted: 1}); err != nil {
		t.Fatalf("run not spooled: %v", err)
	}
	st, err := sp.Status()
	if err != nil || st.Segments != 3 || st.Rows != 1 || st.Quarantine != 1 || st.Runs != 1 {
		t.Fatalf("status %+v %v", st, err)
	}
	// Still down: replay keeps everything.
	if _, err := sp.Replay(ctx, fake); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("replay while down: %v", err)
	}
	// A writer without quarantine and runs cannot take those segments.
	fake.up = true
	obsOnly := writerFunc(func([]schemas.Observation) error { return nil })
	if _, err := sp.Replay(ctx, obsOnly); err == nil {
		t.Fatal("records replayed into a writer that cannot store them")
	}
	fake.order = nil
	n, err := sp.Replay(ctx, fake)
	if err != nil || n != 0 {
		t.Fatalf("replay: %d %v", n, err)
	}
	if len(fake.quar) != 1 || fake.quar[0].Reason != "absurd price" || len(fake.runs) != 1 || fake.runs[0].RowsAccepted != 1 {
		t.Fatalf("replayed quarantine %+v runs %+v", fake.quar, fake.runs)
	}
	if fmt.Sprint(fake.order) != "[quarantine run]" {
		t.Errorf("replay order %v", fake.order)
	}
	if st, _ := sp.Status(); st.Segments != 0 {
		t.Errorf("spool not empty after replay: %+v", st)
	}
	// Other errors are not hidden.
	boom := errors.New("bad row")
	bad := SpoolingSink{Sink: failing{boom}, Spool: sp}
	if err := bad.WriteRun(ctx, schemas.Run{}); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
}

type failing struct{ err error }

func (f failing) WriteObservations(context.Context, []schemas.Observation) error { return f.err }
func (f failing) WriteQuarantine(context.Context, []schemas.Quarantined) error   { return f.err }
func (f failing) WriteRun(context.Context, schemas.Run) error                    { return f.err }

package ingest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

type stepSink struct {
	rows   map[string]schemas.Observation
	writes [][]schemas.Observation
	quar   []schemas.Quarantined
	runs   []schemas.Run
	fail   error
}

func (m *stepSink) WriteObservations(_ context.Context, obs []schemas.Observation) error {
	if m.fail != nil {
		return m.fail
	}
	m.writes = append(m.writes, obs)
	for _, o := range obs {
		m.rows[o.SeriesKey()+"|"+o.EffectiveAt.String()] = o
	}
	return nil
}

func (m *stepSink) WriteQuarantine(_ context.Context, q []schemas.Quarantined) error {
	m.quar = append(m.quar, q...)
	return nil
}

func (m *stepSink) WriteRun(_ context.Context, r schemas.Run) error {
	m.runs = append(m.runs, r)
	return nil
}

var stepT0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func stepRow(sku string, price float64) schemas.Observation {
	eff := stepT0
	switch sku {
	case "b":
		eff = stepT0.Add(-2 * time.Hour)
	case "c":
		eff = stepT0.Add(-time.Hour)
	}
	return schemas.Observation{ObservedAt: stepT0, EffectiveAt: eff, Provider: "aws", SKU: sku, Region: "us-east-1", Pricing: schemas.Spot,
		Currency: "USD", Unit: schemas.UnitHour, PriceNative: price, GPUCount: 1, SourceKind: schemas.SourceAPI}
}

func newStepRun(sink *stepSink) *Run {
	return &Run{Sink: sink, Normalizer: &Normalizer{}, Source: "import:test", RunID: "r1",
		SourceKind: schemas.SourceImport, BatchSize: 2, Now: func() time.Time { return stepT0 }}
}

func TestRunCommitsStepsAndRecordsTheRun(t *testing.T) {
	sink := &stepSink{rows: map[string]schemas.Observation{}}
	r := newStepRun(sink)
	r.Emit(stepRow("a", 1))
	r.Emit(stepRow("b", 2))
	r.Emit(stepRow("c", 3))
	r.Emit(stepRow("bad", 0)) // price 0: not offered, counted
	r.Reject(`{"x":1}`, "unreadable")
	if len(sink.rows) != 0 {
		t.Fatal("rows written before Commit")
	}
	if err := r.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sink.rows) != 3 || len(sink.writes) != 2 || len(sink.quar) != 1 {
		t.Fatalf("after commit: %d rows in %d writes, %d quarantined; want 3 in 2, 1", len(sink.rows), len(sink.writes), len(sink.quar))
	}
	for _, o := range sink.rows {
		if o.SourceKind != schemas.SourceImport || o.RunID != "r1" || o.PriceUSDGPUHour == 0 {
			t.Errorf("row not normalised as an import: %+v", o)
		}
	}
	if c := r.Counts(); c.Accepted != 3 || c.Quarantined != 1 || c.UnknownGPU != 3 {
		t.Errorf("counts %+v", c)
	}
	if since, until := r.Span(); !since.Equal(stepT0.Add(-2*time.Hour)) || !until.Equal(stepT0.Add(time.Second)) {
		t.Errorf("span [%v, %v)", since, until)
	}
	run, err := r.Finish(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != schemas.RunDegraded || run.RowsAccepted != 3 || run.RowsQuarantine != 1 || run.RowsNotOffered != 1 ||
		!strings.Contains(run.Error, "unreadable (1)") || len(sink.runs) != 1 {
		t.Errorf("run %+v", run)
	}
}

func TestRunStatus(t *testing.T) {
	sink := &stepSink{rows: map[string]schemas.Observation{}}
	empty := newStepRun(sink)
	if run, _ := empty.Finish(context.Background(), nil); run.Status != schemas.RunOK {
		t.Errorf("empty resumed run: %+v", run)
	}
	if since, until := empty.Span(); !since.IsZero() || !until.IsZero() {
		t.Errorf("span of nothing [%v, %v)", since, until)
	}
	if run, _ := newStepRun(sink).Finish(context.Background(), errors.New("boom")); run.Status != schemas.RunFailed || run.Error != "boom" {
		t.Errorf("failed run: %+v", run)
	}
	r := newStepRun(sink)
	r.Emit(stepRow("a", 1))
	r.Commit(context.Background())
	r.Emit(stepRow("b", 1)) // not committed: not counted
	if run, _ := r.Finish(context.Background(), context.Canceled); run.Status != schemas.RunDegraded || run.RowsAccepted != 1 {
		t.Errorf("interrupted run: %+v", run)
	}
}

func TestCommitErrorIsReturned(t *testing.T) {
	sink := &stepSink{rows: map[string]schemas.Observation{}, fail: store.ErrUnavailable}
	r := newStepRun(sink)
	r.Emit(stepRow("a", 1))
	if err := r.Commit(context.Background()); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Commit = %v", err)
	}
	if c := r.Counts(); c.Accepted != 0 {
		t.Errorf("failed commit counted: %+v", c)
	}
}

func TestLazyFXLoadsOnce(t *testing.T) {
	loads := 0
	l := &lazyFX{load: func() FX { loads++; return StaticFX{"EUR": 1.1} }}
	if loads != 0 {
		t.Fatal("loaded before use")
	}
	for i := 0; i < 3; i++ {
		if r, err := l.Rate(context.Background(), "EUR", time.Now()); err != nil || r != 1.1 {
			t.Fatalf("rate %v %v", r, err)
		}
	}
	if loads != 1 {
		t.Errorf("loaded %d times, want once", loads)
	}
}

// TestRunQuarantineShare: quarantined rows within the source's QuarantineShare of
// its priced rows are said in the run record but leave it ok; one more degrades it.
// Rows not offered count in neither.
func TestRunQuarantineShare(t *testing.T) {
	for _, c := range []struct {
		placeholders int
		want         string
	}{{1, schemas.RunOK}, {2, schemas.RunDegraded}} {
		sink := &stepSink{rows: map[string]schemas.Observation{}}
		r := newStepRun(sink)
		r.QuarantineShare = 0.25
		for _, sku := range []string{"a", "b", "c", "d"} {
			r.Emit(stepRow(sku, 1))
		}
		for i := 0; i < 5; i++ {
			r.Emit(stepRow("gone", 0)) // not offered: no part of the share
		}
		for i := 0; i < c.placeholders; i++ {
			o := stepRow("p", 0)
			o.Attrs = map[string]string{"price_text": "placeholder: $0.5 is a quarter or less of $2.39"}
			r.Emit(o)
		}
		if err := r.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
		run, err := r.Finish(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != c.want || run.RowsQuarantine != c.placeholders || run.RowsNotOffered != 5 ||
			!strings.Contains(run.Error, "placeholder: $0.5") {
			t.Errorf("%d placeholders of %d priced rows, share 0.25: %+v; want %s", c.placeholders, 4+c.placeholders, run, c.want)
		}
	}
}

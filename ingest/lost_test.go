package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// pickySink is a memSink that refuses, as a real backend does a value it cannot
// bind, every write holding a row whose SKU starts with "poison" (an error that is
// not the store being unavailable).
type pickySink struct {
	*memSink
}

func (p pickySink) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	for _, o := range obs {
		if strings.HasPrefix(o.SKU, "poison") {
			return fmt.Errorf("duckdb: write observations: could not bind %q: invalid value", o.SKU)
		}
	}
	return p.memSink.WriteObservations(ctx, obs)
}

func TestRowsNoStoreCanHoldAreQuarantined(t *testing.T) {
	sink := newMemSink()
	c := newCollector(sink)
	c.Batch.Size = 100
	src := emitN(10, func(i int, o *schemas.Observation) {
		switch i {
		case 1:
			o.EffectiveAt = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC) // past DateTime
		case 2:
			o.SKU = "bad-\xff\xfe" // DuckDB cannot bind it
		case 3:
			o.EffectiveAt = t0.Add(49 * time.Hour) // would be "latest" for good
		case 4:
			o.Region = strings.Repeat("r", MaxFieldBytes+1)
		case 5:
			o.EffectiveAt = time.Unix(0, 0) // the epoch is storable
		}
	})
	res := c.Collect(context.Background(), "r", []Job{{Name: "x", Source: src}})[0]
	if res.RowsAccepted != 6 || res.RowsQuarantine != 4 || res.RowsStored != 6 || res.RowsLost != 0 {
		t.Fatalf("run %+v", res.Run)
	}
	if len(sink.rows) != 6 || len(sink.quarantine) != 4 {
		t.Fatalf("stored %d, quarantined %d", len(sink.rows), len(sink.quarantine))
	}
	reasons := ""
	for _, q := range sink.quarantine {
		reasons += q.Reason + "\n"
		if err := storableText("raw", q.Raw, MaxRawBytes+100); err != nil {
			t.Errorf("quarantined raw not storable: %v", err)
		}
	}
	for _, want := range []string{"outside the storable range", "not valid UTF-8", "more than a day in the future", "region is"} {
		if !strings.Contains(reasons, want) {
			t.Errorf("no quarantine reason %q in\n%s", want, reasons)
		}
	}
}

func TestRefusedRowsAreFoundAndQuarantinedTheRestStored(t *testing.T) {
	sink := pickySink{newMemSink()}
	c := newCollector(sink)
	c.Batch.Size = 64
	src := emitN(200, func(i int, o *schemas.Observation) {
		if i == 17 || i == 150 {
			o.SKU = fmt.Sprintf("poison-%d", i)
		}
	})
	res := c.Collect(context.Background(), "r", []Job{{Name: "x", Source: src}})[0]
	if len(sink.rows) != 198 || res.RowsStored != 198 || res.RowsAccepted != 198 || res.RowsQuarantine != 2 || res.RowsLost != 0 {
		t.Fatalf("stored %d; run %+v", len(sink.rows), res.Run)
	}
	if res.Status != schemas.RunDegraded {
		t.Errorf("status %s", res.Status)
	}
	if len(sink.quarantine) != 2 || !strings.Contains(sink.quarantine[0].Reason, "could not bind") ||
		!strings.Contains(sink.quarantine[0].Raw, "poison-") {
		t.Errorf("quarantine %+v", sink.quarantine)
	}
}

func TestStepwiseCommitQuarantinesRefusedRows(t *testing.T) {
	sink := pickySink{newMemSink()}
	run := &Run{Sink: sink, Normalizer: testNormalizer(), Source: "import:csv", RunID: "r", Now: func() time.Time { return t0 }}
	_ = emitN(10, func(i int, o *schemas.Observation) {
		if i == 3 {
			o.SKU = "poison"
		}
	})(context.Background(), run)
	if err := run.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := run.Counts()
	if c.Accepted != 9 || c.Quarantined != 1 || len(sink.rows) != 9 || len(sink.quarantine) != 1 {
		t.Fatalf("counts %+v, stored %d, quarantined %d", c, len(sink.rows), len(sink.quarantine))
	}
}

func TestLostRowsFailTheRun(t *testing.T) {
	sink := newMemSink()
	sink.unavailable = true
	c := newCollector(sink)
	c.Spool = &DirSpool{Dir: t.TempDir(), MaxBytes: 1} // full from the start
	res := c.Collect(context.Background(), "r", []Job{{Name: "x", Source: emitN(7, nil)}})[0]
	if res.Status != schemas.RunFailed || res.RowsLost != 7 || res.RowsStored != 0 || res.RowsSpooled != 0 ||
		!strings.Contains(res.Error, "7 rows lost") {
		t.Fatalf("run %+v", res.Run)
	}
}

func TestInterruptedRunSpoolsWhatIsInFlight(t *testing.T) {
	sink := newMemSink()
	c := newCollector(sink)
	c.Batch.Size = 1000
	c.SourceTimeout = 0
	c.Spool = &DirSpool{Dir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	src := sourceFunc(func(ctx context.Context, e scrapers.Emitter) error {
		_ = emitN(5, nil)(ctx, e)
		cancel() // the signal arrives mid-run
		<-ctx.Done()
		return ctx.Err()
	})
	res := c.Collect(ctx, "r", []Job{{Name: "x", Source: src}})[0]
	if res.Status != schemas.RunInterrupted || res.RowsStored+res.RowsSpooled != 5 || res.RowsLost != 0 {
		t.Fatalf("run %+v", res.Run)
	}
	if len(sink.runs) != 1 || sink.runs[0].Status != schemas.RunInterrupted {
		t.Fatalf("run record %+v", sink.runs)
	}
}

func TestReplayQuarantinesPoisonRowsAndGoesOn(t *testing.T) {
	dir := t.TempDir()
	sp := &DirSpool{Dir: dir}
	good := func(n int, p string) []schemas.Observation {
		var out []schemas.Observation
		for i := 0; i < n; i++ {
			o := raw(nil)
			o.SKU = fmt.Sprintf("%s-%d", p, i)
			o.EffectiveAt = t0
			out = append(out, o)
		}
		return out
	}
	first := good(20, "a")
	first[7].SKU = "poison-7"
	for _, b := range [][]schemas.Observation{first, good(5, "b")} {
		if err := sp.Spool(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	sink := pickySink{newMemSink()}
	n, err := sp.Replay(context.Background(), sink)
	if err != nil || n != 24 || len(sink.rows) != 24 {
		t.Fatalf("replayed %d (%v), stored %d", n, err, len(sink.rows))
	}
	if len(sink.quarantine) != 1 || !strings.Contains(sink.quarantine[0].Reason, "could not bind") {
		t.Fatalf("quarantine %+v", sink.quarantine)
	}
	if st, _ := sp.Status(); st.Segments != 0 {
		t.Fatalf("spool not emptied: %+v", st)
	}
}

// recordRefuser refuses every run record (as a store would one it cannot hold).
type recordRefuser struct{ *memSink }

func (r recordRefuser) WriteRun(context.Context, schemas.Run) error {
	return errors.New("clickhouse: write run: Cannot parse input")
}

func TestReplayMovesAnUnstorableSegmentAside(t *testing.T) {
	dir := t.TempDir()
	sp := &DirSpool{Dir: dir}
	if err := sp.SpoolRun(context.Background(), schemas.Run{RunID: "r", Source: "x"}); err != nil {
		t.Fatal(err)
	}
	o := raw(nil)
	o.EffectiveAt = t0
	if err := sp.Spool(context.Background(), []schemas.Observation{o}); err != nil {
		t.Fatal(err)
	}
	sink := recordRefuser{newMemSink()}
	n, err := sp.Replay(context.Background(), sink)
	if n != 1 || err == nil || !strings.Contains(err.Error(), "run record refused") {
		t.Fatalf("replayed %d, %v", n, err)
	}
	reasons, _ := filepath.Glob(filepath.Join(dir, "corrupt", "*.reason"))
	if len(reasons) != 1 {
		t.Fatalf("reason files %v", reasons)
	}
	if b, _ := os.ReadFile(reasons[0]); !strings.Contains(string(b), "Cannot parse input") {
		t.Errorf("reason %q", b)
	}
	if st, _ := sp.Status(); st.Segments != 0 {
		t.Errorf("spool not emptied: %+v", st)
	}
}

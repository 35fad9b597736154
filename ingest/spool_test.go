package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

func TestSpoolReplaysInOrderAndKeepsCorrupt(t *testing.T) {
	sp := &DirSpool{Dir: t.TempDir()}
	ctx := context.Background()
	a := []schemas.Observation{spooled(func(o *schemas.Observation) { o.SKU = "a" })}
	b := []schemas.Observation{spooled(func(o *schemas.Observation) { o.SKU = "b" }), spooled(func(o *schemas.Observation) { o.SKU = "c" })}
	for _, batch := range [][]schemas.Observation{a, b} {
		if err := sp.Spool(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// a third segment, then damaged on disk
	if err := sp.Spool(ctx, a); err != nil {
		t.Fatal(err)
	}
	names, _ := sp.segments()
	last := filepath.Join(sp.Dir, names[2])
	data, _ := os.ReadFile(last)
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(last, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := sp.Status()
	if err != nil || st.Segments != 2 || st.Rows != 3 || len(st.Corrupt) != 1 {
		t.Fatalf("status %+v %v", st, err)
	}
	var order []string
	w := writerFunc(func(obs []schemas.Observation) error {
		for _, o := range obs {
			order = append(order, o.SKU)
		}
		return nil
	})
	n, err := sp.Replay(ctx, w)
	if n != 3 || !errors.Is(err, ErrSpoolCorrupt) {
		t.Fatalf("replay n=%d err=%v", n, err)
	}
	if len(order) != 3 || order[0] != "a" || order[1] != "b" || order[2] != "c" {
		t.Errorf("replay order %v", order)
	}
	if _, err := os.Stat(filepath.Join(sp.Dir, "corrupt", names[2])); err != nil {
		t.Errorf("corrupt segment not kept aside: %v", err)
	}
}

func TestSpoolKeepsSegmentWhenReplayFails(t *testing.T) {
	sp := &DirSpool{Dir: t.TempDir()}
	ctx := context.Background()
	if err := sp.Spool(ctx, []schemas.Observation{spooled(nil)}); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("still down")
	if _, err := sp.Replay(ctx, writerFunc(func([]schemas.Observation) error { return boom })); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if st, _ := sp.Status(); st.Rows != 1 {
		t.Errorf("segment lost after failed replay: %+v", st)
	}
}

func TestSpoolBounded(t *testing.T) {
	sp := &DirSpool{Dir: t.TempDir(), MaxBytes: 600}
	ctx := context.Background()
	var err error
	for i := 0; i < 20 && err == nil; i++ {
		err = sp.Spool(ctx, []schemas.Observation{spooled(nil)})
	}
	if !errors.Is(err, ErrSpoolFull) {
		t.Fatalf("err = %v, want ErrSpoolFull", err)
	}
	if st, _ := sp.Status(); st.Bytes > 600 {
		t.Errorf("spool grew to %d bytes past its bound", st.Bytes)
	}
}

type writerFunc func([]schemas.Observation) error

func (f writerFunc) WriteObservations(_ context.Context, obs []schemas.Observation) error {
	return f(obs)
}

func TestSpoolRowsCountsFromNames(t *testing.T) {
	sp := &DirSpool{Dir: t.TempDir()}
	ctx := context.Background()
	for _, n := range []int{3, 5} {
		rows := make([]schemas.Observation, n)
		for i := range rows {
			rows[i] = spooled(nil)
		}
		if err := sp.Spool(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	// A segment of an older version, named without its count, is read once.
	old := &DirSpool{Dir: sp.Dir}
	if err := old.Spool(ctx, []schemas.Observation{spooled(nil), spooled(nil)}); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(sp.Dir, "*-r2.seg.gz"))
	if len(names) != 1 {
		t.Fatalf("segments %v", names)
	}
	if err := os.Rename(names[0], strings.Replace(names[0], "-r2.seg.gz", ".seg.gz", 1)); err != nil {
		t.Fatal(err)
	}
	n, err := sp.Rows()
	if err != nil || n != 10 {
		t.Fatalf("Rows = %d, %v; want 10", n, err)
	}
	// Counting does not read the segments named with their count: a counted
	// segment whose content is unreadable still counts by its name.
	names, _ = filepath.Glob(filepath.Join(sp.Dir, "*-r5.seg.gz"))
	if err := os.WriteFile(names[0], []byte("not gzip"), 0o600); err != nil {
		t.Fatal(err)
	}
	if n, _ := sp.Rows(); n != 10 {
		t.Fatalf("Rows after = %d", n)
	}
}

// A segment holding text that is not valid UTF-8 (JSON carries it as U+FFFD) reads
// back whole, not as corrupt: its checksum is of what is written.
func TestSpoolSegmentWithInvalidUTF8Replays(t *testing.T) {
	ctx := context.Background()
	sp := &DirSpool{Dir: t.TempDir()}
	o := spooled(func(o *schemas.Observation) { o.SKU = "bad-\xff\xfe"; o.EffectiveAt = t0 })
	if err := sp.Spool(ctx, []schemas.Observation{o}); err != nil {
		t.Fatal(err)
	}
	if err := sp.SpoolRun(ctx, schemas.Run{RunID: "r", Source: "x", Error: "said \xff"}); err != nil {
		t.Fatal(err)
	}
	sink := newMemSink()
	n, err := sp.Replay(ctx, sink)
	var skus []string
	for _, r := range sink.rows {
		skus = append(skus, r.SKU)
	}
	if err != nil || n != 1 || len(skus) != 1 || skus[0] != "bad-\uFFFD\uFFFD" {
		t.Fatalf("replayed %d (%v): %q", n, err, skus)
	}
	if len(sink.runs) != 1 || sink.runs[0].Error != "said \uFFFD" {
		t.Errorf("runs %+v", sink.runs)
	}
	if st, _ := sp.Status(); st.Segments != 0 || len(st.Corrupt) != 0 {
		t.Errorf("status %+v", st)
	}
}

// spooled is a row as ingest spools it: normalised, so storable (Replay quarantines
// what is not).
func spooled(mod func(*schemas.Observation)) schemas.Observation {
	o := raw(mod)
	if o.EffectiveAt.IsZero() {
		o.EffectiveAt = o.ObservedAt
	}
	return o
}

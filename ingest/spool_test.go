package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

func TestSpoolReplaysInOrderAndKeepsCorrupt(t *testing.T) {
	sp := &DirSpool{Dir: t.TempDir()}
	ctx := context.Background()
	a := []schemas.Observation{raw(func(o *schemas.Observation) { o.SKU = "a" })}
	b := []schemas.Observation{raw(func(o *schemas.Observation) { o.SKU = "b" }), raw(func(o *schemas.Observation) { o.SKU = "c" })}
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
	if err := sp.Spool(ctx, []schemas.Observation{raw(nil)}); err != nil {
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
		err = sp.Spool(ctx, []schemas.Observation{raw(nil)})
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

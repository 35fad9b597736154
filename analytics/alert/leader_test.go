package alert

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestOneLeaderPerStateFile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "alerts-state.json")
	a, b := NewLeader(state), NewLeader(state) // two serve processes
	if err := a.Acquire(); err != nil {
		t.Fatal(err)
	}
	if err := a.Acquire(); err != nil {
		t.Fatalf("the leader again: %v", err)
	}
	if err := b.Acquire(); !errors.Is(err, ErrStandingBy) {
		t.Fatalf("second evaluator: %v, want ErrStandingBy", err)
	}
	a.Release() // the leader exits
	if err := b.Acquire(); err != nil {
		t.Fatalf("stand-by does not take over: %v", err)
	}
	if err := a.Acquire(); !errors.Is(err, ErrStandingBy) {
		t.Fatalf("old leader back: %v, want ErrStandingBy", err)
	}
	b.Release()
}

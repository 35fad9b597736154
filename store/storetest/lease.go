package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// lease: one holder at a time; the holder renews; another takes over once the
// lease expires or is released; of owners racing for a free lease exactly one
// holds it, and keeps it.
func (s *suite) lease(t *testing.T) {
	st := s.fresh(t)
	l, ok := st.(store.Leaser)
	if !ok {
		t.Skip("the store keeps no leases")
	}
	c := ctx(t)
	try := func(name, owner string, ttl time.Duration) store.Lease {
		t.Helper()
		got, err := l.AcquireLease(c, name, owner, ttl)
		if err != nil {
			t.Fatalf("AcquireLease(%s, %s): %v", name, owner, err)
		}
		return got
	}
	if got := try("alerts", "a", time.Minute); !got.Held || got.Owner != "a" {
		t.Fatalf("a on a free lease: %+v", got)
	}
	if got := try("alerts", "b", time.Second); got.Held || got.Owner != "a" {
		t.Fatalf("b while a holds it: %+v", got)
	}
	if got := try("other", "b", time.Minute); !got.Held {
		t.Fatalf("b on another name: %+v", got)
	}
	if got := try("alerts", "a", time.Minute); !got.Held { // renewal
		t.Fatalf("a renewing: %+v", got)
	}
	if got := try("alerts", "b", time.Second); got.Held || !got.Until.After(time.Now().Add(30*time.Second)) {
		t.Fatalf("b after a renewed for a minute: %+v", got)
	}
	if err := l.ReleaseLease(c, "alerts", "b"); err != nil { // not b's: nothing
		t.Fatal(err)
	}
	if got := try("alerts", "b", time.Second); got.Held {
		t.Fatalf("b after releasing what it does not hold: %+v", got)
	}
	if err := l.ReleaseLease(c, "alerts", "a"); err != nil {
		t.Fatal(err)
	}
	if got := try("alerts", "b", time.Second); !got.Held {
		t.Fatalf("b after a released: %+v", got)
	}
	time.Sleep(2100 * time.Millisecond) // b's one-second lease expires
	if got := try("alerts", "a", time.Minute); !got.Held {
		t.Fatalf("a after b's lease expired: %+v", got)
	}
	if got := try("alerts", "b", time.Minute); got.Held {
		t.Fatalf("b after a took over: %+v", got)
	}

	// Owners racing for a free lease.
	const n = 5
	var wg sync.WaitGroup
	got := make([]store.Lease, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = l.AcquireLease(c, "race", fmt.Sprintf("owner-%d", i), time.Minute)
		}()
	}
	wg.Wait()
	held := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v", i, errs[i])
		}
		if got[i].Held {
			held++
		}
	}
	if held != 1 {
		t.Fatalf("%d of %d racers hold the lease, want 1: %+v", held, n, got)
	}
	// Once settled, every racer trying again agrees: the winner renews, the others
	// stand by.
	for i := range n {
		again := try("race", fmt.Sprintf("owner-%d", i), time.Minute)
		if again.Held != got[i].Held {
			t.Errorf("racer %d held %v in the race, %v after: %+v", i, got[i].Held, again.Held, again)
		}
	}
}

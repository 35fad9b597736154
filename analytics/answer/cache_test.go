package answer

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAnswerCacheComputesOnceAndClears(t *testing.T) {
	c := NewCache(10)
	var computed, started atomic.Int32
	compute := func() (Answer, error) {
		computed.Add(1)
		// The computation lasts until every caller has asked: they pile up on it.
		for deadline := time.Now().Add(5 * time.Second); started.Load() < 50 && time.Now().Before(deadline); {
			runtime.Gosched()
		}
		return Answer{Body: []byte("x")}, nil
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Add(1)
			if a, err := c.Get("k", time.Minute, compute); err != nil || string(a.Body) != "x" {
				t.Errorf("get: %q %v", a.Body, err)
			}
		}()
	}
	wg.Wait()
	if n := computed.Load(); n != 1 {
		t.Errorf("50 concurrent callers computed %d times, want once", n)
	}
	if _, _ = c.Get("k", time.Minute, compute); computed.Load() != 1 {
		t.Error("a kept answer was computed again")
	}
	c.Clear()
	if _, _ = c.Get("k", time.Minute, compute); computed.Load() != 2 {
		t.Error("a cleared answer was not computed again")
	}
	if _, err := c.Get("e", time.Minute, func() (Answer, error) { return Answer{}, errors.New("boom") }); err == nil {
		t.Error("an error was swallowed")
	}
	if _, err := c.Get("e", time.Minute, func() (Answer, error) { return Answer{Body: []byte("ok")}, nil }); err != nil {
		t.Error("an error was kept")
	}
}

// An answer past its ttl is served at once while it is computed again in the
// background; a cleared one is never served.
func TestAnswerCacheServesStaleWhileRecomputing(t *testing.T) {
	c := NewCache(10)
	ttl := 100 * time.Millisecond
	release := make(chan struct{})
	var computed atomic.Int32
	slow := func() (Answer, error) {
		n := computed.Add(1)
		if n > 1 {
			<-release
		}
		return Answer{Body: []byte{byte('0' + n)}}, nil
	}
	if a, _ := c.Get("k", ttl, slow); string(a.Body) != "1" {
		t.Fatalf("first answer %q", a.Body)
	}
	time.Sleep(ttl + 10*time.Millisecond)
	// The recomputation blocks until release is closed: an answer before then was
	// served without waiting for it (no wall-clock bound, which a busy machine breaks).
	got := make(chan string, 1)
	go func() {
		a, _ := c.Get("k", ttl, slow)
		got <- string(a.Body)
	}()
	select {
	case b := <-got:
		if b != "1" {
			t.Fatalf("past its ttl: %q, want the old answer", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("past its ttl: the caller waited for the recomputation")
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if a, _ := c.Get("k", ttl, slow); string(a.Body) == "2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background computation was not kept")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.Clear()
	if a, _ := c.Get("k", ttl, slow); string(a.Body) != "3" {
		t.Fatalf("after clear: %q, want a fresh computation", a.Body)
	}
}

package server

import (
	"errors"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAnswerCacheComputesOnceAndClears(t *testing.T) {
	c := newAnswerCache(10)
	var computed, started atomic.Int32
	compute := func() (answer, error) {
		computed.Add(1)
		// The computation lasts until every caller has asked: they pile up on it.
		for deadline := time.Now().Add(5 * time.Second); started.Load() < 50 && time.Now().Before(deadline); {
			runtime.Gosched()
		}
		return answer{body: []byte("x")}, nil
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Add(1)
			if a, err := c.get("k", time.Minute, compute); err != nil || string(a.body) != "x" {
				t.Errorf("get: %q %v", a.body, err)
			}
		}()
	}
	wg.Wait()
	if n := computed.Load(); n != 1 {
		t.Errorf("50 concurrent callers computed %d times, want once", n)
	}
	if _, _ = c.get("k", time.Minute, compute); computed.Load() != 1 {
		t.Error("a kept answer was computed again")
	}
	c.clear()
	if _, _ = c.get("k", time.Minute, compute); computed.Load() != 2 {
		t.Error("a cleared answer was not computed again")
	}
	if _, err := c.get("e", time.Minute, func() (answer, error) { return answer{}, errors.New("boom") }); err == nil {
		t.Error("an error was swallowed")
	}
	if _, err := c.get("e", time.Minute, func() (answer, error) { return answer{body: []byte("ok")}, nil }); err != nil {
		t.Error("an error was kept")
	}
}

// An answer past its ttl is served at once while it is computed again in the
// background; a cleared one is never served.
func TestAnswerCacheServesStaleWhileRecomputing(t *testing.T) {
	c := newAnswerCache(10)
	ttl := 100 * time.Millisecond
	release := make(chan struct{})
	var computed atomic.Int32
	slow := func() (answer, error) {
		n := computed.Add(1)
		if n > 1 {
			<-release
		}
		return answer{body: []byte{byte('0' + n)}}, nil
	}
	if a, _ := c.get("k", ttl, slow); string(a.body) != "1" {
		t.Fatalf("first answer %q", a.body)
	}
	time.Sleep(ttl + 10*time.Millisecond)
	start := time.Now()
	if a, _ := c.get("k", ttl, slow); string(a.body) != "1" || time.Since(start) > ttl/2 {
		t.Fatalf("past its ttl: %q after %s, want the old answer at once", a.body, time.Since(start))
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if a, _ := c.get("k", ttl, slow); string(a.body) == "2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background computation was not kept")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.clear()
	if a, _ := c.get("k", ttl, slow); string(a.body) != "3" {
		t.Fatalf("after clear: %q, want a fresh computation", a.body)
	}
}

func TestAddressFile(t *testing.T) {
	dir := t.TempDir()
	addr := &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}
	if got := URLOf(addr); got != "http://127.0.0.1:8080" {
		t.Errorf("URLOf(%v) = %s", addr, got)
	}
	remove, err := WriteAddress(dir, Address{URL: "http://127.0.0.1:8080", Store: "duckdb:///x", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ReadAddress(dir)
	if err != nil || a.URL != "http://127.0.0.1:8080" || a.PID != 42 {
		t.Fatalf("read back %+v %v", a, err)
	}
	remove()
	if _, err := ReadAddress(dir); err == nil {
		t.Error("address file still there after remove")
	}
}

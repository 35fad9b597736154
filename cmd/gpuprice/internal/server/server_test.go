package server

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestAnswerCacheComputesOnceAndClears(t *testing.T) {
	c := newAnswerCache(10)
	var computed atomic.Int32
	release := make(chan struct{})
	compute := func() (answer, error) {
		computed.Add(1)
		<-release
		return answer{body: []byte("x")}, nil
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a, err := c.get("k", time.Minute, compute); err != nil || string(a.body) != "x" {
				t.Errorf("get: %q %v", a.body, err)
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // let them pile up on the one computation
	close(release)
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

package api

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// flood opens n connections to addr from the loopback address from, each sending
// half a request header and nothing more (a slow-header attack), and closes them
// when the test ends. It returns how many the server closed within a second.
func flood(t *testing.T, addr, from string, n int) int {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Skipf("cannot dial from %s (a loopback address other than 127.0.0.1): %v", from, err)
		}
		conns = append(conns, c)
		_, _ = c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")) // and never the end
	}
	var closed sync.WaitGroup
	var mu sync.Mutex
	n = 0
	for _, c := range conns {
		closed.Add(1)
		go func() {
			defer closed.Done()
			_ = c.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	closed.Wait()
	return n
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// healthzTime is how long GET /healthz takes from 127.0.0.1 (at most limit).
func healthzTime(t *testing.T, addr string, limit time.Duration) (time.Duration, error) {
	t.Helper()
	c := http.Client{Timeout: limit}
	start := time.Now()
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return time.Since(start), err
	}
	resp.Body.Close()
	return time.Since(start), nil
}

// Finding 11 of issue 29: 1,100 slow-header sockets from one client held every
// slot and /healthz took 9.96 s. With the per-client cap the client keeps 64 of
// them (the rest are closed at accept) and /healthz, from another client, answers
// at once; without it (MaxConnsPerClient -1) /healthz waits for the header timeout.
func TestSlowHeaderFloodLeavesHealthzAnswering(t *testing.T) {
	const sockets = 1100
	addr := serveWith(t, okHandler, HTTPLimits{ReadHeaderTimeout: 1500 * time.Millisecond})
	closed := flood(t, addr, "127.0.0.2", sockets)
	if want := sockets - DefaultMaxConnsPerClient; closed < want {
		t.Errorf("the server closed %d of %d flooding sockets, want at least %d", closed, sockets, want)
	}
	took, err := healthzTime(t, addr, 5*time.Second)
	if err != nil || took > 500*time.Millisecond {
		t.Fatalf("/healthz under the flood: %v, %v (want an answer within 500 ms)", took, err)
	}

	// The same flood without the cap holds every slot until the header timeout.
	addr = serveWith(t, okHandler, HTTPLimits{ReadHeaderTimeout: 4 * time.Second, MaxConnsPerClient: -1})
	flood(t, addr, "127.0.0.3", sockets)
	took, _ = healthzTime(t, addr, 6*time.Second)
	if took < time.Second {
		t.Errorf("/healthz without the per-client cap took %v: the flood did not hold the slots, the test shows nothing", took)
	}
}

func TestHostAllowlist(t *testing.T) {
	cases := []struct {
		allowed []string
		host    string
		want    int
	}{
		{nil, "localhost:%d", 200},
		{nil, "LocalHost:%d", 200},
		{nil, "127.0.0.1:%d", 200},
		{nil, "[::1]:%d", 200},
		{nil, "localhost", 200},
		{nil, "evil.example:%d", 421}, // DNS rebinding: a name that resolves to 127.0.0.1
		{nil, "localhost:1", 421},
		{[]string{"gpuprice.internal"}, "gpuprice.internal:%d", 200},
		{[]string{"gpuprice.internal"}, "localhost:%d", 421},
		{[]string{"*"}, "evil.example:%d", 200},
	}
	for _, c := range cases {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := NewHTTPServer(checkHost(okHandler, hostAllowlist(c.allowed, ln.Addr())), HTTPLimits{})
		go func() { _ = srv.Serve(ln) }()
		port := ln.Addr().(*net.TCPAddr).Port
		host := c.host
		if strings.Contains(host, "%d") {
			host = fmt.Sprintf(host, port)
		}
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != c.want {
			t.Errorf("allowed %v, Host %s: %d, want %d", c.allowed, host, resp.StatusCode, c.want)
		}
		conn.Close()
		srv.Close()
	}
	if h := hostAllowlist(nil, &net.TCPAddr{IP: net.IPv4zero, Port: 8080}); h != nil {
		t.Errorf("listening on every address with no allowed_hosts: %v, want any Host", h)
	}
}

func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	for h, want := range map[string]string{"Bearer s3cret": "s3cret", "bearer s3cret": "s3cret",
		"BEARER  s3cret ": "s3cret", "Basic s3cret": "", "Bearers3cret": "", "": ""} {
		r, _ := http.NewRequest("POST", "/api/v1/collect", nil)
		r.Header.Set("Authorization", h)
		if got, _ := bearer(r); got != want {
			t.Errorf("Authorization %q: token %q, want %q", h, got, want)
		}
	}
}

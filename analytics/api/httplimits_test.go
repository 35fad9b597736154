package api

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveWith serves h on a real loopback listener (capped as Serve caps it) with the
// service's http.Server built from limits, until the test ends.
func serveWith(t *testing.T, h http.Handler, limits HTTPLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(h, limits)
	go func() { _ = srv.Serve(limitListener(ln, limits)) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// get sends one keep-alive GET on conn and reads its answer's status and header,
// and its body unless the server closes the connection after it (431: the server
// closes with the rest of the oversized request unread, which may reset the
// connection before the body's end).
func get(t *testing.T, conn net.Conn, br *bufio.Reader, path string, extra string) *http.Response {
	t.Helper()
	if _, err := fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: test\r\n%s\r\n", path, extra); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil && !resp.Close {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// closedWithin reports whether the server closes conn (EOF, or a reset) before d;
// false when d passes with the connection still open.
func closedWithin(conn net.Conn, br *bufio.Reader, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := br.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })

// An idle keep-alive connection is closed by the server after IdleTimeout; with a
// long IdleTimeout the same connection stays open and serves a second request.
func TestIdleKeepAliveConnectionIsClosed(t *testing.T) {
	for _, c := range []struct {
		idle       time.Duration
		wantClosed bool
	}{{200 * time.Millisecond, true}, {time.Hour, false}} {
		addr := serveWith(t, okHandler, HTTPLimits{IdleTimeout: c.idle})
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		if resp := get(t, conn, br, "/", ""); resp.StatusCode != 200 || resp.Close {
			t.Fatalf("idle %s: %d, close %v: not a keep-alive answer", c.idle, resp.StatusCode, resp.Close)
		}
		// Generous margins: 10 s for a 200 ms timeout; the long one is watched for 1.5 s.
		wait := 10 * time.Second
		if !c.wantClosed {
			wait = 1500 * time.Millisecond
		}
		if got := closedWithin(conn, br, wait); got != c.wantClosed {
			t.Errorf("IdleTimeout %s: closed within %s = %v, want %v", c.idle, wait, got, c.wantClosed)
		}
		if !c.wantClosed {
			_ = conn.SetReadDeadline(time.Time{})
			if resp := get(t, conn, br, "/", ""); resp.StatusCode != 200 {
				t.Errorf("the kept connection answered %d", resp.StatusCode)
			}
		}
	}
}

// A client that stops reading an answer is cut at WriteTimeout: the handler's write
// fails and the client gets less than the answer's Content-Length. With a long
// WriteTimeout the same handler is still writing when the client gives up.
func TestSlowReaderIsCutAtWriteTimeout(t *testing.T) {
	const size = 1 << 30 // far more than the loopback socket buffers hold
	for _, c := range []struct {
		write   time.Duration
		wantCut bool
	}{{300 * time.Millisecond, true}, {time.Hour, false}} {
		writeErr := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(size))
			chunk := make([]byte, 64<<10)
			var err error
			for n := 0; n < size && err == nil; n += len(chunk) {
				_, err = w.Write(chunk)
			}
			writeErr <- err
		})
		addr := serveWith(t, h, HTTPLimits{WriteTimeout: c.write})
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(64 << 10)
		}
		if _, err := io.WriteString(conn, "GET /big HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		// The client reads nothing more.
		wait := 10 * time.Second
		if !c.wantCut {
			wait = 1500 * time.Millisecond
		}
		select {
		case err := <-writeErr:
			if !c.wantCut {
				t.Errorf("WriteTimeout %s: the handler stopped writing (%v) while the client held on", c.write, err)
			} else if err == nil {
				t.Errorf("WriteTimeout %s: the whole answer was written to a client that did not read", c.write)
			}
		case <-time.After(wait):
			if c.wantCut {
				t.Errorf("WriteTimeout %s: still writing to a client that does not read after %s", c.write, wait)
			}
		}
		if c.wantCut {
			// What the client can still read ends well short of the answer.
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, _ := io.Copy(io.Discard, conn)
			if n >= size {
				t.Errorf("the cut client read %d bytes, the whole answer", n)
			}
		}
		conn.Close()
		if !c.wantCut {
			select { // the client hung up: the handler stops
			case <-writeErr:
			case <-time.After(10 * time.Second):
				t.Error("the handler still writes after the client hung up")
			}
		}
	}
}

// A request whose header is larger than MaxHeaderBytes (plus the 4 KB Go's server
// allows over it) is answered 431; one within it is served.
func TestOversizedHeaderIs431(t *testing.T) {
	addr := serveWith(t, okHandler, HTTPLimits{MaxHeaderBytes: 8 << 10})
	for _, c := range []struct {
		header int
		want   int
	}{{4 << 10, 200}, {16 << 10, http.StatusRequestHeaderFieldsTooLarge}} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(conn)
		resp := get(t, conn, br, "/", "X-Big: "+strings.Repeat("a", c.header)+"\r\n")
		if resp.StatusCode != c.want {
			t.Errorf("a %d-byte header: %d, want %d", c.header, resp.StatusCode, c.want)
		}
		conn.Close()
	}
	// The default limit (64 KiB) also holds when none is configured.
	addr = serveWith(t, okHandler, HTTPLimits{})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if resp := get(t, conn, bufio.NewReader(conn), "/", "X-Big: "+strings.Repeat("a", 80<<10)+"\r\n"); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("an 80 KiB header with the default limits: %d, want 431", resp.StatusCode)
	}
}

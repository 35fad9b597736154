package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The HTTP limits of serve's configuration reach its listener: an idle keep-alive
// connection is closed after serve.idle_timeout, and a header over
// serve.max_header_bytes is answered 431 (analytics/api's tests
// cover each limit, WriteTimeout included, against the same http.Server).
func TestServeHTTPLimitsFromConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+dir+"\nserve: {idle_timeout: 300ms, max_header_bytes: 4096}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startServe(t, "--config", cfg, "--store", "duckdb://"+filepath.Join(dir, "limits.duckdb"))
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	request := func(conn net.Conn, br *bufio.Reader, extra string) *http.Response {
		t.Helper()
		if _, err := fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: localhost\r\n%s\r\n", extra); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	if resp := request(conn, br, ""); resp.StatusCode != 200 || resp.Close {
		t.Fatalf("/healthz: %d, close %v", resp.StatusCode, resp.Close)
	}
	// 300 ms configured; closed well within 10 s (the default would be 2 minutes).
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err = br.ReadByte()
	var ne net.Error
	if err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("the idle connection is still open after 10 s with serve.idle_timeout 300ms (%v)", err)
	}

	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	// 4 KiB configured (+4 KiB Go's server allows): a 16 KiB header is 431, where
	// the default (64 KiB) would serve it.
	if resp := request(conn2, bufio.NewReader(conn2), "X-Big: "+strings.Repeat("a", 16<<10)+"\r\n"); resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 16 KiB header with serve.max_header_bytes 4096: %d, want 431", resp.StatusCode)
	}
}

package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/server"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// A store that does not answer when a command starts: the import collects into the
// spool (exit 0, nothing lost), and once the store answers the next command
// migrates it and replays the spool, run records included.
func TestIntegrationClickHouseDownAtStartSpoolsThenMigrates(t *testing.T) {
	up := chtest.FreshDSN(t, "downatstart")
	down := fmt.Sprintf("clickhouse://127.0.0.1:%d/gpuprice_down?dial_timeout=1s", freePort(t))
	dataDir := t.TempDir()
	cfgPath := filepath.Join(dataDir, "gpuprice.yaml")
	cfg := fmt.Sprintf("data_dir: %s\ningest: {batch_size: 10, flush_interval: 1h}\nsources:\n  fx: {enabled: false}\n", dataDir)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	csvPath := outageCSV(t, 25, 2)
	out, code := run(t, "--config", cfgPath, "--store", down, "import", "csv", csvPath)
	if code != 0 || !strings.Contains(out, "25 rows spooled") {
		t.Fatalf("import with the store down: exit %d\n%s", code, out)
	}
	status, _ := run(t, "--config", cfgPath, "spool", "status")
	if !strings.Contains(status, "25") {
		t.Fatalf("spool status:\n%s", status)
	}
	if out, code := run(t, "--config", cfgPath, "--store", up, "spool", "replay"); code != 0 {
		t.Fatalf("spool replay: %s", out)
	}
	runs, code := run(t, "--config", cfgPath, "--store", up, "runs", "--format", "json")
	if code != 0 || !strings.Contains(runs, `"rows_spooled": 25`) || !strings.Contains(runs, `"rows_quarantined": 2`) {
		t.Fatalf("run record not replayed:\n%s", runs)
	}
	obs, code := run(t, "--config", cfgPath, "--store", up, "export", "--format", "csv")
	if code != 0 || strings.Count(obs, "outage-") != 25 {
		t.Fatalf("%d rows stored after the replay:\n%s", strings.Count(obs, "outage-"), obs)
	}
}

// Rows neither the store nor the spool takes are lost: the run says how many, and
// the command fails.
func TestLostRowsExitNonZero(t *testing.T) {
	down := fmt.Sprintf("clickhouse://127.0.0.1:%d/gpuprice_down?dial_timeout=1s", freePort(t))
	dataDir := t.TempDir()
	cfgPath := filepath.Join(dataDir, "gpuprice.yaml")
	cfg := fmt.Sprintf("data_dir: %s\nspool: {max_bytes: 1}\ningest: {batch_size: 10, flush_interval: 1h}\nsources:\n  fx: {enabled: false}\n", dataDir)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "--config", cfgPath, "--store", down, "import", "csv", outageCSV(t, 25, 0))
	if code == 0 || !regexp.MustCompile(`import:csv\s+failed\s+25\s+0\s+0\s+0\s+\S+\s+25\s+25 rows lost`).MatchString(out) {
		t.Fatalf("import losing every row: exit %d\n%s", code, out)
	}
}

// gate is a TCP proxy to a ClickHouse server that drops every connection while
// closed: the store is away, then answers once opened.
type gate struct {
	ln   net.Listener
	open atomic.Bool
}

func newGate(t *testing.T, target string) *gate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !g.open.Load() {
				c.Close()
				continue
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c) }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
	return g
}

// serve starts while the store is away: it serves (/healthz answers, /readyz is
// 503), and once the store answers /readyz migrates it and says ready.
func TestIntegrationClickHouseServeStartsWithTheStoreAway(t *testing.T) {
	up := chtest.FreshDSN(t, "serveaway")
	u, err := url.Parse(up)
	if err != nil {
		t.Fatal(err)
	}
	g := newGate(t, u.Host)
	u.Host = g.ln.Addr().String()
	q := u.Query()
	q.Set("dial_timeout", "1s")
	u.RawQuery = q.Encode()
	dataDir := t.TempDir()
	cfgPath := filepath.Join(dataDir, "gpuprice.yaml")
	cfg := fmt.Sprintf("data_dir: %s\nsources:\n  fx: {enabled: false}\n", dataDir)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startServe(t, "--config", cfgPath, "--store", u.String())
	defer stop()
	status := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := status("/readyz"); c != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the store away: %d", c)
	}
	g.open.Store(true)
	waitFor(t, "/readyz once the store answers", func() bool { return status("/readyz") == http.StatusOK })
}

// `collect` with the store away when it starts: it collects into the spool, exits
// as a collection does, and nothing is lost.
func TestCollectWithTheStoreDownSpools(t *testing.T) {
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	down := fmt.Sprintf("clickhouse://127.0.0.1:%d/gpuprice_down?dial_timeout=1s", freePort(t))
	out, code := run(t, "--config", cfg, "--store", down, "collect", "--source", "lambda")
	if !collected(code) || !regexp.MustCompile(`lambda\s+\S+\s+(\d+)\s+\d+\s+\d+\s+(\d+)\s`).MatchString(out) {
		t.Fatalf("collect with the store down: exit %d\n%s", code, out)
	}
	m := regexp.MustCompile(`lambda\s+\S+\s+(\d+)\s+\d+\s+\d+\s+(\d+)\s`).FindStringSubmatch(out)
	if m[1] == "0" || m[1] != m[2] {
		t.Fatalf("accepted %s, spooled %s: want every accepted row spooled\n%s", m[1], m[2], out)
	}
	status, _ := run(t, "--config", cfg, "spool", "status")
	if !strings.Contains(status, " "+m[2]+" rows") {
		t.Fatalf("spool status %q, want %s rows", status, m[2])
	}
}

// serve holds at most server.MaxOpenConns connections however many clients connect
// and say nothing; silent connections are closed after the header timeout, and the
// service answers again.
func TestServeCapsOpenConnections(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpuprice.yaml")
	text := "data_dir: " + dir + "\nsources:\n  lambda: {endpoint: http://127.0.0.1:1/, schedule: '0 0 1 1 *'}\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startServeProcess(t, "--config", cfg, "--store", "duckdb://"+filepath.Join(dir, "s.duckdb"))
	defer stop()
	addr, err := server.ReadAddress(dir)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range server.MaxOpenConns + 300 {
		c, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			break // the accept queue is full: the kernel refuses, the server is fine
		}
		conns = append(conns, c)
	}
	time.Sleep(time.Second)
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", addr.PID))
	if err != nil {
		t.Skipf("cannot count serve's descriptors: %v", err)
	}
	if len(fds) > server.MaxOpenConns+100 {
		t.Errorf("serve holds %d descriptors with %d clients connected, want at most %d connections", len(fds), len(conns), server.MaxOpenConns)
	}
	// Silent connections are closed after ReadHeaderTimeout; then a client is served.
	hc := &http.Client{Timeout: 60 * time.Second}
	resp, err := hc.Get(base + "/healthz")
	if err != nil {
		t.Fatalf("/healthz with %d silent clients: %v", len(conns), err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %d", resp.StatusCode)
	}
}

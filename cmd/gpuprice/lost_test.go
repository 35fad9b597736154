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

	"github.com/gpuprice/gpuprice/analytics/api"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// A store that does not answer when a command starts: the import collects into the
// spool (exit 0, nothing lost), and once the store answers the next command
// migrates it and replays the spool, run records included.
func TestIntegrationClickHouseDownAtStartSpoolsThenMigrates(t *testing.T) {
	chtest.RequireServer(t, "a server that is down, then up")
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
	if code == 0 || !regexp.MustCompile(`import:csv\s+failed\s+25\s+0\s+0\s+0\s+0\s+\S+\s+25\s+25 rows lost`).MatchString(out) {
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
	chtest.RequireServer(t, "a server that is away, then back")
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
	if !collected(code) || !regexp.MustCompile(`lambda\s+\S+\s+(\d+)\s+\d+\s+\d+\s+\d+\s+(\d+)\s`).MatchString(out) {
		t.Fatalf("collect with the store down: exit %d\n%s", code, out)
	}
	m := regexp.MustCompile(`lambda\s+\S+\s+(\d+)\s+\d+\s+\d+\s+\d+\s+(\d+)\s`).FindStringSubmatch(out)
	if m[1] == "0" || m[1] != m[2] {
		t.Fatalf("accepted %s, spooled %s: want every accepted row spooled\n%s", m[1], m[2], out)
	}
	status, _ := run(t, "--config", cfg, "spool", "status")
	if !strings.Contains(status, " "+m[2]+" rows") {
		t.Fatalf("spool status %q, want %s rows", status, m[2])
	}
}

// serve holds at most api.MaxOpenConns connections however many clients connect
// and say nothing; silent connections are closed after the header timeout, and the
// service answers again.
func TestServeCapsOpenConnections(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpuprice.yaml")
	// Every client here is 127.0.0.1: the per-client cap is off, so that the global
	// cap is what is tested (TestSlowHeaderFloodLeavesHealthzAnswering tests the other).
	text := "data_dir: " + dir + "\nserve: {max_conns_per_client: -1}\nsources:\n" +
		"  lambda: {endpoint: http://127.0.0.1:1/, schedule: '0 0 1 1 *'}\n"
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startServeProcess(t, "--config", cfg, "--store", "duckdb://"+filepath.Join(dir, "s.duckdb"))
	defer stop()
	addr, err := api.ReadAddress(dir)
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
	for range api.MaxOpenConns + 300 {
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
	if len(fds) > api.MaxOpenConns+100 {
		t.Errorf("serve holds %d descriptors with %d clients connected, want at most %d connections", len(fds), len(conns), api.MaxOpenConns)
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

// Rows no store can hold, in one import with good rows, on both real stores: a row
// dated 2200 (past ClickHouse's DateTime), one with invalid UTF-8 (DuckDB cannot
// bind it) and one dated 2100 (which would be its series' "latest" for good) are
// quarantined with their reasons; every other row of their batch is stored, and
// prices shows the real latest price.
func TestPoisonRowsQuarantinedTheRestStored(t *testing.T) {
	var b strings.Builder
	b.WriteString("observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind\n")
	for i := range 20 {
		fmt.Fprintf(&b, "2026-01-02T03:04:05Z,lambda,specialist,poison-ok-%02d,H100-SXM-80GB,1,us-east-1,,on_demand,2,2,import\n", i)
		if i == 5 {
			b.WriteString("2200-01-01T00:00:00Z,lambda,specialist,bad-2200,H100-SXM-80GB,1,us-east-1,,on_demand,2,2,import\n")
			b.WriteString("2026-01-02T03:04:05Z,lambda,specialist,bad-\xff\xfe,H100-SXM-80GB,1,us-east-1,,on_demand,2,2,import\n")
			b.WriteString("2100-01-01T00:00:00Z,lambda,specialist,poison-ok-00,H100-SXM-80GB,1,us-east-1,,on_demand,0.5,0.5,import\n")
		}
	}
	csvPath := filepath.Join(t.TempDir(), "poison.csv")
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, dsn string) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "gpuprice.yaml")
		if err := os.WriteFile(cfg, []byte("data_dir: "+dir+"\ningest: {batch_size: 100, flush_interval: 1h}\nsources:\n  fx: {enabled: false}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := run(t, "--config", cfg, "--store", dsn, "import", "csv", csvPath)
		if code == cli.ExitDataLost || code == cli.ExitError {
			t.Fatalf("import: exit %d\n%s", code, out)
		}
		var runs []schemas.Run
		runJSON(t, &runs, "--config", cfg, "--store", dsn, "runs", "--format", "json")
		if len(runs) != 1 || runs[0].RowsAccepted != 20 || runs[0].RowsStored != 20 || runs[0].RowsQuarantine != 3 || runs[0].RowsLost != 0 {
			t.Fatalf("run records %+v: want 20 accepted and stored, 3 quarantined, none lost", runs)
		}
		var quar []schemas.Quarantined
		runJSON(t, &quar, "--config", cfg, "--store", dsn, "quarantine", "--format", "json")
		reasons := ""
		for _, q := range quar {
			reasons += q.Reason + "\n"
		}
		for _, want := range []string{"outside the storable range", "UTF-8", "in the future"} {
			if !strings.Contains(reasons, want) {
				t.Errorf("no quarantine reason with %q in:\n%s", want, reasons)
			}
		}
		var prices []schemas.Observation
		runJSON(t, &prices, "--config", cfg, "--store", dsn, "prices", "--provider", "lambda", "--all-series", "--format", "json")
		if len(prices) != 20 {
			t.Fatalf("%d series priced, want 20", len(prices))
		}
		for _, p := range prices {
			if p.SKU == "poison-ok-00" && (p.PriceUSDGPUHour != 2 || p.EffectiveAt.Year() != 2026) {
				t.Errorf("poison-ok-00's latest price is %v at %v, want the real 2 of 2026", p.PriceUSDGPUHour, p.EffectiveAt)
			}
		}
	}
	t.Run("DuckDB", func(t *testing.T) { check(t, "duckdb://"+filepath.Join(t.TempDir(), "p.duckdb")) })
	t.Run("ClickHouse", func(t *testing.T) { check(t, chtest.FreshDSN(t, "poison")) })
}

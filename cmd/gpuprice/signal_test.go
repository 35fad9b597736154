package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/schemas"
)

// asGPUPrice is the environment variable that makes the test binary run gpuprice's
// own main() (signal handling and exit status included) instead of the tests: the
// signal tests start it as a child process, as an operator or a supervisor would
// start the built binary.
const asGPUPrice = "GPUPRICE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asGPUPrice) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// slowAzure serves the first page of the recorded Azure answer at once, and holds
// the second page's request until the client gives up: a collection stopped in the
// middle. reached is closed when the second page is asked for (the first page's rows
// are then accepted).
func slowAzure(t *testing.T) (srv *httptest.Server, reached chan struct{}) {
	t.Helper()
	page1, err := os.ReadFile(filepath.Join("..", "..", "scrapers", "azure", "testdata", "page1", "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	reached = make(chan struct{})
	var once sync.Once
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/retail/prices" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Query().Get("$skip") == "" {
			w.Write(page1)
			return
		}
		once.Do(func() { close(reached) })
		select { // hold the page until the collection is stopped
		case <-r.Context().Done():
		case <-time.After(2 * time.Minute):
		}
	}))
	t.Cleanup(srv.Close)
	return srv, reached
}

// signalConfig writes a configuration with the slow Azure source alone, small
// batches (so that some rows are stored and some are in flight when the signal
// comes) and an HTTP timeout longer than the test.
func signalConfig(t *testing.T, endpoint string) (cfg, dir string) {
	dir = t.TempDir()
	text := fmt.Sprintf("data_dir: %s\nhttp: {timeout: 5m, retries: 1}\ningest: {batch_size: 7, flush_interval: 1h}\nsources:\n  azure: {endpoint: %s/api/retail/prices, schedule: '0 0 1 1 *'}\n", dir, endpoint)
	for _, n := range append(disabledOthers(), "vast", "lambda") {
		text += "  " + n + ": {enabled: false}\n"
	}
	cfg = filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

// startGPUPrice starts gpuprice (this test binary running main()) with args.
func startGPUPrice(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer, chan error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asGPUPrice+"=1")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &out, exited
}

// terminate sends SIGTERM and returns the exit status.
func terminate(t *testing.T, cmd *exec.Cmd, out *syncBuffer, exited chan error) int {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if err == nil {
			return 0
		}
		if !errors.As(err, &ee) {
			t.Fatalf("gpuprice: %v\n%s", err, out.String())
		}
		return ee.ExitCode()
	case <-time.After(90 * time.Second):
		t.Fatalf("gpuprice did not stop within 90 s of SIGTERM:\n%s", out.String())
	}
	return -1
}

// checkNothingLost reads the run record of the interrupted Azure collection and the
// rows stored and spooled: every accepted row is in one or the other.
func checkNothingLost(t *testing.T, cfg, dsn string) {
	t.Helper()
	var runs []schemas.Run
	runJSON(t, &runs, "--config", cfg, "--store", dsn, "runs", "--source", "azure", "--format", "json")
	if len(runs) != 1 {
		t.Fatalf("want one azure run record, got %+v", runs)
	}
	r := runs[0]
	if r.Status != schemas.RunInterrupted || r.RowsAccepted == 0 || r.RowsLost != 0 ||
		r.RowsStored+r.RowsSpooled != r.RowsAccepted {
		t.Fatalf("run record %+v: want interrupted, stored + spooled = accepted > 0, none lost", r)
	}
	exported, code := run(t, "--config", cfg, "--store", dsn, "export", "--format", "csv", "--provider", "azure")
	if code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	stored := strings.Count(exported, "\n") - 1
	status, _ := run(t, "--config", cfg, "spool", "status")
	m := regexp.MustCompile(`(\d+) rows,`).FindStringSubmatch(status)
	if m == nil {
		t.Fatalf("spool status: %q", status)
	}
	spooled := 0
	fmt.Sscan(m[1], &spooled)
	if stored != r.RowsStored || spooled != r.RowsSpooled {
		t.Fatalf("the run says %d stored and %d spooled; the store holds %d and the spool %d", r.RowsStored, r.RowsSpooled, stored, spooled)
	}
	t.Logf("interrupted run: %d accepted, %d stored, %d spooled, 0 lost", r.RowsAccepted, r.RowsStored, r.RowsSpooled)
}

// SIGTERM to `gpuprice collect` in the middle of a source: it stops reading, keeps
// what it read (stored or spooled), records the run as interrupted with its counts
// and exits 130.
func TestSIGTERMStopsCollectKeepingEveryRow(t *testing.T) {
	srv, reached := slowAzure(t)
	cfg, dir := signalConfig(t, srv.URL)
	dsn := "duckdb://" + filepath.Join(dir, "store.duckdb")
	cmd, out, exited := startGPUPrice(t, "--config", cfg, "--store", dsn, "collect", "--source", "azure")
	select {
	case <-reached:
	case err := <-exited:
		t.Fatalf("collect ended before the second page: %v\n%s", err, out.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("the second page was never asked for:\n%s", out.String())
	}
	time.Sleep(200 * time.Millisecond) // the first page's rows are accepted
	if code := terminate(t, cmd, out, exited); code != cli.ExitInterrupted {
		t.Fatalf("collect on SIGTERM exited %d, want %d:\n%s", code, cli.ExitInterrupted, out.String())
	}
	checkNothingLost(t, cfg, dsn)
}

// SIGTERM to `gpuprice serve` while a collection runs: it stops accepting
// connections, cuts the collection (what it read is stored or spooled, its run
// recorded as interrupted), and exits 130 rather than 0.
func TestSIGTERMStopsServeKeepingEveryRow(t *testing.T) {
	srv, reached := slowAzure(t)
	cfg, dir := signalConfig(t, srv.URL)
	dsn := "duckdb://" + filepath.Join(dir, "store.duckdb")
	cmd, out, exited := startGPUPrice(t, "--config", cfg, "--store", dsn, "serve", "--listen", "127.0.0.1:0", "--run-now")
	select {
	case <-reached:
	case err := <-exited:
		t.Fatalf("serve ended before the second page: %v\n%s", err, out.String())
	case <-time.After(90 * time.Second):
		t.Fatalf("the second page was never asked for:\n%s", out.String())
	}
	m := regexp.MustCompile(`serving on (http://[0-9.:]+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no address in %q", out.String())
	}
	time.Sleep(200 * time.Millisecond)
	code := terminate(t, cmd, out, exited)
	if code != cli.ExitInterrupted || !strings.Contains(out.String(), "collections cut short: azure") {
		t.Fatalf("serve on SIGTERM exited %d, want %d and the cut collection named:\n%s", code, cli.ExitInterrupted, out.String())
	}
	if _, err := http.Get(m[1] + "/healthz"); err == nil {
		t.Error("serve still accepts connections after it exited")
	}
	checkNothingLost(t, cfg, dsn)
}

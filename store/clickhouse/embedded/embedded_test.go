package embedded_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/store/clickhouse/embedded"
)

// engine opens the embedded engine on a directory of the test's, skipping the test
// when libchdb.so is not installed (failing it under CI, which installs it).
func engine(t *testing.T) *embedded.Engine {
	t.Helper()
	if embedded.LibraryPath() == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("libchdb.so is not installed under CI: " + embedded.InstallHint)
		}
		t.Skip("!!! SKIPPING: libchdb.so is not installed: " + embedded.InstallHint)
	}
	e, err := embedded.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func connect(t *testing.T, e *embedded.Engine, db string) ch.Conn {
	t.Helper()
	conn, err := ch.Open(&ch.Options{Protocol: ch.HTTP, Addr: []string{"chdb.embedded:8123"}, Auth: ch.Auth{Database: db},
		TransportFunc: func(*http.Transport) (http.RoundTripper, error) { return embedded.Transport{Engine: e}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestClickHouseGoOverTheEngine: clickhouse-go's own binding, batches, scanning,
// per-query settings and typed exceptions work through the transport, with values
// that a text protocol would mangle (NUL, quotes, backslashes, newlines).
func TestClickHouseGoOverTheEngine(t *testing.T) {
	e := engine(t)
	ctx := context.Background()
	admin := connect(t, e, "")
	if err := admin.Exec(ctx, "CREATE DATABASE IF NOT EXISTS emb"); err != nil {
		t.Fatal(err)
	}
	conn := connect(t, e, "emb")
	if err := conn.Exec(ctx, "CREATE TABLE t (a String, b Float64, c DateTime('UTC'), d Array(String)) "+
		"ENGINE = MergeTree ORDER BY (a, c)"); err != nil {
		t.Fatal(err)
	}
	hostile := "k\x00'\\\n\t` --"
	b, err := conn.PrepareBatch(ctx, "INSERT INTO t (a, b, c, d)")
	if err != nil {
		t.Fatal(err)
	}
	const n = 200_000 // several MB of blocks: large batches arrive whole
	for i := 0; i < n; i++ {
		if err := b.Append(hostile, float64(i), time.Unix(1700000000+int64(i), 0), []string{hostile, ""}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	var (
		count uint64
		sum   float64
		last  time.Time
		arr   []string
	)
	if err := conn.QueryRow(ctx, "SELECT count(), sum(b), max(c), any(d) FROM t WHERE a = ? AND c >= ?",
		hostile, time.Unix(1700000000, 0)).Scan(&count, &sum, &last, &arr); err != nil {
		t.Fatal(err)
	}
	if count != n || sum != float64(n)*(n-1)/2 || !last.Equal(time.Unix(1700000000+n-1, 0)) ||
		len(arr) != 2 || arr[0] != hostile {
		t.Fatalf("count %d sum %v last %v arr %q", count, sum, last, arr)
	}
	var bs uint64
	set := ch.Context(ctx, ch.WithSettings(ch.Settings{"max_block_size": 4096}))
	if err := conn.QueryRow(set, "SELECT toUInt64(getSetting('max_block_size'))").Scan(&bs); err != nil || bs != 4096 {
		t.Fatalf("per-query setting: %d, %v", bs, err)
	}
	// …and only for that query.
	if err := conn.QueryRow(ctx, "SELECT toUInt64(getSetting('max_block_size'))").Scan(&bs); err != nil || bs == 4096 {
		t.Fatalf("setting leaked into the next query: %d, %v", bs, err)
	}
	err = conn.Exec(ctx, "SELECT nope FROM t")
	var ex *ch.Exception
	if !errors.As(err, &ex) || ex.Code != 47 {
		t.Fatalf("want a *ch.Exception with code 47 (UNKNOWN_IDENTIFIER), got %T %v", err, err)
	}
	var version string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&version); err != nil || !strings.HasPrefix(version, "26.") {
		t.Fatalf("version %q, %v", version, err)
	}
}

// TestOneDirectoryPerProcess: a second directory is refused while the first is
// open, and shared when it is the same.
func TestOneDirectoryPerProcess(t *testing.T) {
	e := engine(t)
	again, err := embedded.Open(e.Dir())
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if _, err := embedded.Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "one data directory per process") {
		t.Fatalf("second directory: %v", err)
	}
}

// TestMissingLibraryFailsWithTheCure runs this test binary again with CHDB_LIB_PATH
// naming no file: opening the engine fails at once, saying how to install it.
func TestMissingLibraryFailsWithTheCure(t *testing.T) {
	if os.Getenv("GPUPRICE_TEST_MISSING_CHDB") == "1" {
		_, err := embedded.Open(t.TempDir())
		if !errors.Is(err, embedded.ErrNoLibrary) {
			t.Fatalf("want ErrNoLibrary, got %v", err)
		}
		os.Stdout.WriteString("ERROR: " + err.Error() + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMissingLibraryFailsWithTheCure$", "-test.v")
	cmd.Env = append(os.Environ(), "GPUPRICE_TEST_MISSING_CHDB=1", "CHDB_LIB_PATH=/nonexistent/libchdb.so")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "deploy/chdb/install.sh") || !strings.Contains(string(out), embedded.NPMPackage) {
		t.Fatalf("the error does not say how to install the library:\n%s", out)
	}
}

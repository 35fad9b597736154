package chtest

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/store/clickhouse/embedded"
)

// Embedded reports whether the tests run on the ClickHouse engine embedded in the
// process (EnvDSN is chdb://DIR) rather than on a server.
func Embedded() bool { return strings.HasPrefix(os.Getenv(EnvDSN), "chdb://") }

// RequireServer skips the test, saying why, when the tests run on the embedded
// engine: why names what the test needs of a server (its native protocol, a
// process to kill, a cluster).
func RequireServer(t testing.TB, why string) {
	t.Helper()
	if Embedded() {
		t.Skip("needs a ClickHouse server, not the embedded engine: " + why)
	}
}

var (
	processDirOnce sync.Once
	processDir     string
)

// embeddedDSN returns the chdb:// DSN of database db in this process's directory
// under u's, clearing there the directories of test processes that have ended.
func embeddedDSN(t testing.TB, u *url.URL, db string) *url.URL {
	t.Helper()
	root := strings.TrimPrefix(u.String(), "chdb://")
	root, _, _ = strings.Cut(root, "?")
	processDirOnce.Do(func() {
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "pid-"))
			if err != nil || !strings.HasPrefix(e.Name(), "pid-") {
				continue
			}
			if syscall.Kill(pid, 0) != nil { // that test process has ended
				os.RemoveAll(filepath.Join(root, e.Name()))
			}
		}
		processDir = filepath.Join(root, fmt.Sprintf("pid-%d", os.Getpid()))
	})
	v, err := url.Parse("chdb://" + processDir + "?database=" + db)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// embeddedAdmin opens a connection to the embedded engine of a chdb:// DSN, in its
// default database. The test root itself (ServerDSN's DSN) stands for this
// process's directory under it, as FreshDSN's databases do.
func embeddedAdmin(t testing.TB, u *url.URL) ch.Conn {
	t.Helper()
	dir, _, _ := strings.Cut(strings.TrimPrefix(u.String(), "chdb://"), "?")
	if root, _, _ := strings.Cut(strings.TrimPrefix(os.Getenv(EnvDSN), "chdb://"), "?"); dir == root {
		dir, _, _ = strings.Cut(strings.TrimPrefix(embeddedDSN(t, u, "default").String(), "chdb://"), "?")
	}
	e, err := embedded.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ch.Open(&ch.Options{
		Protocol: ch.HTTP,
		Addr:     []string{"chdb.embedded:8123"},
		TransportFunc: func(*http.Transport) (http.RoundTripper, error) {
			return embedded.Transport{Engine: e}, nil
		},
	})
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	return adminConn{Conn: conn, engine: e}
}

// adminConn closes its engine reference with the connection.
type adminConn struct {
	ch.Conn
	engine *embedded.Engine
}

func (a adminConn) Close() error {
	err := a.Conn.Close()
	a.engine.Close()
	return err
}

// Database returns the database a test DSN names: the path of a clickhouse:// DSN,
// the database parameter of a chdb:// one.
func Database(u *url.URL) string {
	if u.Scheme == "chdb" {
		if db := u.Query().Get("database"); db != "" {
			return db
		}
		return "default"
	}
	return strings.TrimPrefix(u.Path, "/")
}

// Conn opens a clickhouse-go connection to the database dsn names, on the server
// (clickhouse://) or on this process's embedded engine (chdb://), with settings
// applied to every query, as a client such as Grafana's plugin connects; the caller
// closes it.
func Conn(t testing.TB, dsn string, settings ch.Settings) ch.Conn {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "chdb" {
		opts, err := ch.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		opts.Settings = settings
		conn, err := ch.Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		return conn
	}
	dir, _, _ := strings.Cut(strings.TrimPrefix(dsn, "chdb://"), "?")
	e, err := embedded.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ch.Open(&ch.Options{
		Protocol: ch.HTTP,
		Addr:     []string{"chdb.embedded:8123"},
		Auth:     ch.Auth{Database: Database(u)},
		Settings: settings,
		TransportFunc: func(*http.Transport) (http.RoundTripper, error) {
			return embedded.Transport{Engine: e}, nil
		},
	})
	if err != nil {
		e.Close()
		t.Fatal(err)
	}
	return adminConn{Conn: conn, engine: e}
}

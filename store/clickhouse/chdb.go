package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/embedded"
)

// The DSN scheme "chdb" is this store over the ClickHouse engine embedded in the
// process (package embedded, chDB): the same code and SQL, clickhouse-go over its
// HTTP transport answered in-process instead of by a server.
//
//	chdb://DIR[?database=NAME]        e.g. chdb:///var/lib/gpuprice/ch, chdb://./ch
//
// DIR is a ClickHouse data directory (created when missing); the database defaults
// to "default". One directory per process (chDB's rule).
func init() {
	store.Register("chdb", func(ctx context.Context, u *url.URL) (store.Store, error) {
		return OpenEmbedded(ctx, u.String())
	})
	// The engine creates its data directory: a read that must create nothing
	// looks for it first.
	store.RegisterLocator("chdb", func(u *url.URL) error {
		dir, _, err := EmbeddedDir(u.String())
		if err != nil {
			return err
		}
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: the embedded ClickHouse directory %s does not exist", store.ErrNotExist, dir)
		}
		return nil
	})
}

// EmbeddedDir returns the data directory and database of a chdb:// DSN.
func EmbeddedDir(dsn string) (dir, database string, err error) {
	rest, ok := strings.CutPrefix(dsn, "chdb://")
	if !ok {
		return "", "", fmt.Errorf("clickhouse: DSN must be chdb://DIR[?database=NAME], got %s", store.Redact(dsn))
	}
	dir, query, _ := strings.Cut(rest, "?")
	if dir == "" {
		return "", "", fmt.Errorf(
			"clickhouse: chdb:// DSN %s names no data directory (chdb:///path/to/dir)",
			store.Redact(dsn),
		)
	}
	if dir, err = url.PathUnescape(dir); err != nil {
		return "", "", fmt.Errorf("clickhouse: chdb:// DSN %s: %w", store.Redact(dsn), err)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", fmt.Errorf("clickhouse: chdb:// DSN %s: %w", store.Redact(dsn), err)
	}
	for k := range q {
		if k != "database" {
			return "", "", fmt.Errorf(
				"clickhouse: chdb:// DSN %s: unknown parameter %q (only database=NAME)",
				store.Redact(dsn),
				k,
			)
		}
	}
	database = q.Get("database")
	if database == "" {
		database = "default"
	}
	if !identifier.MatchString(database) {
		return "", "", fmt.Errorf(
			"clickhouse: database name %q in %s: use letters, digits and _",
			database,
			store.Redact(dsn),
		)
	}
	return dir, database, nil
}

// OpenEmbedded opens the store of a chdb:// DSN, starting the embedded engine (it
// fails at once, saying how to install it, when libchdb.so is missing).
func OpenEmbedded(ctx context.Context, dsn string) (store.Store, error) {
	dir, database, err := EmbeddedDir(dsn)
	if err != nil {
		return nil, err
	}
	engine, err := embedded.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: %s: %w", store.Redact(dsn), err)
	}
	opts := &ch.Options{
		Protocol: ch.HTTP,
		Addr:     []string{"chdb.embedded:8123"}, // never dialled: the transport answers
		Auth:     ch.Auth{Database: database},
		TransportFunc: func(*http.Transport) (http.RoundTripper, error) {
			return embedded.Transport{Engine: engine}, nil
		},
		// The engine runs one statement at a time; a few connections let
		// concurrent callers queue on it rather than on the pool.
		MaxOpenConns: 8,
		MaxIdleConns: 8,
	}
	conn, err := ch.Open(opts)
	if err != nil {
		engine.Close()
		return nil, fmt.Errorf("clickhouse: open %s: %w", store.Redact(dsn), err)
	}
	return &Store{conn: conn, opts: opts, database: database, redacted: store.Redact(dsn), engine: engine}, nil
}

// TestedVersions are the ClickHouse releases (major.minor) every query and DDL of
// this store is tested on: Debian's server and the embedded engine.
var TestedVersions = []string{"18.16", "26.7"}

// VersionNotice returns a one-line notice when the server runs a ClickHouse release
// the SQL is not tested on (it should work: the SQL keeps to what both tested ends
// share), "" when it is one of TestedVersions or cannot be asked.
func (s *Store) VersionNotice(ctx context.Context) string {
	var v string
	if err := s.conn.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		return ""
	}
	return versionNotice(v)
}

func versionNotice(v string) string {
	f := strings.SplitN(v, ".", 3)
	if len(f) >= 2 {
		for _, t := range TestedVersions {
			if f[0]+"."+f[1] == t {
				return ""
			}
		}
	}
	return fmt.Sprintf("notice: this server runs ClickHouse %s; gpuprice's SQL is tested on ClickHouse %s "+
		"(the oldest and the newest it supports; see deploy/README.md)", v, strings.Join(TestedVersions, " and "))
}

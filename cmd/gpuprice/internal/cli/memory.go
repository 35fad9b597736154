package cli

import (
	"fmt"
	"net/url"
	"os"
	"runtime/debug"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/config"
)

// collectMemoryLimit is the Go runtime's soft memory limit of a one-shot collection
// (collect, reparse) when neither GOMEMLIMIT nor memory_limit says otherwise: a
// collection's live Go heap is a few batches of rows and what a source parses at a
// time (tens of megabytes at most), and without a limit the runtime lets its heap
// grow to twice that, and keeps freed pages for minutes, before giving memory back.
const collectMemoryLimit = 48 << 20

// collectDuckDB are the DuckDB settings a one-shot collection opens the embedded store
// with, unless its DSN sets them: one DuckDB thread (a collection's writes are appends
// and upserts of a few thousand rows at a time, which do not need more, and each
// DuckDB thread keeps an allocator arena and caches of its own: tens of megabytes).
var collectDuckDB = url.Values{"threads": {"1"}}

// oneShotCollection reports whether the command collects once and exits.
func oneShotCollection(name string) bool { return name == "collect" || name == "reparse" }

// applyMemoryLimit sets the Go runtime's soft memory limit from memory_limit, or the
// command's default, unless GOMEMLIMIT is set (the runtime has applied it). It
// returns the limit set, 0 for none.
func (a *app) applyMemoryLimit(command string) (int64, error) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, nil
	}
	limit := int64(0)
	if oneShotCollection(command) {
		limit = collectMemoryLimit
	}
	if s := a.cfg.MemoryLimit; s != "" {
		n, err := config.ParseMemoryLimit(s)
		if err != nil {
			return 0, fmt.Errorf("memory_limit: %w", err)
		}
		limit = n
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	return limit, nil
}

// withDuckDBDefaults adds the settings of defaults that an embedded store's DSN does
// not set itself; other DSNs are returned as they are.
func withDuckDBDefaults(dsn string, defaults url.Values) string {
	if len(defaults) == 0 {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "duckdb" {
		return dsn
	}
	q := u.Query()
	for k, v := range defaults {
		if !q.Has(k) {
			q[k] = v
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

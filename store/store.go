// Package store defines the one interface gpuprice keeps its data behind, and opens a
// backend from a DSN. Backends register themselves from init(): store/clickhouse
// ("clickhouse://host:9000/db") and store/duckdb ("duckdb:///path/file.duckdb"), the
// embedded default. Both pass the same conformance suite (store/storetest).
package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// ErrUnavailable marks an error that means the store could not be reached or refused
// the write as a whole; ingest spools the batch and retries later.
var ErrUnavailable = errors.New("store: unavailable")

// ErrLocked marks an embedded store whose file another process holds (DuckDB lets
// one process open a file at a time): typically a running `gpuprice serve`, whose
// HTTP API can answer instead.
var ErrLocked = errors.New("store: the database file is in use by another process")

// Filter selects observations. Empty fields match everything.
type Filter struct {
	GPU      string
	Provider string
	Pricing  string
	Region   string
	Tier     string
	Since    time.Time // effective_at >= Since when not zero
	Until    time.Time // effective_at < Until when not zero
}

// Writer stores observations. Writing an observation whose identity (series key plus
// effective_at) is already stored must not make it count twice in any query.
type Writer interface {
	WriteObservations(ctx context.Context, obs []schemas.Observation) error
}

// BatchSizer is the optional ability of a Writer to say how many observations one
// WriteObservations should carry for the engine to take them at its best rate
// (ClickHouse wants few large inserts; each DuckDB write is one transaction).
type BatchSizer interface {
	WriteBatchSize() int
}

// BatchByteSizer is the optional ability of a Writer to bound its batches by the
// memory their rows hold (ingest estimates it per row): a collection holds a batch
// filling and one being written per source, so rows with large attrs (AWS's) would
// otherwise make a batch of WriteBatchSize rows tens of megabytes.
type BatchByteSizer interface {
	WriteBatchBytes() int
}

// Unwrapper is a Writer that wraps another (a sink masking secrets, spooling…):
// WriteBatchSize looks through it.
type Unwrapper interface {
	Unwrap() Writer
}

// WriteBatchSize returns the batch size w (or a Writer it wraps) asks for, or def
// when none says.
func WriteBatchSize(w Writer, def int) int {
	return askThrough(w, def, BatchSizer.WriteBatchSize)
}

// WriteBatchBytes returns the batch bound in bytes w (or a Writer it wraps) asks
// for, or def when none says.
func WriteBatchBytes(w Writer, def int) int {
	return askThrough(w, def, BatchByteSizer.WriteBatchBytes)
}

// askThrough asks the first of w and the Writers it wraps (Unwrapper) that is a T,
// returning its answer when positive, else def.
func askThrough[T any](w Writer, def int, ask func(T) int) int {
	for w != nil {
		if b, ok := w.(T); ok {
			if n := ask(b); n > 0 {
				return n
			}
			return def
		}
		u, ok := w.(Unwrapper)
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	return def
}

// Store is what the rest of gpuprice uses.
type Store interface {
	Writer
	WriteQuarantine(ctx context.Context, q []schemas.Quarantined) error
	WriteRun(ctx context.Context, r schemas.Run) error

	// Migrate applies the backend's pending migrations and returns the versions it
	// applied (none when up to date).
	Migrate(ctx context.Context) ([]int, error)

	// Latest returns the newest observation of every series matching f, cheapest per
	// GPU-hour first (ties by provider, sku, region, zone, pricing).
	Latest(ctx context.Context, f Filter) ([]schemas.Observation, error)
	// Observations returns every stored observation matching f, ordered by series key
	// then effective_at, once each.
	Observations(ctx context.Context, f Filter) ([]schemas.Observation, error)
	// Each calls fn with every stored observation matching f, in the order and with
	// the deduplication of Observations, streaming rows from the backend instead of
	// holding them all (for exports of any size). It stops at the first error fn
	// returns and returns that error unwrapped.
	Each(ctx context.Context, f Filter, fn func(schemas.Observation) error) error

	// WriteFXRates stores daily FX rates; a rate whose identity (currency, date) is
	// stored already replaces it, and within rates the last of an identity wins.
	// Dates are stored as their UTC day. A rate that fails Validate fails the write.
	WriteFXRates(ctx context.Context, rates []schemas.FXRate) error
	// FXRates returns the stored rates dated on or after since's UTC day (all when
	// since is zero), ordered by currency then date.
	FXRates(ctx context.Context, since time.Time) ([]schemas.FXRate, error)
	// Runs returns run records, newest first; source "" means all; limit 0 means all.
	Runs(ctx context.Context, source string, limit int) ([]schemas.Run, error)
	// Quarantine returns quarantined rows, newest first; limit 0 means all.
	Quarantine(ctx context.Context, limit int) ([]schemas.Quarantined, error)

	Close() error
}

// ChangeMarker is the optional ability of a store to say cheaply whether anything
// was written, by this process or another: WriteMarker returns a value that changes
// whenever a run record is written (every collection, import and spool replay ends
// with one). Both backends have it; the server polls it to refresh its snapshot of
// the current prices when another process wrote.
type ChangeMarker interface {
	WriteMarker(ctx context.Context) (string, error)
}

// Opener opens a backend from a parsed DSN.
type Opener func(ctx context.Context, dsn *url.URL) (Store, error)

var (
	mu      sync.RWMutex
	openers = map[string]Opener{}
)

// Register makes a backend available under a DSN scheme. It panics on an empty scheme,
// a nil opener or a duplicate.
func Register(scheme string, o Opener) {
	if scheme == "" || o == nil {
		panic("store: Register with empty scheme or nil opener")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := openers[scheme]; dup {
		panic("store: Register called twice for " + scheme)
	}
	openers[scheme] = o
}

// Schemes lists the registered DSN schemes.
func Schemes() []string {
	mu.RLock()
	defer mu.RUnlock()
	var s []string
	for k := range openers {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// Open opens the store a DSN names, e.g. "clickhouse://localhost:9000/gpuprice" or
// "duckdb:///var/lib/gpuprice/gpuprice.duckdb". A bare path ("./prices.duckdb",
// "/var/lib/gpuprice/gpuprice.duckdb": no scheme) is the DuckDB file it names.
func Open(ctx context.Context, dsn string) (Store, error) {
	u, o, err := opener(dsn)
	if err != nil {
		return nil, err
	}
	return o(ctx, u)
}

func opener(dsn string) (*url.URL, Opener, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("store: bad DSN: %w", errors.New(Redact(dsn)))
	}
	if u.Scheme == "" && dsn != "" && !strings.Contains(dsn, "://") {
		abs, err := filepath.Abs(dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("store: %s: %w", dsn, err)
		}
		u = &url.URL{Scheme: "duckdb", Path: filepath.ToSlash(abs)}
	}
	mu.RLock()
	o, ok := openers[u.Scheme]
	mu.RUnlock()
	if !ok {
		return nil, nil, fmt.Errorf("store: unknown DSN scheme %q (known: %v)", u.Scheme, Schemes())
	}
	return u, o, nil
}

// ErrNotExist marks a store that OpenExisting found was never made: its file or
// directory is missing, or its database holds no gpuprice tables.
var ErrNotExist = errors.New("store: no such store")

// Prober is the optional ability of a Store to say, creating nothing, whether what
// it names holds gpuprice's tables (a database that exists and was migrated): nil
// when it does, an error wrapping ErrNotExist that says what is missing when not.
type Prober interface {
	Exists(ctx context.Context) error
}

// Locator is a backend's check, run before its Opener (which may create the file
// or directory a DSN names), that the place the DSN names exists: nil when it does,
// an error wrapping ErrNotExist when not.
type Locator func(u *url.URL) error

var locators = map[string]Locator{}

// RegisterLocator registers the existence check of a scheme whose Opener creates
// what it opens. It panics on an empty scheme, a nil check or a duplicate.
func RegisterLocator(scheme string, l Locator) {
	if scheme == "" || l == nil {
		panic("store: RegisterLocator with empty scheme or nil check")
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := locators[scheme]; dup {
		panic("store: RegisterLocator called twice for " + scheme)
	}
	locators[scheme] = l
}

// OpenExisting is Open for a caller that only reads: it creates nothing, and a store
// that was never made (a missing file or directory, a database that does not exist
// or holds no gpuprice tables) is an error wrapping ErrNotExist that names it.
func OpenExisting(ctx context.Context, dsn string) (Store, error) {
	u, o, err := opener(dsn)
	if err != nil {
		return nil, err
	}
	mu.RLock()
	l := locators[u.Scheme]
	mu.RUnlock()
	if l != nil {
		if err := l(u); err != nil {
			return nil, err
		}
	}
	st, err := o(ctx, u)
	if err != nil {
		return nil, err
	}
	if p, ok := st.(Prober); ok {
		if err := p.Exists(ctx); err != nil {
			st.Close()
			return nil, err
		}
	}
	return st, nil
}

// Redact returns dsn with any password replaced, for logs and errors.
func Redact(dsn string) string {
	if _, err := url.Parse(dsn); err != nil {
		return "<unparseable DSN>"
	}
	return schemas.RedactURL(dsn)
}

// PrepareFXRates is what backends do before writing rates: it validates each rate,
// moves its date to its UTC day, and keeps the last rate of each (currency, date)
// in the order of first appearance.
func PrepareFXRates(rates []schemas.FXRate) ([]schemas.FXRate, error) {
	type key struct {
		currency string
		day      int64
	}
	pos := make(map[key]int, len(rates))
	out := make([]schemas.FXRate, 0, len(rates))
	for _, r := range rates {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		r.Date = schemas.Day(r.Date)
		k := key{r.Currency, r.Date.Unix()}
		if i, ok := pos[k]; ok {
			out[i] = r
			continue
		}
		pos[k] = len(out)
		out = append(out, r)
	}
	return out, nil
}

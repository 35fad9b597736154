// Package duckdb is the embedded store backend: one DuckDB file, no server. It
// registers the DSN scheme "duckdb" (duckdb:///abs/path/file.duckdb).
// The long story (modes, rules, limits) is in its README.md.
package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

func init() {
	store.Register("duckdb", func(ctx context.Context, u *url.URL) (store.Store, error) {
		if u.Opaque != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf(
				"duckdb: DSN must be duckdb:///absolute/path/file.duckdb, got %q",
				store.Redact(u.String()),
			)
		}
		return open(ctx, u.Path, u.RawQuery)
	})
	// open creates the file: a read that must create nothing looks for it first.
	store.RegisterLocator("duckdb", func(u *url.URL) error {
		if _, err := os.Stat(u.Path); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: the file %s does not exist", store.ErrNotExist, u.Path)
		}
		return nil
	})
}

// Store is a DuckDB-backed store.Store. It is safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string

	mu          sync.Mutex // serialises writes and guards lastVersion and versionsAbove
	lastVersion uint64
	// versionsAbove is set once lastVersion is known to be at least every stored
	// observation's version (read from the table at the first write), so that the
	// rows a write appends are told from the stored ones by their version alone
	// (see appendObservations).
	versionsAbove bool
}

var _ store.Store = (*Store)(nil)

// Open opens (creating it and its parent directory if needed) the DuckDB file at
// path. Call Migrate before the first use of a new file.
func Open(ctx context.Context, path string) (store.Store, error) {
	return open(ctx, path, "")
}

// open opens path with DuckDB configuration options given as a URL query
// (e.g. "threads=2&memory_limit=1GB"), passed to the driver as they are.
func open(ctx context.Context, path, config string) (*Store, error) {
	if path == "" {
		return nil, errors.New("duckdb: empty database path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("duckdb: create directory of %s: %w", path, err)
	}
	dsn := path
	if config != "" {
		dsn += "?" + config
	}
	conn, err := duckdb.NewConnector(dsn, nil)
	if err != nil {
		return nil, openError(path, err)
	}
	db := sql.OpenDB(conn)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, openError(path, err)
	}
	return &Store{db: db, path: path}, nil
}

// ErrLocked is returned when another process holds the database file: DuckDB lets
// one process write a file at a time. It is store.ErrLocked, so that callers need
// not import this package to recognise it.
var ErrLocked = store.ErrLocked

func openError(path string, err error) error {
	if strings.Contains(err.Error(), "Could not set lock on file") {
		return fmt.Errorf(
			"%w: %s (a running `gpuprice serve` holds its embedded store: query its HTTP API, stop it, or use ClickHouse for "+
				"several processes): %v",
			ErrLocked,
			path,
			err,
		)
	}
	return fmt.Errorf("duckdb: open %s: %w", path, err)
}

// String names the file, for logs.
func (s *Store) String() string { return "duckdb://" + s.path }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("duckdb: close %s: %w", s.path, err)
	}
	return nil
}

// Exists says whether the file holds gpuprice's tables (store.Prober).
func (s *Store) Exists(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_name = 'schema_migrations'`).Scan(&n); err != nil {
		return fmt.Errorf("duckdb: %s: %w", s.path, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: the file %s holds no gpuprice tables", store.ErrNotExist, s.path)
	}
	return nil
}

// Migrate applies the pending migrations of schemas/ddl/duckdb, each in its own
// transaction together with its schema_migrations row, and returns their versions.
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	ms, err := schemas.Migrations(schemas.BackendDuckDB)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	applied := map[int]bool{}
	var exists int
	err = s.db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_name = 'schema_migrations'`).Scan(&exists)
	if err != nil {
		return nil, fmt.Errorf("duckdb: migrate: %w", err)
	}
	if exists > 0 {
		rows, err := s.db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return nil, fmt.Errorf("duckdb: migrate: read applied versions: %w", err)
		}
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("duckdb: migrate: read applied versions: %w", err)
			}
			applied[v] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("duckdb: migrate: read applied versions: %w", err)
		}
	}
	var done []int
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		if err := s.apply(ctx, m); err != nil {
			return done, err
		}
		done = append(done, m.Version)
	}
	return done, nil
}

// afterMigration is work a migration needs done with data once its statements
// ran, in its transaction, by migration name.
var afterMigration = map[string]func(context.Context, *sql.Tx) error{
	// the summaries of the days whose hourly bars were built before
	"volatility_days_duckdb": func(ctx context.Context, tx *sql.Tx) error {
		return writeVolatilityDays(ctx, tx, time.Time{}, time.Time{})
	},
}

func (s *Store) apply(ctx context.Context, m schemas.Migration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("duckdb: migration %04d_%s: %w", m.Version, m.Name, err)
	}
	defer tx.Rollback() // a no-op after Commit
	for i, stmt := range m.Statements {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("duckdb: migration %04d_%s statement %d: %w", m.Version, m.Name, i+1, err)
		}
	}
	if after := afterMigration[m.Name]; after != nil {
		if err := after(ctx, tx); err != nil {
			return fmt.Errorf("duckdb: migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, time.Now().UTC().Truncate(time.Second)); err != nil {
		return fmt.Errorf("duckdb: migration %04d_%s: record: %w", m.Version, m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("duckdb: migration %04d_%s: commit: %w", m.Version, m.Name, err)
	}
	return nil
}

// versions returns n increasing write versions: the clock in nanoseconds, kept
// strictly above every version this store handed out before. Callers hold s.mu.
func (s *Store) versions(n int) uint64 {
	v := uint64(time.Now().UnixNano())
	if v <= s.lastVersion {
		v = s.lastVersion + 1
	}
	s.lastVersion = v + uint64(n)
	return v
}

// obsColumns names the columns of observations a write sets and a read returns,
// in store.ObservationColumns' order.
var obsColumns = store.ObservationColumnNames()

// rowsPerInsert bounds one multi-row INSERT of the small tables (fx_rates,
// quarantine).
const rowsPerInsert = 200

// WriteBatchSize is how many rows ingest should hand WriteObservations at once:
// each write is one transaction that appends its rows and upserts them from there.
// It is one DuckDB row group (122,880 rows): a transaction that appends at least a
// row group has its rows written to the file compressed, in row groups, and merged
// into the table at commit; one that appends fewer has every row serialised into
// the write-ahead log at commit and written again, compressed, by the checkpoint
// that follows every 16 MB of log, which was most of an import of 15,000-row
// batches (BENCHMARKS.md).
func (s *Store) WriteBatchSize() int { return rowGroupSize }

// rowGroupSize is DuckDB's default row group size (rows).
const rowGroupSize = 122_880

// WriteBatchBytes bounds a collection's batches by memory (store.BatchByteSizer):
// 8 MiB of rows (about 6,000 AWS rows with their attrs), so that a collection of a
// large source holds a few megabytes of rows, not the hundred megabytes of a row
// group of them. Imports batch by WriteBatchSize alone.
func (s *Store) WriteBatchBytes() int { return 8 << 20 }

// obsReplace deletes the stored rows of the identities a write appended (see
// appendObservations): the appended rows are those of version ≥ ?1, every stored
// row's version is below it, and both sides are bounded by the appended rows' span
// of effective_at, [?2, ?3], so that DuckDB skips the row groups outside it (and the
// stored row groups, all of a lower version) by their zone maps. The appended rows
// are the build side of a hash join. observations has no primary key (migration
// 14): one row per identity holds because every write goes through here, one at a
// time (s.mu; DuckDB lets one process write a file).
const obsReplace = `DELETE FROM observations AS o USING (
		SELECT effective_at, provider, sku, region, zone, pricing FROM observations
		WHERE version >= $1 AND effective_at BETWEEN $2 AND $3) AS s
	WHERE o.version < $1 AND o.effective_at BETWEEN $2 AND $3
		AND o.effective_at = s.effective_at AND o.provider = s.provider AND o.sku = s.sku
		AND o.region = s.region AND o.zone = s.zone AND o.pricing = s.pricing`

// tableColumns returns the columns of observations among names (obsColumns and
// version) in the table's order, the order an appender takes them in (migrations
// add columns at the end).
func tableColumns(ctx context.Context, c driver.QueryerContext, names []string) ([]string, error) {
	rows, err := c.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'observations' ORDER BY ordinal_position`, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	dest := make([]driver.Value, 1)
	for {
		if err := rows.Next(dest); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		if n, ok := dest[0].(string); ok && want[n] {
			out = append(out, n)
		}
	}
	if len(out) != len(names) {
		return nil, fmt.Errorf(
			"table observations has %d of the %d columns written (%v): run `gpuprice migrate`",
			len(out),
			len(names),
			names,
		)
	}
	return out, nil
}

// obsColumnNames is obsColumns then version, as a list.
var obsColumnNames = func() []string {
	var out []string
	for _, c := range store.ObservationColumns {
		out = append(out, c.Name)
	}
	return append(out, "version")
}()

// WriteObservations upserts obs in one transaction through DuckDB's appender: the
// rows are appended to observations (never bound row by row as parameters), then
// the stored rows of their identities are deleted by one DELETE … USING
// (obsReplace). Within obs, the last row of an identity wins.
func (s *Store) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	obs = store.LastPerIdentity(obs)
	if len(obs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.versionsAbove {
		// Versions are the clock: one of a write by another process (or this
		// machine before its clock was set back) may be ahead of it.
		var stored uint64
		if err := s.db.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM observations`).Scan(&stored); err != nil {
			return fmt.Errorf("duckdb: write observations: %w", err)
		}
		s.lastVersion = max(s.lastVersion, stored)
		s.versionsAbove = true
	}
	version := s.versions(len(obs))

	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("duckdb: write observations: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(interface {
			driver.Conn
			driver.ExecerContext
			driver.QueryerContext
		})
		if !ok {
			return fmt.Errorf("driver connection %T cannot append", dc)
		}
		if _, err := c.ExecContext(ctx, "BEGIN TRANSACTION", nil); err != nil {
			return err
		}
		if err := appendObservations(ctx, c, obs, version); err != nil {
			_, _ = c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil)
			return err
		}
		if _, err := c.ExecContext(ctx, "COMMIT", nil); err != nil {
			_, _ = c.ExecContext(context.WithoutCancel(ctx), "ROLLBACK", nil)
			return fmt.Errorf("commit: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("duckdb: write observations: %w", err)
	}
	return nil
}

// appendObservations upserts obs on c, inside the caller's transaction: it appends
// them to observations, their versions from version on (above every stored row's),
// taking each row's values from store.ObservationColumns, then deletes the stored
// rows of the same identities (obsReplace). Appending to the table itself, rather
// than to a staging table copied in by an INSERT … SELECT, stores each value once;
// a write of a row group or more has its rows written to the file in compressed row
// groups as they are appended (WriteBatchSize).
func appendObservations(ctx context.Context, c interface {
	driver.Conn
	driver.ExecerContext
	driver.QueryerContext
}, obs []schemas.Observation, version uint64) error {
	cols, err := tableColumns(ctx, c, obsColumnNames)
	if err != nil {
		return err
	}
	pos := map[string]int{}
	for i, n := range cols {
		pos[n] = i
	}
	if err := stage(c, obs, version, cols, pos); err != nil {
		return err
	}
	lo, hi := utc(obs[0].EffectiveAt), utc(obs[0].EffectiveAt)
	for i := range obs {
		t := utc(obs[i].EffectiveAt)
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	// Only where stored rows meet the batch in time can one share an identity with
	// it: the DELETE joins that span alone, none when there is none. A file imported
	// in time order meets the rows before it at one timestamp, where the whole span
	// of every batch cost a join of all its rows.
	lo, hi, ok, err := storedSpan(ctx, c, version, lo, hi)
	if err != nil || !ok {
		return err
	}
	_, err = c.ExecContext(
		ctx,
		obsReplace,
		[]driver.NamedValue{{Ordinal: 1, Value: version}, {Ordinal: 2, Value: lo}, {Ordinal: 3, Value: hi}},
	)
	return err
}

// storedSpan narrows [lo, hi] to the effective times of the rows stored before
// version within it; ok is false when there are none.
func storedSpan(ctx context.Context, c driver.QueryerContext, version uint64, lo, hi time.Time) (
	time.Time, time.Time, bool, error) {
	rows, err := c.QueryContext(ctx, `SELECT min(effective_at), max(effective_at) FROM observations
		WHERE version < $1 AND effective_at BETWEEN $2 AND $3`,
		[]driver.NamedValue{{Ordinal: 1, Value: version}, {Ordinal: 2, Value: lo}, {Ordinal: 3, Value: hi}})
	if err != nil {
		return lo, hi, false, err
	}
	defer rows.Close()
	v := make([]driver.Value, 2)
	if err := rows.Next(v); err != nil {
		return lo, hi, false, err
	}
	from, ok1 := v[0].(time.Time)
	to, ok2 := v[1].(time.Time)
	if !ok1 || !ok2 { // NULL: no stored row in the span
		return lo, hi, false, nil
	}
	return utc(from), utc(to), true, nil
}

// stage appends obs to observations (the columns cols) through DuckDB's appender.
func stage(c driver.Conn, obs []schemas.Observation, version uint64, cols []string, pos map[string]int) error {
	a, err := duckdb.NewAppenderWithColumns(c, "", "", "observations", cols)
	if err != nil {
		return err
	}
	var enc store.AttrsEncoder
	row := make([]driver.Value, len(cols))
	at := make([]int, len(store.ObservationColumns)) // row position of each column
	for j, col := range store.ObservationColumns {
		at[j] = pos[col.Name]
	}
	versionAt := pos["version"]
	// A text or number column's value is boxed into the row's interface once per
	// change: most columns repeat from row to row (provider, tier, currency,
	// gpu_count, …), and boxing allocates.
	last := make([]string, len(store.ObservationColumns))
	lastNum := make([]uint64, len(store.ObservationColumns)) // bits, so that -0 is not 0
	for i := range obs {
		o := &obs[i]
		for j, col := range store.ObservationColumns {
			switch {
			case col.Time != nil:
				row[at[j]] = utc(col.Time(o))
			case col.Text != nil:
				if v := col.Text(o); i == 0 || v != last[j] {
					last[j], row[at[j]] = v, v
				}
			case col.Number != nil:
				if v := col.Number(o); i == 0 || math.Float64bits(v) != lastNum[j] {
					lastNum[j], row[at[j]] = math.Float64bits(v), v
				}
			default: // attrs
				attrs, err := enc.Encode(o.Attrs)
				if err != nil {
					_ = a.Close()
					return fmt.Errorf("%s: %w", o.SeriesKey(), err)
				}
				row[at[j]] = attrs
			}
		}
		row[versionAt] = version + uint64(i)
		if err := a.AppendRow(row...); err != nil {
			_ = a.Close()
			return fmt.Errorf("%s: %w", o.SeriesKey(), err)
		}
	}
	return a.Close()
}

func utc(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// where turns a filter into a WHERE clause with ? placeholders and its arguments.
// Column names are constants; values are only ever parameters.
func where(f store.Filter) (string, []any) {
	var (
		conds []string
		args  []any
	)
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("gpu", f.GPU)
	eq("provider", f.Provider)
	eq("pricing", f.Pricing)
	eq("region", f.Region)
	eq("tier", f.Tier)
	if !f.Since.IsZero() {
		conds = append(conds, "effective_at >= ?")
		args = append(args, utc(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "effective_at < ?")
		args = append(args, utc(f.Until))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Latest returns the newest observation of every series among those matching f,
// cheapest per GPU-hour first.
func (s *Store) Latest(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	w, args := where(f)
	q := `SELECT ` + obsColumns + ` FROM observations` + w + `
		QUALIFY row_number() OVER (PARTITION BY provider, sku, region, zone, pricing ORDER BY effective_at DESC) = 1
		ORDER BY price_usd_gpu_hour, provider, sku, region, zone, pricing`
	out, err := s.queryObservations(ctx, q, args)
	if err != nil {
		return nil, fmt.Errorf("duckdb: latest: %w", err)
	}
	return out, nil
}

// Observations returns every observation matching f by series key then effective_at.
func (s *Store) Observations(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	return store.CollectObservations(ctx, f, s.Each)
}

// Each streams the observations matching f by series key then effective_at.
func (s *Store) Each(ctx context.Context, f store.Filter, fn func(schemas.Observation) error) error {
	w, args := where(f)
	q := `SELECT ` + obsColumns + ` FROM observations` + w + `
		ORDER BY provider, sku, region, zone, pricing, effective_at`
	err := s.eachObservation(ctx, q, args, store.Stopping(fn))
	if cerr, ok := store.Stopped(err); ok {
		return cerr
	}
	if err != nil {
		return fmt.Errorf("duckdb: observations: %w", err)
	}
	return nil
}

func (s *Store) queryObservations(ctx context.Context, q string, args []any) ([]schemas.Observation, error) {
	var out []schemas.Observation
	err := s.eachObservation(ctx, q, args, func(o schemas.Observation) error {
		out = append(out, o)
		return nil
	})
	return out, err
}

// eachObservation runs q and calls fn for each row, one at a time.
func (s *Store) eachObservation(ctx context.Context, q string, args []any, fn func(schemas.Observation) error) error {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			o             schemas.Observation
			attrs, origin string
		)
		if err := rows.Scan(&o.ObservedAt, &o.EffectiveAt, &o.Provider, &o.Tier, &o.SKU, &o.Region,
			&o.Zone, &o.GPU, &o.GPUName, &o.GPUCount, &o.GPUMemoryGB, &o.Pricing, &o.PriceUSDHour,
			&o.PriceUSDGPUHour, &o.Currency, &o.PriceNative, &o.Unit, &o.FXRate, &o.Interconnect,
			&o.SourceKind, &o.SourceURL, &o.RunID, &attrs, &o.PriceScope, &o.PriceBasis, &origin); err != nil {
			return err
		}
		o.ObservedAt, o.EffectiveAt = o.ObservedAt.UTC(), o.EffectiveAt.UTC()
		if o.Attrs, err = store.DecodeAttrs(attrs); err != nil {
			return err
		}
		if origin != "" && o.Attrs[schemas.AttrOrigin] == "" { // the column is the attribute's copy
			if o.Attrs == nil {
				o.Attrs = map[string]string{}
			}
			o.Attrs[schemas.AttrOrigin] = origin
		}
		if err := fn(o); err != nil {
			return err
		}
	}
	return rows.Err()
}

// WriteFXRates upserts rates in one transaction; the last write of a (currency,
// date) wins.
func (s *Store) WriteFXRates(ctx context.Context, rates []schemas.FXRate) error {
	rates, err := store.PrepareFXRates(rates)
	if err != nil {
		return fmt.Errorf("duckdb: write fx rates: %w", err)
	}
	if len(rates) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	version := s.versions(len(rates))
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("duckdb: write fx rates: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	for start := 0; start < len(rates); start += rowsPerInsert {
		chunk := rates[start:min(start+rowsPerInsert, len(rates))]
		args := make([]any, 0, 5*len(chunk))
		for i, r := range chunk {
			args = append(
				args,
				r.Date.Format(time.DateOnly),
				r.Currency,
				r.USDPerUnit,
				r.Source,
				version+uint64(start+i),
			)
		}
		q := `INSERT INTO fx_rates (date, currency, usd_per_unit, source, version) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(CAST(? AS DATE), ?, ?, ?, ?), ", len(chunk)), ", ") +
			` ON CONFLICT (currency, date) DO UPDATE SET usd_per_unit = excluded.usd_per_unit,
			source = excluded.source, version = excluded.version`
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("duckdb: write fx rates: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("duckdb: write fx rates: commit: %w", err)
	}
	return nil
}

// FXRates returns the rates dated on or after since's UTC day, by currency then date.
func (s *Store) FXRates(ctx context.Context, since time.Time) ([]schemas.FXRate, error) {
	q := `SELECT CAST(date AS VARCHAR), currency, usd_per_unit, source FROM fx_rates`
	var args []any
	if !since.IsZero() {
		q += ` WHERE date >= CAST(? AS DATE)`
		args = append(args, schemas.Day(since).Format(time.DateOnly))
	}
	q += ` ORDER BY currency, date`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: fx rates: %w", err)
	}
	defer rows.Close()
	out, err := store.ScanFXRates(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: fx rates: %w", err)
	}
	return out, nil
}

// WriteRun upserts a run record; a record with the same run_id and source is replaced.
func (s *Store) WriteRun(ctx context.Context, r schemas.Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO runs (run_id, source, started_at, finished_at, status,
		rows_accepted, rows_quarantined, unknown_gpus, rows_stored, rows_spooled, rows_lost, error, version, rows_suspect,
		rows_not_offered, owner, span_since, span_until)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, source) DO UPDATE SET started_at = excluded.started_at,
		finished_at = excluded.finished_at, status = excluded.status,
		rows_accepted = excluded.rows_accepted, rows_quarantined = excluded.rows_quarantined,
		unknown_gpus = excluded.unknown_gpus, rows_stored = excluded.rows_stored,
		rows_spooled = excluded.rows_spooled, rows_lost = excluded.rows_lost,
		error = excluded.error, version = excluded.version, rows_suspect = excluded.rows_suspect,
		rows_not_offered = excluded.rows_not_offered, owner = excluded.owner, span_since = excluded.span_since,
		span_until = excluded.span_until`,
		r.RunID, r.Source, utc(r.StartedAt), utc(r.FinishedAt), r.Status, int64(r.RowsAccepted),
		int64(r.RowsQuarantine), int64(r.UnknownGPUs), int64(r.RowsStored), int64(r.RowsSpooled), int64(r.RowsLost),
		r.Error, s.versions(1), int64(r.RowsSuspect), int64(r.RowsNotOffered), r.Owner, store.UnixSeconds(r.SpanSince),
		store.UnixSeconds(r.SpanUntil))
	if err != nil {
		return fmt.Errorf("duckdb: write run %s/%s: %w", r.RunID, r.Source, err)
	}
	return nil
}

// WriteMarker changes whenever a run record is written (store.ChangeMarker).
func (s *Store) WriteMarker(ctx context.Context) (string, error) {
	var n, v uint64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*), coalesce(max(version), 0) FROM runs`).Scan(&n, &v); err != nil {
		return "", fmt.Errorf("duckdb: write marker: %w", err)
	}
	return fmt.Sprintf("%d/%d", n, v), nil
}

// Runs returns run records newest first (ties by run_id, source); source "" means
// all, limit 0 means all.
func (s *Store) Runs(ctx context.Context, source string, limit int) ([]schemas.Run, error) {
	if limit < 0 {
		return nil, fmt.Errorf("duckdb: runs: negative limit %d", limit)
	}
	q := ``
	var args []any
	if source != "" {
		q += ` WHERE source = ?`
		args = append(args, source)
	}
	q += ` ORDER BY started_at DESC, run_id, source`
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return s.runs(ctx, "runs", q, args...)
}

// StartedRuns returns the records that say started (store.RunJournal), oldest
// first.
func (s *Store) StartedRuns(ctx context.Context) ([]schemas.Run, error) {
	return s.runs(ctx, "started runs", ` WHERE status = ? ORDER BY started_at, run_id, source`, schemas.RunStarted)
}

func (s *Store) runs(ctx context.Context, op, rest string, args ...any) ([]schemas.Run, error) {
	q := `SELECT run_id, source, started_at, finished_at, status, rows_accepted, rows_quarantined,
		unknown_gpus, error, rows_stored, rows_spooled, rows_lost, rows_suspect,
		rows_not_offered, owner, span_since, span_until FROM runs` + rest
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %s: %w", op, err)
	}
	defer rows.Close()
	out, err := store.ScanRuns(rows, time.Time.UTC)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %s: %w", op, err)
	}
	return out, nil
}

// WriteQuarantine appends quarantined rows in one transaction.
func (s *Store) WriteQuarantine(ctx context.Context, q []schemas.Quarantined) error {
	if len(q) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("duckdb: write quarantine: %w", err)
	}
	defer tx.Rollback() // a no-op after Commit
	for start := 0; start < len(q); start += rowsPerInsert {
		chunk := q[start:min(start+rowsPerInsert, len(q))]
		args := make([]any, 0, 5*len(chunk))
		for _, r := range chunk {
			args = append(args, utc(r.QuarantinedAt), r.RunID, r.Source, r.Reason, r.Raw)
		}
		stmt := `INSERT INTO quarantine (quarantined_at, run_id, source, reason, raw) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", len(chunk)), ", ")
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("duckdb: write quarantine: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("duckdb: write quarantine: commit: %w", err)
	}
	return nil
}

// Quarantine returns quarantined rows newest first; limit 0 means all.
func (s *Store) Quarantine(ctx context.Context, limit int) ([]schemas.Quarantined, error) {
	q, args, err := store.QuarantineQuery(limit)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: quarantine: %w", err)
	}
	defer rows.Close()
	out, err := store.ScanQuarantine(rows, time.Time.UTC)
	if err != nil {
		return nil, fmt.Errorf("duckdb: quarantine: %w", err)
	}
	return out, nil
}

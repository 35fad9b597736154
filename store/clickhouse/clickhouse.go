// Package clickhouse is the production store backend over ClickHouse's native
// protocol (clickhouse-go/v2). It registers the DSN scheme "clickhouse":
// The long story (modes, rules, limits) is in its README.md.
package clickhouse

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/embedded"
)

func init() {
	store.Register("clickhouse", func(ctx context.Context, u *url.URL) (store.Store, error) {
		return Open(ctx, u.String())
	})
}

// Store is a ClickHouse-backed store.Store. It is safe for concurrent use.
type Store struct {
	conn     driver.Conn
	opts     *ch.Options // for the database-creating connection of Migrate
	database string
	cluster  string           // the cluster of the DSN's cluster parameter; "" on one server
	redacted string           // the DSN with its password replaced
	engine   *embedded.Engine // the in-process engine of a chdb:// store, else nil

	mu          sync.Mutex // guards lastVersion
	lastVersion uint64
}

var _ store.Store = (*Store)(nil)

// PoolSize is the number of connections a store opens at most unless the DSN's
// max_open_conns says otherwise: above the HTTP server's concurrent computations
// (server.MaxComputing) plus one connection per source collecting, and far below
// ClickHouse's max_concurrent_queries (100).
const PoolSize = 48

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Open prepares a store for the DSN without dialling; see the package comment.
func Open(ctx context.Context, dsn string) (store.Store, error) {
	if strings.HasPrefix(dsn, "chdb://") {
		return OpenEmbedded(ctx, dsn)
	}
	return open(dsn)
}

func open(dsn string) (*Store, error) {
	redacted := store.Redact(dsn)
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "clickhouse" || u.Host == "" {
		return nil, fmt.Errorf(
			"clickhouse: DSN must be clickhouse://[user[:password]@]host:port/database, got %s",
			redacted,
		)
	}
	dsn, cluster, err := clusterParam(u)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: %s: %w", redacted, err)
	}
	opts, err := ch.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: bad DSN %s: %w", redacted, scrub(err, u))
	}
	if cluster != "" {
		clusterSettings(opts)
	}
	// clickhouse-go's pool holds 10 connections unless told, and a caller past them
	// waits up to dial_timeout for one ("acquire conn timeout"): size it for the
	// server's concurrent queries and the collections beside them.
	if !u.Query().Has("max_open_conns") {
		opts.MaxOpenConns = PoolSize
	}
	if !u.Query().Has("max_idle_conns") {
		opts.MaxIdleConns = min(opts.MaxOpenConns, PoolSize/2)
	}
	if opts.Auth.Database == "" {
		opts.Auth.Database = "default"
	}
	if !identifier.MatchString(opts.Auth.Database) {
		return nil, fmt.Errorf(
			"clickhouse: database name %q in %s: use letters, digits and _",
			opts.Auth.Database,
			redacted,
		)
	}
	conn, err := ch.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: open %s: %w", redacted, scrub(err, u))
	}
	return &Store{conn: conn, opts: opts, database: opts.Auth.Database, cluster: cluster, redacted: redacted}, nil
}

// scrub returns err, or when the DSN's password appears in its text, an error with
// the password replaced (and the chain of err lost).
func scrub(err error, u *url.URL) error {
	if u.User == nil {
		return err
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "REDACTED"))
}

// String is the DSN without its password, for logs.
func (s *Store) String() string { return s.redacted }

// Close closes the connections.
func (s *Store) Close() error {
	err := s.conn.Close()
	if s.engine != nil {
		s.engine.Close()
	}
	if err != nil {
		return fmt.Errorf("clickhouse: close %s: %w", s.redacted, err)
	}
	return nil
}

// retryable are server error codes that say "not now" rather than "never":
// overload, timeouts, read-only replicas, coordination trouble.
var retryable = map[int32]bool{
	// On a cluster, the node a Distributed insert or query is forwarded to may
	// drop the connection midway (a replica killed or restarted).
	3:   true, // UNEXPECTED_END_OF_FILE
	32:  true, // ATTEMPT_TO_READ_AFTER_EOF
	279: true, // ALL_CONNECTION_TRIES_FAILED
	159: true, // TIMEOUT_EXCEEDED
	164: true, // READONLY
	202: true, // TOO_MANY_SIMULTANEOUS_QUERIES
	203: true, // NO_FREE_CONNECTION
	209: true, // SOCKET_TIMEOUT
	210: true, // NETWORK_ERROR
	225: true, // NO_ZOOKEEPER
	236: true, // ABORTED
	241: true, // MEMORY_LIMIT_EXCEEDED
	242: true, // TABLE_IS_READ_ONLY
	252: true, // TOO_MANY_PARTS
	285: true, // TOO_FEW_LIVE_REPLICAS
	319: true, // UNKNOWN_STATUS_OF_INSERT
	425: true, // SYSTEM_ERROR
	999: true, // KEEPER_EXCEPTION
}

// unavailable reports whether err means the server could not be reached or
// refused the request for now, so that the same request may succeed later.
func unavailable(err error) bool {
	var ex *ch.Exception
	if errors.As(err, &ex) {
		return retryable[ex.Code]
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ch.ErrAcquireConnTimeout) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH)
}

// wrap prefixes err with the operation and marks it store.ErrUnavailable when the
// server is unreachable or refused the request for now.
func (s *Store) wrap(op string, err error) error {
	if unavailable(err) {
		return fmt.Errorf("clickhouse: %s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("clickhouse: %s: %w", op, err)
}

// Migrate creates the database if it is missing, then applies the pending
// migrations of schemas/ddl/clickhouse in order, recording each in
// schema_migrations after its statements ran. ClickHouse has no transactional DDL:
// the statements are idempotent (IF NOT EXISTS), so a migration interrupted midway
// is completed by the next Migrate.
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	if s.cluster != "" {
		return s.migrateCluster(ctx)
	}
	ms, err := schemas.Migrations(schemas.BackendClickHouse)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	if err := s.ensureDatabase(ctx); err != nil {
		return nil, err
	}
	applied, err := s.applied(ctx)
	if err != nil {
		return nil, err
	}
	var done []int
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		op := fmt.Sprintf("migration %04d_%s", m.Version, m.Name)
		for i, stmt := range m.Statements {
			if skip, err := s.columnExists(ctx, stmt); err != nil {
				return done, s.wrap(fmt.Sprintf("%s statement %d", op, i+1), err)
			} else if skip {
				continue
			}
			if err := s.conn.Exec(ctx, stmt); err != nil {
				return done, s.wrap(fmt.Sprintf("%s statement %d", op, i+1), err)
			}
		}
		if f := afterMigration[m.Name]; f != nil {
			if err := f(s, ctx); err != nil {
				return done, fmt.Errorf("%s: %w", op, err)
			}
		}
		if err := s.record(ctx, m); err != nil {
			return done, s.wrap(op+": record", err)
		}
		done = append(done, m.Version)
	}
	return done, nil
}

// applied returns the versions schema_migrations records (none when it does not
// exist). It fails when the database's tables are of the other kind than the DSN
// says: Distributed (made by migrate --cluster) without a cluster parameter, or
// local with one.
func (s *Store) applied(ctx context.Context) (map[int]bool, error) {
	var engines []string
	rows, err := s.conn.Query(ctx, `SELECT engine FROM system.tables
		WHERE database = currentDatabase() AND name = 'schema_migrations'`)
	if err != nil {
		return nil, s.wrap("migrate", err)
	}
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			rows.Close()
			return nil, s.wrap("migrate", err)
		}
		engines = append(engines, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.wrap("migrate", err)
	}
	applied := map[int]bool{}
	if len(engines) == 0 {
		return applied, nil
	}
	switch distributed := engines[0] == "Distributed"; {
	case distributed && s.cluster == "":
		return nil, fmt.Errorf(
			"clickhouse: database %s was created on a cluster (gpuprice migrate --cluster): add ?cluster=NAME to the DSN",
			s.database,
		)
	case !distributed && s.cluster != "":
		return nil, fmt.Errorf(
			"clickhouse: database %s holds one server's tables, not a cluster's: migrate --cluster needs a database of its "+
				"own (copy the data with INSERT … SELECT, or export and import)",
			s.database,
		)
	}
	rows, err = s.conn.Query(ctx, `SELECT DISTINCT version FROM schema_migrations`)
	if err != nil {
		return nil, s.wrap("migrate: read applied versions", err)
	}
	defer rows.Close()
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			return nil, s.wrap("migrate: read applied versions", err)
		}
		applied[int(v)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("migrate: read applied versions", err)
	}
	return applied, nil
}

// columnExists reports whether stmt is an ALTER TABLE … ADD COLUMN whose column
// the table has already: ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS, and a
// migration stopped after such a statement but before its record runs again.
func (s *Store) columnExists(ctx context.Context, stmt string) (bool, error) {
	table, col, ok := schemas.AddedColumn(stmt)
	if !ok {
		return false, nil
	}
	var n uint64
	if err := s.conn.QueryRow(ctx, `SELECT count() FROM system.columns
		WHERE database = currentDatabase() AND table = ? AND name = ?`, table, col).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// record notes an applied migration in schema_migrations. Inserts go through a
// batch: ClickHouse 18.16 waits for data blocks after an INSERT … VALUES sent as a
// plain query, so Exec would hang there.
func (s *Store) record(ctx context.Context, m schemas.Migration) error {
	batch, err := s.conn.PrepareBatch(ctx, `INSERT INTO schema_migrations (version, name, applied_at)`)
	if err != nil {
		return err
	}
	defer batch.Close()
	if err := batch.Append(uint32(m.Version), m.Name, time.Now().UTC().Truncate(time.Second)); err != nil {
		return err
	}
	return batch.Send()
}

// Exists says, creating nothing, whether the store's database exists and holds
// gpuprice's tables (store.Prober): asked over a connection to the server's default
// database, as ensureDatabase does, since the store's own handshake fails while its
// database is missing.
func (s *Store) Exists(ctx context.Context) error {
	o := *s.opts
	o.Auth.Database = ""
	conn, err := ch.Open(&o)
	if err != nil {
		return s.wrap("open", err)
	}
	defer conn.Close()
	var dbs, tables uint64
	if err := conn.QueryRow(ctx, `SELECT count() FROM system.databases WHERE name = ?`,
		s.database).Scan(&dbs); err != nil {
		return s.wrap("look for database "+s.database, err)
	}
	if dbs == 0 {
		return fmt.Errorf("%w: ClickHouse database %s does not exist (%s)", store.ErrNotExist, s.database, s.redacted)
	}
	if err := conn.QueryRow(ctx, `SELECT count() FROM system.tables WHERE database = ? AND name = 'schema_migrations'`,
		s.database).Scan(&tables); err != nil {
		return s.wrap("look for the tables of "+s.database, err)
	}
	if tables == 0 {
		return fmt.Errorf(
			"%w: ClickHouse database %s holds no gpuprice tables (%s)",
			store.ErrNotExist,
			s.database,
			s.redacted,
		)
	}
	return nil
}

// ensureDatabase creates the store's database when it does not exist, over a
// connection to the server's default database (the handshake of the store's own
// connections names a database, and fails while it is missing).
func (s *Store) ensureDatabase(ctx context.Context) error {
	o := *s.opts
	o.Auth.Database = ""
	conn, err := ch.Open(&o)
	if err != nil {
		return s.wrap("create database", err)
	}
	defer conn.Close()
	var n uint64
	if err := conn.QueryRow(ctx, `SELECT count() FROM system.databases WHERE name = ?`, s.database).Scan(&n); err != nil {
		return s.wrap("create database", err)
	}
	if n > 0 {
		return nil
	}
	// The name is an identifier checked by open, quoted besides.
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS `"+s.database+"`"); err != nil {
		return s.wrap("create database "+s.database, err)
	}
	return nil
}

// versions returns the first of n increasing write versions: the clock in
// nanoseconds, kept strictly above every version this store handed out before.
func (s *Store) versions(n int) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := uint64(time.Now().UnixNano())
	if v <= s.lastVersion {
		v = s.lastVersion + 1
	}
	s.lastVersion = v + uint64(n)
	return v
}

// DateTime holds seconds since the epoch in a UInt32.
var (
	minTime = time.Unix(0, 0).UTC()
	maxTime = time.Unix(1<<32-1, 0).UTC()
)

// toCH truncates t to whole seconds in UTC; the zero time becomes the epoch.
func toCH(t time.Time) (time.Time, error) {
	if t.IsZero() {
		return minTime, nil
	}
	t = t.UTC().Truncate(time.Second)
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf(
			"time %s outside ClickHouse DateTime's range 1970-01-01..2106-02-07",
			t.Format(time.RFC3339),
		)
	}
	return t, nil
}

// fromCH returns a DateTime read back in UTC, the epoch as the zero time.
func fromCH(t time.Time) time.Time {
	if t.Unix() == 0 {
		return time.Time{}
	}
	return t.UTC()
}

// obsColumns names the columns of observations a write sets and a read returns,
// in store.ObservationColumns' order.
var obsColumns = store.ObservationColumnNames()

// WriteBatchSize is how many rows ingest should hand WriteObservations at once:
// ClickHouse makes one part per INSERT, and wants few large ones (each part is
// merged later; thousands of small inserts a second are its classic misuse).
func (s *Store) WriteBatchSize() int { return 50_000 }

// WriteBatchBytes bounds a collection's batches by memory (store.BatchByteSizer):
// 64 MiB, so that 50,000 rows of any usual width make a batch (ClickHouse wants few
// large inserts) and rows with large attrs do not make it larger.
func (s *Store) WriteBatchBytes() int { return 64 << 20 }

// writeBlock is how many rows WriteObservations sends per block of its INSERT.
// The server gathers the blocks of one INSERT into one part (min_insert_block_size_rows,
// about a million rows), so the block size does not change what is stored; small
// blocks let the column buffers be filled again rather than grown to the batch.
const writeBlock = 8192

// obsBlock holds one block's column values, reused from block to block and from
// write to write (blockPool).
type obsBlock struct {
	times    [][]time.Time
	texts    [][]string
	numbers  [][]float64
	attrs    []string
	versions []uint64
	cols     []any // the slices above in column order, for Append
}

var blockPool sync.Pool // *obsBlock

// fill sets b to the rows obs[rows[0]], obs[rows[1]], …, each with version plus
// its index in obs.
func (b *obsBlock) fill(obs []schemas.Observation, rows []int32, version uint64, enc *store.AttrsEncoder) error {
	n := len(rows)
	if b.cols == nil {
		for _, c := range store.ObservationColumns {
			switch {
			case c.Time != nil:
				b.times = append(b.times, nil)
			case c.Text != nil:
				b.texts = append(b.texts, nil)
			case c.Number != nil:
				b.numbers = append(b.numbers, nil)
			}
		}
	}
	b.cols = b.cols[:0]
	var ti, si, ni int
	for _, c := range store.ObservationColumns {
		switch {
		case c.Time != nil:
			v := slices.Grow(b.times[ti][:0], n)[:n]
			for i, r := range rows {
				t, err := toCH(c.Time(&obs[r]))
				if err != nil {
					return fmt.Errorf("clickhouse: write observations: %s %s: %w", obs[r].SeriesKey(), c.Name, err)
				}
				v[i] = t
			}
			b.times[ti] = v
			ti++
			b.cols = append(b.cols, v)
		case c.Text != nil:
			v := slices.Grow(b.texts[si][:0], n)[:n]
			for i, r := range rows {
				v[i] = c.Text(&obs[r])
			}
			b.texts[si] = v
			si++
			b.cols = append(b.cols, v)
		case c.Number != nil:
			v := slices.Grow(b.numbers[ni][:0], n)[:n]
			for i, r := range rows {
				v[i] = c.Number(&obs[r])
			}
			b.numbers[ni] = v
			ni++
			b.cols = append(b.cols, v)
		default: // attrs
			v := slices.Grow(b.attrs[:0], n)[:n]
			for i, r := range rows {
				a, err := enc.Encode(obs[r].Attrs)
				if err != nil {
					return fmt.Errorf("clickhouse: write observations: %s: %w", obs[r].SeriesKey(), err)
				}
				v[i] = a
			}
			b.attrs = v
			b.cols = append(b.cols, v)
		}
	}
	b.versions = slices.Grow(b.versions[:0], n)[:n]
	for i, r := range rows {
		b.versions[i] = version + uint64(r)
	}
	b.cols = append(b.cols, b.versions)
	return nil
}

// sortedRows are the indexes of obs in the order of the observations' sort key
// (provider, gpu, pricing, region, sku, zone, effective_at; then their order in
// obs). The server sorts every INSERT's rows by that key before it writes them, and
// skips the sort of rows that come sorted (measured on 2M rows in 50,000-row
// writes: the server's CPU for the import 13.7 s unsorted, 10.0 s sorted). The six
// strings are compared once per distinct series, not per pair of rows: rows are
// sorted on their series' rank and time.
func sortedRows(obs []schemas.Observation) []int32 {
	type seriesKey [6]string
	ids := make(map[seriesKey]uint32)
	var keys []seriesKey
	type rowKey struct {
		series uint32 // the series' id, then its rank
		row    int32
		at     int64
	}
	rows := make([]rowKey, len(obs))
	for i := range obs {
		o := &obs[i]
		k := seriesKey{o.Provider, o.GPU, o.Pricing, o.Region, o.SKU, o.Zone}
		id, ok := ids[k]
		if !ok {
			id = uint32(len(keys))
			ids[k] = id
			keys = append(keys, k)
		}
		rows[i] = rowKey{series: id, row: int32(i), at: o.EffectiveAt.Unix()}
	}
	byKey := make([]uint32, len(keys))
	for i := range byKey {
		byKey[i] = uint32(i)
	}
	slices.SortFunc(byKey, func(a, b uint32) int { return slices.Compare(keys[a][:], keys[b][:]) })
	rank := make([]uint32, len(keys))
	for r, id := range byKey {
		rank[id] = uint32(r)
	}
	for i := range rows {
		rows[i].series = rank[rows[i].series]
	}
	slices.SortFunc(rows, func(a, b rowKey) int {
		if c := cmp.Compare(a.series, b.series); c != 0 {
			return c
		}
		if c := cmp.Compare(a.at, b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.row, b.row)
	})
	order := make([]int32, len(rows))
	for i, r := range rows {
		order[i] = r.row
	}
	return order
}

// clear drops the block's references to the rows' strings before it is pooled.
func (b *obsBlock) clear() {
	for i := range b.texts {
		clear(b.texts[i][:cap(b.texts[i])])
	}
	clear(b.attrs[:cap(b.attrs)])
}

// WriteObservations inserts obs in one INSERT, sent in blocks of writeBlock rows
// built column by column from store.ObservationColumns (clickhouse-go appends a
// whole column slice without converting each value through an interface, as row
// by row Append does). The INSERT is one part on the server, written whole or not
// at all: a row that cannot be sent aborts it (the connection is dropped, the
// server keeps nothing of it). Within obs, the last row of an identity wins: rows
// get increasing versions in their order, and every read takes the last version
// of an identity; across writes, the later write wins.
func (s *Store) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	if len(obs) == 0 {
		return nil
	}
	n := len(obs)
	version := s.versions(n)
	blk, _ := blockPool.Get().(*obsBlock)
	if blk == nil {
		blk = &obsBlock{}
	}
	defer func() {
		blk.clear()
		blockPool.Put(blk)
	}()
	var enc store.AttrsEncoder
	order := sortedRows(obs)
	// The first block is built before the INSERT starts, so that a row that cannot
	// be stored in a batch of one block fails with nothing sent.
	if err := blk.fill(obs, order[:min(n, writeBlock)], version, &enc); err != nil {
		return err
	}
	batch, err := s.conn.PrepareBatch(ctx, `INSERT INTO observations (`+obsColumns+`, version)`)
	if err != nil {
		return s.wrap("write observations", err)
	}
	sent := false
	defer func() {
		if !sent {
			// Ends the INSERT without its end-of-data block: the server discards it.
			batch.Abort()
		}
	}()
	for off := 0; off < n; off += writeBlock {
		if off > 0 {
			if err := batch.Flush(); err != nil {
				return s.wrap("write observations", err)
			}
			if err := blk.fill(obs, order[off:min(off+writeBlock, n)], version, &enc); err != nil {
				return err
			}
		}
		for i, c := range blk.cols {
			if err := batch.Column(i).Append(c); err != nil {
				return s.wrap("write observations: append", err)
			}
		}
	}
	sent = true
	if err := batch.Send(); err != nil {
		return s.wrap("write observations", err)
	}
	return nil
}

// deduped is a subquery of the observations matching f, one row per identity
// holding the last write of each column (d_<column>); the identity columns keep
// their names. Filters on identity columns run before the grouping, the others
// after it, on the last write. Values are bound by the driver, never spliced in.
func deduped(f store.Filter) (string, []any) {
	var (
		inner, outer []string
		args         []any
	)
	if f.Provider != "" {
		inner = append(inner, "provider = ?")
		args = append(args, f.Provider)
	}
	if f.Pricing != "" {
		inner = append(inner, "pricing = ?")
		args = append(args, f.Pricing)
	}
	if f.Region != "" {
		inner = append(inner, "region = ?")
		args = append(args, f.Region)
	}
	for _, b := range []struct {
		t  time.Time
		op string
	}{{f.Since, ">="}, {f.Until, "<"}} {
		if b.t.IsZero() {
			continue
		}
		t := b.t.UTC().Truncate(time.Second)
		switch {
		case t.Before(minTime):
			t = minTime
		case t.After(maxTime):
			t = maxTime
		}
		inner = append(inner, "effective_at "+b.op+" ?")
		args = append(args, t)
	}
	if f.GPU != "" {
		outer = append(outer, "d_gpu = ?")
		args = append(args, f.GPU)
	}
	if f.Tier != "" {
		outer = append(outer, "d_tier = ?")
		args = append(args, f.Tier)
	}
	q := `SELECT provider, sku, region, zone, pricing, effective_at,
		argMax(observed_at, version) AS d_observed_at, argMax(tier, version) AS d_tier,
		argMax(gpu, version) AS d_gpu, argMax(gpu_name, version) AS d_gpu_name,
		argMax(gpu_count, version) AS d_gpu_count, argMax(gpu_memory_gb, version) AS d_gpu_memory_gb,
		argMax(price_usd_hour, version) AS d_price_usd_hour,
		argMax(price_usd_gpu_hour, version) AS d_price_usd_gpu_hour,
		argMax(currency, version) AS d_currency, argMax(price_native, version) AS d_price_native,
		argMax(unit, version) AS d_unit, argMax(fx_rate, version) AS d_fx_rate,
		argMax(interconnect, version) AS d_interconnect, argMax(source_kind, version) AS d_source_kind,
		argMax(source_url, version) AS d_source_url, argMax(run_id, version) AS d_run_id,
		argMax(attrs, version) AS d_attrs, argMax(price_scope, version) AS d_price_scope,
		argMax(price_basis, version) AS d_price_basis
	FROM observations`
	if len(inner) > 0 {
		q += ` WHERE ` + strings.Join(inner, " AND ")
	}
	q += ` GROUP BY provider, sku, region, zone, pricing, effective_at`
	q = `(` + q + `)`
	if len(outer) > 0 {
		q = `(SELECT * FROM ` + q + ` WHERE ` + strings.Join(outer, " AND ") + `)`
	}
	return q, args
}

// Observations returns every observation matching f by series key then effective_at.
func (s *Store) Observations(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	return store.CollectObservations(ctx, f, s.Each)
}

// Each streams the observations matching f by series key then effective_at. The
// server deduplicates and sorts; the rows arrive block by block and are handed to
// fn one at a time, never collected. When fn fails, the query is cancelled rather
// than drained.
func (s *Store) Each(ctx context.Context, f store.Filter, fn func(schemas.Observation) error) error {
	sub, args := deduped(f)
	q := `SELECT d_observed_at, effective_at, provider, d_tier, sku, region, zone, d_gpu, d_gpu_name,
		d_gpu_count, d_gpu_memory_gb, pricing, d_price_usd_hour, d_price_usd_gpu_hour, d_currency,
		d_price_native, d_unit, d_fx_rate, d_interconnect, d_source_kind, d_source_url, d_run_id, d_attrs,
		d_price_scope, d_price_basis
	FROM ` + sub + `
	ORDER BY provider, sku, region, zone, pricing, effective_at`
	err := s.eachObservation(ctx, q, args, store.Stopping(fn))
	if cerr, ok := store.Stopped(err); ok {
		return cerr
	}
	if err != nil {
		return s.wrap("observations", err)
	}
	return nil
}

// Latest returns the newest observation of every series among those matching f,
// cheapest per GPU-hour first.
func (s *Store) Latest(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	sub, args := deduped(f)
	q := `SELECT argMax(d_observed_at, effective_at), max(effective_at), provider,
		argMax(d_tier, effective_at), sku, region, zone, argMax(d_gpu, effective_at),
		argMax(d_gpu_name, effective_at), argMax(d_gpu_count, effective_at),
		argMax(d_gpu_memory_gb, effective_at), pricing, argMax(d_price_usd_hour, effective_at),
		argMax(d_price_usd_gpu_hour, effective_at) AS l_price_usd_gpu_hour,
		argMax(d_currency, effective_at), argMax(d_price_native, effective_at),
		argMax(d_unit, effective_at), argMax(d_fx_rate, effective_at),
		argMax(d_interconnect, effective_at), argMax(d_source_kind, effective_at),
		argMax(d_source_url, effective_at), argMax(d_run_id, effective_at), argMax(d_attrs, effective_at),
		argMax(d_price_scope, effective_at), argMax(d_price_basis, effective_at)
	FROM ` + sub + `
	GROUP BY provider, sku, region, zone, pricing
	ORDER BY l_price_usd_gpu_hour, provider, sku, region, zone, pricing`
	out, err := s.queryObservations(ctx, q, args)
	if err != nil {
		return nil, s.wrap("latest", err)
	}
	return out, nil
}

func (s *Store) queryObservations(ctx context.Context, q string, args []any) ([]schemas.Observation, error) {
	var out []schemas.Observation
	err := s.eachObservation(ctx, q, args, func(o schemas.Observation) error {
		out = append(out, o)
		return nil
	})
	return out, err
}

// eachObservation runs q and calls fn for each row as it arrives.
func (s *Store) eachObservation(ctx context.Context, q string, args []any, fn func(schemas.Observation) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	// On an early return, cancel first: Close would otherwise read the rest of the
	// result.
	defer func() {
		cancel()
		rows.Close()
	}()
	for rows.Next() {
		var (
			o     schemas.Observation
			attrs string
		)
		if err := rows.Scan(&o.ObservedAt, &o.EffectiveAt, &o.Provider, &o.Tier, &o.SKU, &o.Region,
			&o.Zone, &o.GPU, &o.GPUName, &o.GPUCount, &o.GPUMemoryGB, &o.Pricing, &o.PriceUSDHour,
			&o.PriceUSDGPUHour, &o.Currency, &o.PriceNative, &o.Unit, &o.FXRate, &o.Interconnect,
			&o.SourceKind, &o.SourceURL, &o.RunID, &attrs, &o.PriceScope, &o.PriceBasis); err != nil {
			return err
		}
		// An observation's times are never zero (ingest sets them): the epoch is the epoch.
		o.ObservedAt, o.EffectiveAt = o.ObservedAt.UTC(), o.EffectiveAt.UTC()
		if o.Attrs, err = store.DecodeAttrs(attrs); err != nil {
			return err
		}
		if err := fn(o); err != nil {
			return err
		}
	}
	return rows.Err()
}

// WriteFXRates inserts rates as one batch; the last write of a (currency, date)
// wins.
func (s *Store) WriteFXRates(ctx context.Context, rates []schemas.FXRate) error {
	rates, err := store.PrepareFXRates(rates)
	if err != nil {
		return fmt.Errorf("clickhouse: write fx rates: %w", err)
	}
	if len(rates) == 0 {
		return nil
	}
	for _, r := range rates {
		if _, err := toCH(r.Date); err != nil {
			return fmt.Errorf("clickhouse: write fx rates: %s: %w", r.Currency, err)
		}
	}
	version := s.versions(len(rates))
	batch, err := s.conn.PrepareBatch(ctx, `INSERT INTO fx_rates (date, currency, usd_per_unit, source, version)`)
	if err != nil {
		return s.wrap("write fx rates", err)
	}
	defer batch.Close()
	for i, r := range rates {
		if err := batch.Append(r.Date, r.Currency, r.USDPerUnit, r.Source, version+uint64(i)); err != nil {
			return s.wrap("write fx rates: append", err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.wrap("write fx rates", err)
	}
	return nil
}

// FXRates returns the rates dated on or after since's UTC day, by currency then date.
func (s *Store) FXRates(ctx context.Context, since time.Time) ([]schemas.FXRate, error) {
	q := `SELECT toString(date) AS day, currency, argMax(usd_per_unit, version), argMax(source, version)
	FROM fx_rates`
	var args []any
	if !since.IsZero() {
		q += ` WHERE date >= toDate(?)`
		args = append(args, schemas.Day(since).Format(time.DateOnly))
	}
	q += ` GROUP BY currency, date ORDER BY currency, date`
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("fx rates", err)
	}
	defer rows.Close()
	out, err := store.ScanFXRates(rows)
	if err != nil {
		return nil, s.wrap("fx rates", err)
	}
	return out, nil
}

// WriteRun stores a run record; a later record with the same run_id and source
// replaces it.
func (s *Store) WriteRun(ctx context.Context, r schemas.Run) error {
	op := "write run " + r.RunID + "/" + r.Source
	started, err := toCH(r.StartedAt)
	if err != nil {
		return fmt.Errorf("clickhouse: %s: started_at: %w", op, err)
	}
	finished, err := toCH(r.FinishedAt)
	if err != nil {
		return fmt.Errorf("clickhouse: %s: finished_at: %w", op, err)
	}
	batch, err := s.conn.PrepareBatch(ctx, `INSERT INTO runs (run_id, source, started_at, finished_at,
		status, rows_accepted, rows_quarantined, unknown_gpus, rows_stored, rows_spooled, rows_lost, error, version,
		    rows_suspect,
		rows_not_offered, owner, span_since, span_until)`)
	if err != nil {
		return s.wrap(op, err)
	}
	defer batch.Close()
	if err := batch.Append(r.RunID, r.Source, started, finished, r.Status, int64(r.RowsAccepted),
		int64(r.RowsQuarantine), int64(r.UnknownGPUs), int64(r.RowsStored), int64(r.RowsSpooled), int64(r.RowsLost),
		r.Error, s.versions(1), int64(r.RowsSuspect), int64(r.RowsNotOffered), r.Owner, store.UnixSeconds(r.SpanSince),
		store.UnixSeconds(r.SpanUntil)); err != nil {
		return s.wrap(op+": append", err)
	}
	if err := batch.Send(); err != nil {
		return s.wrap(op, err)
	}
	return nil
}

// WriteMarker changes whenever a run record is written (store.ChangeMarker): the
// number of run rows and their newest version, read from a table of one row per run
// and source.
func (s *Store) WriteMarker(ctx context.Context) (string, error) {
	var n, v uint64
	if err := s.conn.QueryRow(ctx, `SELECT count(), max(version) FROM runs`).Scan(&n, &v); err != nil {
		return "", s.wrap("write marker", err)
	}
	return fmt.Sprintf("%d/%d", n, v), nil
}

// Runs returns run records newest first (ties by run_id, source); source "" means
// all, limit 0 means all.
func (s *Store) Runs(ctx context.Context, source string, limit int) ([]schemas.Run, error) {
	if limit < 0 {
		return nil, fmt.Errorf("clickhouse: runs: negative limit %d", limit)
	}
	var where string
	var args []any
	if source != "" {
		where = ` WHERE source = ?`
		args = append(args, source)
	}
	return s.runs(ctx, "runs", where, "", limit, args...)
}

// StartedRuns returns the records whose last write says started (store.RunJournal),
// oldest first.
func (s *Store) StartedRuns(ctx context.Context) ([]schemas.Run, error) {
	// The runs table holds a row or two per source and run: read whole. (An IN
	// subquery on it would be refused on a cluster, whose runs is Distributed.)
	return s.runs(ctx, "started runs", "", ` HAVING argMax(status, version) = ?`, 0, schemas.RunStarted)
}

func (s *Store) runs(ctx context.Context, op, where, having string, limit int, args ...any) ([]schemas.Run, error) {
	q := `SELECT run_id, source, argMax(started_at, version) AS r_started_at,
		argMax(finished_at, version), argMax(status, version), argMax(rows_accepted, version),
		argMax(rows_quarantined, version), argMax(unknown_gpus, version), argMax(error, version),
		argMax(rows_stored, version), argMax(rows_spooled, version), argMax(rows_lost, version),
		argMax(rows_suspect, version), argMax(rows_not_offered, version), argMax(owner, version),
		argMax(span_since, version), argMax(span_until, version)
	FROM runs` + where + ` GROUP BY run_id, source` + having
	if having != "" {
		q += ` ORDER BY r_started_at, run_id, source`
	} else {
		q += ` ORDER BY r_started_at DESC, run_id, source`
	}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, s.wrap(op, err)
	}
	defer rows.Close()
	out, err := store.ScanRuns(rows, fromCH)
	if err != nil {
		return nil, s.wrap(op, err)
	}
	return out, nil
}

// WriteQuarantine appends quarantined rows as one batch.
func (s *Store) WriteQuarantine(ctx context.Context, q []schemas.Quarantined) error {
	if len(q) == 0 {
		return nil
	}
	batch, err := s.conn.PrepareBatch(ctx, `INSERT INTO quarantine (quarantined_at, run_id, source, reason, raw)`)
	if err != nil {
		return s.wrap("write quarantine", err)
	}
	defer batch.Close()
	for _, r := range q {
		at, err := toCH(r.QuarantinedAt)
		if err != nil {
			return fmt.Errorf("clickhouse: write quarantine: %w", err)
		}
		if err := batch.Append(at, r.RunID, r.Source, r.Reason, r.Raw); err != nil {
			return s.wrap("write quarantine: append", err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.wrap("write quarantine", err)
	}
	return nil
}

// Quarantine returns quarantined rows newest first; limit 0 means all.
func (s *Store) Quarantine(ctx context.Context, limit int) ([]schemas.Quarantined, error) {
	q, args, err := store.QuarantineQuery(limit)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	rows, err := s.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, s.wrap("quarantine", err)
	}
	defer rows.Close()
	out, err := store.ScanQuarantine(rows, fromCH)
	if err != nil {
		return nil, s.wrap("quarantine", err)
	}
	return out, nil
}

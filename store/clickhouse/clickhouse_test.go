package clickhouse_test

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/analytics/figurestest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// serverDSN, freshDSN and adminConn are chtest's (store/clickhouse/chtest), shared
// with every other ClickHouse integration test.
func serverDSN(t *testing.T) *url.URL { return chtest.ServerDSN(t) }

func freshDSN(t *testing.T) string { return chtest.FreshDSN(t, "test") }

// openUnmerged opens a fresh migrated store with merges of tables stopped, so that
// every write stays in a part of its own and the reads must resolve the versions;
// db is its database and admin a connection to the server (both closed at the
// test's end).
func openUnmerged(t *testing.T, tables ...string) (store.Store, string, ch.Conn) {
	t.Helper()
	ctx := t.Context()
	st, dsn := openMigrated(t)
	u, _ := url.Parse(dsn)
	db := chtest.Database(u)
	admin := adminConn(t, u)
	t.Cleanup(func() { admin.Close() })
	for _, table := range tables {
		if err := admin.Exec(ctx, "SYSTEM STOP MERGES `"+db+"`."+table); err != nil {
			t.Fatalf("stop merges: %v", err)
		}
	}
	return st, db, admin
}

func adminConn(t *testing.T, u *url.URL) ch.Conn { return chtest.Admin(t, u) }

// openMigrated opens a store on a fresh database (closed at the test's end) and
// migrates it; dsn is the database's.
func openMigrated(t *testing.T) (st *clickhouse.Store, dsn string) {
	t.Helper()
	dsn = freshDSN(t)
	opened, err := clickhouse.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opened.Close() })
	if _, err := opened.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return opened.(*clickhouse.Store), dsn
}

func TestIntegrationClickHouse(t *testing.T) {
	serverDSN(t)
	open := func(t *testing.T) store.Store {
		st, err := clickhouse.Open(t.Context(), freshDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	storetest.Run(t, open)
	figurestest.Run(t, open)
}

// TestIntegrationClickHouseDuplicatesBeforeMerge proves the reads, not a lucky
// merge, make a twice-written batch count once: with merges stopped the table holds
// every copy, and the reads still return each identity once, with its last write.
func TestIntegrationClickHouseDuplicatesBeforeMerge(t *testing.T) {
	ctx := t.Context()
	st, db, admin := openUnmerged(t, "observations")

	obs := storetest.Observations()
	for range 3 {
		if err := st.WriteObservations(ctx, obs); err != nil {
			t.Fatal(err)
		}
	}
	var raw uint64
	if err := admin.QueryRow(ctx, "SELECT count() FROM `"+db+"`.observations").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != uint64(3*len(obs)) {
		t.Fatalf("raw rows with merges stopped: %d, want %d (three unmerged copies)", raw, 3*len(obs))
	}
	got, err := st.Observations(ctx, store.Filter{})
	if err != nil || len(got) != len(obs) {
		t.Fatalf("Observations: %d rows, %v; want %d", len(got), err, len(obs))
	}
	latest, err := st.Latest(ctx, store.Filter{GPU: "H100-SXM-80GB"})
	if err != nil || len(latest) != 7 {
		t.Fatalf("Latest H100: %d rows, %v; want 7 series", len(latest), err)
	}

	// A corrected row, then a merge: the correction is what stays.
	fixed := obs[0]
	fixed.PriceUSDHour, fixed.PriceUSDGPUHour = 98.0, 12.25
	if err := st.WriteObservations(ctx, []schemas.Observation{fixed}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Exec(ctx, "SYSTEM START MERGES `"+db+"`.observations"); err != nil {
		t.Fatal(err)
	}
	if err := admin.Exec(ctx, "OPTIMIZE TABLE `"+db+"`.observations FINAL"); err != nil {
		t.Fatal(err)
	}
	if err := admin.QueryRow(ctx, "SELECT count() FROM `"+db+"`.observations").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != uint64(len(obs)) {
		t.Fatalf("raw rows after OPTIMIZE FINAL: %d, want %d", raw, len(obs))
	}
	got, err = st.Observations(ctx, store.Filter{Provider: "aws", Pricing: schemas.OnDemand})
	if err != nil || len(got) != 2 || got[0].PriceUSDHour != 98.0 {
		t.Fatalf("after merge: %+v, %v; want the corrected price 98", got, err)
	}
}

// TestIntegrationClickHouseMigrateCreatesDatabase checks that Migrate creates a
// missing database, and that reads before it fail without claiming unavailability.
func TestIntegrationClickHouseMigrateCreatesDatabase(t *testing.T) {
	dsn := freshDSN(t)
	ctx := t.Context()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	_, err = st.Latest(ctx, store.Filter{})
	if err == nil {
		t.Fatal("Latest on a missing database: no error")
	}
	if errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("a missing database is a setup error, not unavailability: %v", err)
	}
	applied, err := st.Migrate(ctx)
	if err != nil || len(applied) == 0 {
		t.Fatalf("Migrate: %v, %v", applied, err)
	}
	if _, err := st.Latest(ctx, store.Filter{}); err != nil {
		t.Fatalf("Latest after Migrate: %v", err)
	}
}

// TestUnreachableServerIsUnavailable needs no server: nothing listens on port 1.
func TestUnreachableServerIsUnavailable(t *testing.T) {
	ctx := t.Context()
	const password = "hunter2-s3cret"
	dsn := "clickhouse://gpuprice:" + password + "@127.0.0.1:1/x?dial_timeout=300ms"
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open must not dial: %v", err)
	}
	defer st.Close()
	if s, ok := st.(interface{ String() string }); !ok || strings.Contains(s.String(), password) {
		t.Fatalf("store's String() shows the password or is missing: %v", st)
	}
	start := time.Now()
	errs := map[string]error{
		"WriteObservations": st.WriteObservations(ctx, storetest.Observations()),
		"WriteQuarantine":   st.WriteQuarantine(ctx, storetest.Quarantined()),
		"WriteRun":          st.WriteRun(ctx, storetest.Runs()[0]),
	}
	_, errs["Migrate"] = st.Migrate(ctx)
	_, errs["Latest"] = st.Latest(ctx, store.Filter{})
	for op, err := range errs {
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: err = %v, want store.ErrUnavailable", op, err)
		}
		if err != nil && strings.Contains(err.Error(), password) {
			t.Errorf("%s: error shows the password: %v", op, err)
		}
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("five calls against a closed port took %v; dial_timeout is not honoured", d)
	}
}

// TestIntegrationClickHouseWrongPassword: a refused login is not unavailability
// (spooling will not fix it), and the password stays out of the error.
func TestIntegrationClickHouseWrongPassword(t *testing.T) {
	u := serverDSN(t)
	const password = "not-the-password-7731"
	u.User = url.UserPassword("default", password)
	st, err := store.Open(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.WriteObservations(t.Context(), storetest.Observations())
	if err == nil {
		t.Fatal("write with a wrong password: no error")
	}
	if errors.Is(err, store.ErrUnavailable) {
		t.Errorf("wrong password reported as unavailable: %v", err)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("error shows the password: %v", err)
	}
}

func TestBadDSN(t *testing.T) {
	for _, dsn := range []string{
		"clickhouse:///nohost",
		"clickhouse://localhost:9000/bad-name",
		"clickhouse://localhost:9000/x;DROP",
		"clickhouse://u:pw-secret-1@localhost:9000/db?dial_timeout=banana",
	} {
		_, err := store.Open(context.Background(), dsn)
		if err == nil {
			t.Errorf("Open(%q): no error", dsn)
			continue
		}
		if strings.Contains(err.Error(), "pw-secret-1") {
			t.Errorf("Open(%q): error shows the password: %v", dsn, err)
		}
	}
}

// TestIntegrationClickHouseOpenExistingCreatesNothing: a read-only open of a database
// that does not exist, or holds no gpuprice tables, is store.ErrNotExist naming the
// database, and leaves the server as it was; a migrated database opens.
func TestIntegrationClickHouseOpenExistingCreatesNothing(t *testing.T) {
	dsn := freshDSN(t)
	ctx := t.Context()
	u, _ := url.Parse(dsn)
	db := chtest.Database(u)
	admin := adminConn(t, u)
	defer admin.Close()
	databases := func() uint64 {
		var n uint64
		if err := admin.QueryRow(ctx, `SELECT count() FROM system.databases WHERE name = ?`, db).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	_, err := store.OpenExisting(ctx, dsn)
	if !errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), db+" does not exist") {
		t.Fatalf("OpenExisting on a missing database: %v", err)
	}
	if databases() != 0 {
		t.Fatalf("OpenExisting created database %s", db)
	}
	if err := admin.Exec(ctx, "CREATE DATABASE `"+db+"`"); err != nil {
		t.Fatal(err)
	}
	_, err = store.OpenExisting(ctx, dsn)
	if !errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), "holds no gpuprice tables") {
		t.Fatalf("OpenExisting on an empty database: %v", err)
	}
	var tables uint64
	if err := admin.QueryRow(ctx, `SELECT count() FROM system.tables WHERE database = ?`, db).Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("OpenExisting made %d tables in %s (%v)", tables, db, err)
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = store.OpenExisting(ctx, dsn)
	if err != nil {
		t.Fatalf("OpenExisting on a migrated database: %v", err)
	}
	st.Close()
}

// TestOpenExistingEmbeddedDirectory: a read-only open of a chdb:// directory that does
// not exist is store.ErrNotExist and creates no directory (no engine is started).
func TestOpenExistingEmbeddedDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	_, err := store.OpenExisting(t.Context(), "chdb://"+dir)
	if !errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("OpenExisting on a missing chdb directory: %v", err)
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, fs.ErrNotExist) {
		t.Fatalf("OpenExisting made %s: %v", dir, serr)
	}
}

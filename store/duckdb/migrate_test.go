package duckdb_test

import (
	"database/sql"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/gpuprice/gpuprice/analytics/figurestest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/duckdb"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestMigrationUnkeyedKeepsRowsAndDropsKey builds a file at the schema version before
// observations_unkeyed (observations with its six-column primary key) holding rows
// written by plain SQL, migrates it,
// and checks that every row is kept, the key is gone, the views still read the table,
// and writes still replace an identity's stored row instead of adding one.
func TestMigrationUnkeyedKeepsRowsAndDropsKey(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v12.duckdb")
	ms, err := schemas.Migrations(schemas.BackendDuckDB)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	k := slices.IndexFunc(ms, func(m schemas.Migration) bool { return m.Name == "observations_unkeyed" })
	if k < 0 {
		t.Fatal("no migration observations_unkeyed")
	}
	var want []int
	for _, m := range ms[k:] {
		want = append(want, m.Version)
	}
	for _, m := range ms[:k] {
		for _, stmt := range m.Statements {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Fatalf("migration %d: %v", m.Version, err)
			}
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, ?, ?)`, m.Version, m.Name, time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
	}
	obs := storetest.Observations()
	names := append(store.ObservationColumns[:0:0], store.ObservationColumns...)
	for i, o := range obs {
		q := `INSERT INTO observations (version`
		vals := `VALUES (?`
		args := []any{uint64(i + 1)}
		for _, c := range names {
			q += ", " + c.Name
			vals += ", ?"
			switch {
			case c.Time != nil:
				args = append(args, c.Time(&o).UTC().Truncate(time.Second)) // as the store writes times
			case c.Text != nil:
				args = append(args, c.Text(&o))
			case c.Number != nil:
				args = append(args, c.Number(&o))
			default:
				attrs, err := store.EncodeAttrs(o.Attrs)
				if err != nil {
					t.Fatal(err)
				}
				args = append(args, attrs)
			}
		}
		if _, err := db.ExecContext(ctx, q+") "+vals+")", args...); err != nil {
			t.Fatal(err)
		}
	}
	var keys int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_constraints()
		WHERE table_name = 'observations' AND constraint_type = 'PRIMARY KEY'`).Scan(&keys); err != nil || keys != 1 {
		t.Fatalf("version %d file: %d primary keys on observations, %v", k, keys, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := duckdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	before, err := st.Observations(ctx, store.Filter{})
	if err != nil || len(before) != len(obs) {
		t.Fatalf("before migrating: %d rows, %v; want %d", len(before), err, len(obs))
	}
	applied, err := st.Migrate(ctx)
	if err != nil || !reflect.DeepEqual(applied, want) {
		t.Fatalf("Migrate = %v, %v; want %v", applied, err, want)
	}
	after, err := st.Observations(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("rows changed by the migration:\nbefore %+v\nafter  %+v", before, after)
	}
	// Writing every row again, one with a new price, replaces them: no duplicates.
	again := storetest.Observations()
	again[0].PriceUSDHour, again[0].PriceUSDGPUHour = 123, 123/again[0].GPUCount
	if err := st.WriteObservations(ctx, again); err != nil {
		t.Fatal(err)
	}
	got, err := st.Observations(ctx, store.Filter{})
	if err != nil || len(got) != len(obs) {
		t.Fatalf("after writing the rows again: %d rows, %v; want %d", len(got), err, len(obs))
	}
	found := false
	for _, o := range got {
		if o.SeriesKey() == again[0].SeriesKey() && o.EffectiveAt.Equal(again[0].EffectiveAt) {
			found = o.PriceUSDHour == 123
		}
	}
	if !found {
		t.Errorf("the rewritten row does not carry its new price")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_constraints()
		WHERE table_name = 'observations' AND constraint_type = 'PRIMARY KEY'`).Scan(&keys); err != nil || keys != 0 {
		t.Fatalf("migrated file: %d primary keys on observations, %v", keys, err)
	}
	var viewRows int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+schemas.ViewObservations).Scan(&viewRows); err != nil || viewRows != len(obs) {
		t.Fatalf("%s after the migration: %d rows, %v; want %d", schemas.ViewObservations, viewRows, err, len(obs))
	}
}

// TestMigrationVolatilityDaysBackfill builds a store whose hourly bars were rolled
// up before migration 21 (the data of figurestest.VolatilityWindows; then
// volatility_days dropped and the step unrecorded), migrates it, and runs that
// check: the summaries were filled from the bars.
func TestMigrationVolatilityDaysBackfill(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "v20.duckdb")
	st, err := duckdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	check := figurestest.VolatilityWindows(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{`DROP TABLE volatility_days`, `DELETE FROM schema_migrations WHERE version = 21`} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = duckdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if applied, err := st.Migrate(ctx); err != nil || !slices.Equal(applied, []int{21}) {
		t.Fatalf("Migrate = %v, %v; want [21]", applied, err)
	}
	check(st, "backfilled")
}

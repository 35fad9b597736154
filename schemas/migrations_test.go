package schemas

import (
	"io/fs"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

func TestMigrationsBothBackendsInStep(t *testing.T) {
	ch, err := Migrations(BackendClickHouse)
	if err != nil {
		t.Fatal(err)
	}
	dd, err := Migrations(BackendDuckDB)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch) == 0 || len(ch) != len(dd) {
		t.Fatalf("clickhouse has %d migrations, duckdb %d: the backends must move together", len(ch), len(dd))
	}
	for i := range ch {
		if ch[i].Version != i+1 || dd[i].Version != i+1 {
			t.Errorf("migration %d: versions %d/%d", i, ch[i].Version, dd[i].Version)
		}
		if ch[i].Name != dd[i].Name {
			t.Errorf("version %d: clickhouse %q, duckdb %q", i+1, ch[i].Name, dd[i].Name)
		}
	}
}

// TestMigrationsCreateEveryTableWithEveryColumn checks that the first migration of
// each backend creates the four tables, and that observations has a column for every
// field of Observation (by its json name) in both backends, created by migration 1
// or added by a later ALTER TABLE … ADD COLUMN.
func TestMigrationsCreateEveryTableWithEveryColumn(t *testing.T) {
	var obsCols []string
	rt := reflect.TypeOf(Observation{})
	for i := 0; i < rt.NumField(); i++ {
		obsCols = append(obsCols, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
	}
	runCols := []string{"run_id", "source", "started_at", "finished_at", "status",
		"rows_accepted", "rows_quarantined", "unknown_gpus", "error"}
	quarCols := []string{"quarantined_at", "run_id", "source", "reason", "raw"}

	for _, backend := range []string{BackendClickHouse, BackendDuckDB} {
		ms, err := Migrations(backend)
		if err != nil {
			t.Fatal(err)
		}
		tables := map[string]string{}
		create := regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS (\w+) \((.*)\)`)
		for _, s := range ms[0].Statements {
			if m := create.FindStringSubmatch(s); m != nil {
				tables[m[1]] = m[2]
			}
		}
		addIfNotExists := regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+IF\s+NOT\s+EXISTS\s+(\w+)\s`)
		for _, m := range ms[1:] {
			for _, s := range m.Statements {
				table, col, ok := AddedColumn(s)
				if mm := addIfNotExists.FindStringSubmatch(s); mm != nil {
					table, col, ok = mm[1], mm[2], true
				}
				if _, created := tables[table]; ok && created {
					tables[table] += "\n  " + col + " added"
				}
			}
		}
		for table, cols := range map[string][]string{
			"observations":      append(obsCols, "version"),
			"runs":              runCols,
			"quarantine":        quarCols,
			"schema_migrations": {"version", "name", "applied_at"},
		} {
			body, ok := tables[table]
			if !ok {
				t.Errorf("%s: migration 1 does not create %s", backend, table)
				continue
			}
			for _, c := range cols {
				if !regexp.MustCompile(`(?m)^\s*` + c + `\s+\w`).MatchString(body) {
					t.Errorf("%s: table %s has no column %s", backend, table, c)
				}
			}
		}
	}
}

func TestMigrationsUnknownBackend(t *testing.T) {
	for _, b := range []string{"", "postgres", "../schemas", "ddl/duckdb"} {
		if _, err := Migrations(b); err == nil {
			t.Errorf("Migrations(%q): no error", b)
		}
	}
}

func TestMigrationsFromValidates(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	ok := "CREATE TABLE a (x Int32);\n"
	cases := []struct {
		name    string
		files   fstest.MapFS
		wantErr string
	}{
		{"gap", fstest.MapFS{"d/0001_a.sql": file(ok), "d/0003_c.sql": file(ok)}, "expected version 0002"},
		{"duplicate", fstest.MapFS{"d/0001_a.sql": file(ok), "d/0001_b.sql": file(ok)}, "appears twice"},
		{"starts at 2", fstest.MapFS{"d/0002_a.sql": file(ok)}, "expected version 0001"},
		{"bad name", fstest.MapFS{"d/1_a.sql": file(ok)}, "NNNN_name.sql"},
		{"upper case name", fstest.MapFS{"d/0001_Init.sql": file(ok)}, "NNNN_name.sql"},
		{"empty file", fstest.MapFS{"d/0001_a.sql": file("-- only a comment\n")}, "no statements"},
		{"unterminated", fstest.MapFS{"d/0001_a.sql": file(ok + "CREATE TABLE b (y Int32)\n")}, "not terminated"},
		{"lone semicolon", fstest.MapFS{"d/0001_a.sql": file(";\n")}, "empty statement"},
		{"stray file", fstest.MapFS{"d/0001_a.sql": file(ok), "d/README": file("x")}, "NNNN_name.sql"},
		{"empty dir", fstest.MapFS{"d": &fstest.MapFile{Mode: fs.ModeDir}}, "no migrations"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := migrationsFrom(c.files, "d")
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

func TestMigrationsFromSortsAndSplits(t *testing.T) {
	fsys := fstest.MapFS{
		"d/0002_more.sql": &fstest.MapFile{Data: []byte("ALTER TABLE a ADD COLUMN y Int32;\n")},
		"d/0001_init.sql": &fstest.MapFile{Data: []byte(
			"-- header comment\nCREATE TABLE a (\n    x Int32 -- inline\n);  \r\n\n" +
				"INSERT INTO a (x) VALUES (1);\n-- trailing comment\n")},
	}
	got, err := migrationsFrom(fsys, "d")
	if err != nil {
		t.Fatal(err)
	}
	want := []Migration{
		{Version: 1, Name: "init", Statements: []string{
			"CREATE TABLE a (\n    x Int32 -- inline\n)",
			"INSERT INTO a (x) VALUES (1)",
		}},
		{Version: 2, Name: "more", Statements: []string{"ALTER TABLE a ADD COLUMN y Int32"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
}

func TestAddedColumn(t *testing.T) {
	for stmt, want := range map[string][2]string{
		"ALTER TABLE bars ADD COLUMN last_observed_at DateTime('UTC') AFTER count": {"bars", "last_observed_at"},
		"alter table bars\n  add column x Int32":                                   {"bars", "x"},
		"ALTER TABLE bars ADD COLUMN IF NOT EXISTS x TIMESTAMP":                    {},
		"ALTER TABLE bars DROP COLUMN x":                                           {},
		"CREATE TABLE bars (x Int32)":                                              {},
	} {
		table, col, ok := AddedColumn(stmt)
		if ok != (want[0] != "") || table != want[0] || col != want[1] {
			t.Errorf("AddedColumn(%q) = %q, %q, %v; want %q", stmt, table, col, ok, want)
		}
	}
}

// TestMigrationsBarsLastObservedAt checks that both backends give bars a
// last_observed_at after the migration that creates bars.
func TestMigrationsBarsLastObservedAt(t *testing.T) {
	for _, backend := range []string{BackendClickHouse, BackendDuckDB} {
		ms, err := Migrations(backend)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range ms[3:] {
			for _, s := range m.Statements {
				if regexp.MustCompile(`(?i)^ALTER TABLE bars ADD COLUMN (IF NOT EXISTS )?last_observed_at `).MatchString(s) {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("%s: no migration adds bars.last_observed_at", backend)
		}
	}
}

package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// docPath is where docs/use-the-data.md's queries read a published directory.
const docPath = "/srv/gpuprice/snapshots"

// docQuestion is a question of docs/use-the-data.md and its two queries.
type docQuestion struct{ title, duckdb, clickhouse string }

// useTheDataQuestions reads the page's questions: each "## " section with a
// DuckDB and a ClickHouse SQL block (their first lines say which).
func useTheDataQuestions(t *testing.T) []docQuestion {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "use-the-data.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var qs []docQuestion
	var block []string
	inSQL := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			qs = append(qs, docQuestion{title: strings.TrimPrefix(line, "## ")})
		case line == "```sql":
			inSQL, block = true, nil
		case inSQL && line == "```":
			inSQL = false
			q := &qs[len(qs)-1]
			text := strings.TrimSuffix(strings.TrimSpace(strings.Join(block[1:], "\n")), ";")
			switch block[0] {
			case "-- DuckDB":
				q.duckdb = text
			case "-- ClickHouse":
				q.clickhouse = text
			default:
				t.Fatalf("%s: a SQL block starts %q, not -- DuckDB or -- ClickHouse", q.title, block[0])
			}
		case inSQL:
			block = append(block, line)
		}
	}
	var out []docQuestion
	for _, q := range qs {
		if q.duckdb != "" || q.clickhouse != "" {
			if q.duckdb == "" || q.clickhouse == "" {
				t.Fatalf("%s: a question needs both a DuckDB and a ClickHouse query", q.title)
			}
			out = append(out, q)
		}
	}
	if len(out) < 4 {
		t.Fatalf("%d questions on the page", len(out))
	}
	return out
}

// publishedRecorded publishes the recorded example as the page says and returns
// the directory.
func publishedRecorded(t *testing.T) (dir, dsn string) {
	t.Helper()
	dsn = "duckdb://" + filepath.Join(t.TempDir(), "usethedata.duckdb")
	if _, code := run(t, "--store", dsn, "reparse", filepath.Join("..", "..", "examples", "recorded")); !collected(code) {
		t.Fatal("reparse failed")
	}
	dir = filepath.Join(t.TempDir(), "snapshots")
	if _, code := run(t, "--store", dsn, "publish", "--out", dir, "--since", "2026-10-25", "--until", "2026-11-02"); code != 0 {
		t.Fatal("publish failed")
	}
	return dir, dsn
}

// cell writes a value as both engines' answers are compared: numbers to four
// decimals, days as YYYY-MM-DD, NULL for null.
func cell(v any) string {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) {
		if rv.IsNil() {
			return "NULL"
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return "NULL"
	}
	switch x := rv.Interface().(type) {
	case float32, float64:
		return fmt.Sprintf("%.4f", rv.Float())
	case time.Time:
		return x.Format(time.DateOnly)
	case int, int8, int16, int32, int64:
		return fmt.Sprint(rv.Int())
	case uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(rv.Uint())
	default:
		return fmt.Sprint(x)
	}
}

// duckRows runs a query on DuckDB.
func duckRows(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = cell(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func duckDB(t *testing.T) *sql.DB {
	t.Helper()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestUseTheDataQueries runs the DuckDB queries of docs/use-the-data.md on a
// directory published from the recorded example: each answers rows, and the
// cheapest offers are those `gpuprice prices` lists.
func TestUseTheDataQueries(t *testing.T) {
	dir, dsn := publishedRecorded(t)
	db := duckDB(t)
	for i, q := range useTheDataQuestions(t) {
		rows := duckRows(t, db, strings.ReplaceAll(q.duckdb, docPath, dir))
		if len(rows) == 0 {
			t.Fatalf("%s: no rows", q.title)
		}
		if i > 0 {
			continue
		}
		var cheapest []schemas.Observation
		runJSON(t, &cheapest, "--store", dsn, "prices", "--gpu", "H100-SXM-80GB", "--pricing", "on_demand", "--limit", "5",
			"--format", "json")
		for j, o := range cheapest {
			if j >= len(rows) || rows[j][0] != o.Provider || rows[j][1] != o.SKU || rows[j][2] != o.Region ||
				rows[j][4] != cell(math.Round(o.PriceUSDGPUHour*1e4)/1e4) {
				t.Errorf("%s: row %d %v, gpuprice prices: %s %s %s %v", q.title, j, rows, o.Provider, o.SKU, o.Region,
					o.PriceUSDGPUHour)
			}
		}
	}
}

// TestIntegrationClickHouseUseTheData runs each question's ClickHouse query of
// docs/use-the-data.md on the embedded ClickHouse (chDB) and checks it answers
// the rows of its DuckDB query. ClickHouse 18.16 reads neither Parquet nor file
// globs, and a server's file() reads only its own user_files directory: the test
// needs GPUPRICE_CLICKHOUSE_DSN=chdb://….
func TestIntegrationClickHouseUseTheData(t *testing.T) {
	dsn := chtest.FreshDSN(t, "usedata")
	if !chtest.Embedded() {
		t.Skip("the page's ClickHouse queries need Parquet and file globs (not in ClickHouse 18.16) on this " +
			"machine's files: they run on chDB (GPUPRICE_CLICKHOUSE_DSN=chdb://DIR)")
	}
	dir, _ := publishedRecorded(t)
	db := duckDB(t)
	// file() needs no database of its own: the engine's default answers.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	v := u.Query()
	v.Set("database", "default")
	u.RawQuery = v.Encode()
	conn := chtest.Conn(t, u.String(), nil)
	defer conn.Close()
	for _, q := range useTheDataQuestions(t) {
		want := duckRows(t, db, strings.ReplaceAll(q.duckdb, docPath, dir))
		text := strings.ReplaceAll(q.clickhouse, docPath, dir)
		rows, err := conn.Query(t.Context(), text)
		if err != nil {
			t.Fatalf("%s: %v\n%s", q.title, err, text)
		}
		types := rows.ColumnTypes()
		var got [][]string
		for rows.Next() {
			ptrs := make([]any, len(types))
			for i, ct := range types {
				ptrs[i] = reflect.New(ct.ScanType()).Interface()
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("%s: %v", q.title, err)
			}
			row := make([]string, len(ptrs))
			for i, p := range ptrs {
				row[i] = cell(p)
			}
			got = append(got, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if !sameCells(got, want) {
			t.Errorf("%s: ClickHouse answers\n%v\nDuckDB\n%v", q.title, got, want)
		}
	}
}

// sameCells compares two engines' rows: numbers may differ by the last of their four
// decimals (the engines round a half differently: 1.38625 is 1.3862 or 1.3863).
func sameCells(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			x, errx := strconv.ParseFloat(a[i][j], 64)
			y, erry := strconv.ParseFloat(b[i][j], 64)
			if a[i][j] != b[i][j] && (errx != nil || erry != nil || math.Abs(x-y) > 1.5e-4) {
				return false
			}
		}
	}
	return true
}

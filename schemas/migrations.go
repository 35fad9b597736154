package schemas

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Store backends that have DDL in ddl/<backend>/.
const (
	BackendClickHouse = "clickhouse"
	BackendDuckDB     = "duckdb"
)

//go:embed ddl
var ddlFS embed.FS

// Migration is one numbered step of a backend's schema: the statements of
// ddl/<backend>/NNNN_name.sql, in file order.
type Migration struct {
	Version    int
	Name       string
	Statements []string
}

var migrationFile = regexp.MustCompile(`^([0-9]{4})_([a-z0-9_]+)\.sql$`)

// Migrations returns the migrations of a backend ("clickhouse" or "duckdb"), sorted by
// version. It fails when the files are malformed: a name not of the form NNNN_name.sql,
// a version gap or duplicate (versions run 1, 2, 3, … without holes), or a file with no
// statement.
//
// Statements are split at lines that end with ";" (after trailing spaces), so a
// statement may span many lines but must not end a line with ";" inside a string
// literal. Lines that are wholly "--" comments are dropped; the ";" is not part of the
// returned statement.
func Migrations(backend string) ([]Migration, error) {
	if backend == "" || strings.ContainsAny(backend, "/\\.") {
		return nil, fmt.Errorf("schemas: bad backend name %q", backend)
	}
	dir := path.Join("ddl", backend)
	if _, err := fs.Stat(ddlFS, dir); err != nil {
		return nil, fmt.Errorf("schemas: no migrations for backend %q", backend)
	}
	return migrationsFrom(ddlFS, dir)
}

// migrationsFrom reads and validates the migrations in dir of fsys.
func migrationsFrom(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("schemas: read %s: %w", dir, err)
	}
	var out []Migration
	for _, e := range entries {
		if e.IsDir() {
			return nil, fmt.Errorf("schemas: %s/%s: unexpected directory", dir, e.Name())
		}
		m := migrationFile.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("schemas: %s/%s: migration files are named NNNN_name.sql", dir, e.Name())
		}
		v, _ := strconv.Atoi(m[1]) // four digits: cannot fail
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("schemas: read %s/%s: %w", dir, e.Name(), err)
		}
		stmts, err := SplitStatements(string(body))
		if err != nil {
			return nil, fmt.Errorf("schemas: %s/%s: %w", dir, e.Name(), err)
		}
		if len(stmts) == 0 {
			return nil, fmt.Errorf("schemas: %s/%s: no statements", dir, e.Name())
		}
		out = append(out, Migration{Version: v, Name: m[2], Statements: stmts})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			if i > 0 && m.Version == out[i-1].Version {
				return nil, fmt.Errorf("schemas: %s: version %04d appears twice", dir, m.Version)
			}
			return nil, fmt.Errorf(
				"schemas: %s: expected version %04d, found %04d (versions start at 1 without gaps)",
				dir,
				i+1,
				m.Version,
			)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("schemas: %s: no migrations", dir)
	}
	return out, nil
}

// SplitStatements splits a DDL file into statements at lines ending with ";". Lines
// that are wholly "--" comments are dropped. Text after the last ";" that is not
// blank is an error (a statement without its terminator).
func SplitStatements(body string) ([]string, error) {
	var (
		out []string
		cur []string
	)
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		line = strings.TrimRight(line, " \t")
		if s, ok := strings.CutSuffix(line, ";"); ok {
			cur = append(cur, s)
			stmt := strings.TrimSpace(strings.Join(cur, "\n"))
			cur = cur[:0]
			if stmt == "" {
				return nil, fmt.Errorf("empty statement")
			}
			out = append(out, stmt)
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		return nil, fmt.Errorf("statement not terminated by ';': %q", strings.TrimSpace(strings.Join(cur, "\n")))
	}
	return out, nil
}

var addColumn = regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+([a-z_][a-z0-9_]*)\s+ADD\s+COLUMN\s+([a-z_][a-z0-9_]*)\s`)

// AddedColumn reports the table and column a statement "ALTER TABLE t ADD COLUMN c …"
// adds (without IF NOT EXISTS). ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS; its
// migrator skips such a statement when the column exists, so that a migration
// interrupted before it was recorded can run again.
func AddedColumn(stmt string) (table, column string, ok bool) {
	m := addColumn.FindStringSubmatch(strings.TrimSpace(stmt))
	if m == nil || strings.EqualFold(m[2], "IF") {
		return "", "", false
	}
	return m[1], m[2], true
}

package schemas

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite generated files (the view migration)")

// TestViewMigrationIsGenerated fails when the latest view migration differs from
// what schemas/views.go generates (-update rewrites it), and checks that after every
// ClickHouse migration each view is its current definition: the last CREATE VIEW of
// each view equals ViewStatements', and a view dropped is created again in the
// same migration.
func TestViewMigrationIsGenerated(t *testing.T) {
	file := fmt.Sprintf("ddl/clickhouse/%04d_%s.sql", LatestViewMigration.Version, LatestViewMigration.Name)
	want := ViewMigrationSQL()
	if *update {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is stale: run go test ./schemas -run TestViewMigration -update", file)
	}
	ms, err := Migrations(BackendClickHouse)
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]string{}
	for i, s := range ViewStatements(ViewOptions{}) {
		current[Views()[i].Name] = s
	}
	last := map[string]string{}
	create := regexp.MustCompile(`^CREATE VIEW IF NOT EXISTS (\w+) AS\n`)
	drop := regexp.MustCompile(`^DROP TABLE IF EXISTS (v_\w+)$`)
	for _, m := range ms {
		dropped := map[string]bool{}
		for _, s := range m.Statements {
			if d := drop.FindStringSubmatch(s); d != nil {
				dropped[d[1]] = true
			}
			if c := create.FindStringSubmatch(s); c != nil {
				last[c[1]] = s
				delete(dropped, c[1])
			}
		}
		if len(dropped) > 0 {
			t.Errorf("migration %d drops %v without creating them again", m.Version, dropped)
		}
	}
	for name, s := range current {
		if last[name] != s {
			t.Errorf("after all migrations %s is not its current definition: add a migration (LatestViewMigration)", name)
		}
	}
	if len(last) != len(current) {
		t.Errorf("migrations create views %d, schemas/views.go defines %d", len(last), len(current))
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestViewStatementsParameterised checks that every table name and the cluster
// come from the options: a cluster migration reuses the statements over its
// Distributed tables.
func TestViewStatementsParameterised(t *testing.T) {
	o := ViewOptions{Observations: "obs_dist", Bars: "bars_dist", Runs: "runs_dist", Quarantine: "q_dist", Cluster: "gpuprice"}
	stmts := ViewStatements(o)
	if len(stmts) != len(Views()) {
		t.Fatalf("%d statements for %d views", len(stmts), len(Views()))
	}
	from := regexp.MustCompile(`(?i)\b(ARRAY\s+JOIN|FROM|JOIN)\s+([a-z_][a-z0-9_]*)`)
	allowed := map[string]bool{"obs_dist": true, "bars_dist": true, "runs_dist": true, "q_dist": true}
	for _, v := range Views() {
		allowed[v.Name] = true
	}
	for i, s := range stmts {
		if !strings.HasPrefix(s, "CREATE VIEW IF NOT EXISTS "+Views()[i].Name+" ON CLUSTER `gpuprice` AS\n") {
			t.Errorf("statement %d: %.80q", i, s)
		}
		for _, m := range from.FindAllStringSubmatch(s, -1) {
			if !allowed[m[2]] && !strings.HasPrefix(strings.ToUpper(m[1]), "ARRAY") {
				t.Errorf("%s reads %s, not a parameter", Views()[i].Name, m[2])
			}
		}
		// A view reads only views created before it.
		for _, later := range Views()[i+1:] {
			if strings.Contains(s, " "+later.Name+"\n") || strings.HasSuffix(s, " "+later.Name) {
				t.Errorf("%s reads %s, created after it", Views()[i].Name, later.Name)
			}
		}
	}
	for _, s := range ViewStatements(ViewOptions{}) {
		if strings.Contains(s, "dist") || strings.Contains(s, "ON CLUSTER") {
			t.Errorf("defaults leak: %.80q", s)
		}
	}
}

// TestViewsDocumented checks that docs/views.md lists every view and every column.
func TestViewsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/views.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := regexp.MustCompile("(?m)^## `([a-z_]+)`").FindAllSubmatchIndex(doc, -1)
	body := map[string]string{}
	for i, s := range sections {
		end := len(doc)
		if i+1 < len(sections) {
			end = sections[i+1][0]
		}
		body[string(doc[s[2]:s[3]])] = string(doc[s[0]:end])
	}
	for _, v := range Views() {
		b, ok := body[v.Name]
		if !ok {
			t.Errorf("docs/views.md has no section ## `%s`", v.Name)
			continue
		}
		for _, c := range v.Columns {
			if !strings.Contains(b, "| `"+c.Name+"` | "+c.Type+" |") {
				t.Errorf("docs/views.md, %s: no row | `%s` | %s |", v.Name, c.Name, c.Type)
			}
		}
	}
}

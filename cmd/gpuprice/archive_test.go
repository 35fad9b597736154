package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/store"
)

func countObservations(t *testing.T, dsn string) int {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obs, err := st.Observations(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(obs)
}

// collect --record keeps the responses; reparse rebuilds the same prices from them
// with the providers gone, and reparsing again adds nothing.
func TestRecordAndReparse(t *testing.T) {
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	arc := filepath.Join(t.TempDir(), "archive")
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "live.duckdb")
	out, code := run(t, "--config", cfg, "--store", dsn, "collect", "--record", arc)
	if !collected(code) || !regexp.MustCompile(`archived \d+ responses of run \S+ in `).MatchString(out) {
		t.Fatalf("collect --record: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(arc, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	live, _ := run(t, "--config", cfg, "--store", dsn, "prices", "--format", "csv")
	liveN := countObservations(t, dsn)
	srv.Close() // from here on, nothing answers but the archive

	fresh := "duckdb://" + filepath.Join(t.TempDir(), "fresh.duckdb")
	out, code = run(t, "--config", cfg, "--store", fresh, "reparse", arc)
	if !collected(code) || strings.Contains(out, "not in the archive") {
		t.Fatalf("reparse: exit %d\n%s", code, out)
	}
	for _, src := range []string{"azure", "vast", "lambda"} {
		if !regexp.MustCompile(`(?m)^` + src + `\s+(ok|degraded)\s+[1-9]`).MatchString(out) {
			t.Errorf("reparse found no rows for %s:\n%s", src, out)
		}
	}
	assertBarsCover(t, fresh, "reparse")
	rebuilt, _ := run(t, "--config", cfg, "--store", fresh, "prices", "--format", "csv")
	if rebuilt != live || len(parseCSV(t, live)) < 20 {
		t.Fatalf("reparsed prices differ from the recorded run's\n--- live ---\n%s\n--- reparsed ---\n%s", live, rebuilt)
	}
	// Reparsing into the store that holds the recorded run, twice, changes no answer.
	for i := 0; i < 2; i++ {
		if _, code := run(t, "--config", cfg, "--store", dsn, "reparse", arc); !collected(code) {
			t.Fatal("reparse into the live store failed")
		}
	}
	again, _ := run(t, "--config", cfg, "--store", dsn, "prices", "--format", "csv")
	if again != live || countObservations(t, dsn) != liveN {
		t.Fatalf("reparse added rows: %d observations, had %d", countObservations(t, dsn), liveN)
	}
	if _, code := run(t, "--config", cfg, "--store", dsn, "collect", "--record", arc); code == 0 {
		t.Error("collect --record into an existing archive succeeded")
	}
	if _, code := run(t, "--config", cfg, "--store", dsn, "reparse", t.TempDir()); code == 0 {
		t.Error("reparse of a directory without an archive succeeded")
	}
}

package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateReport = flag.Bool("update-report", false, "rebuild the example report in examples/report from examples/recorded")

// exampleReportArgs are the README's command for the example report (after
// `gpuprice reparse examples/recorded`), less --out.
var exampleReportArgs = []string{"report", "--gpu", "H100-SXM-80GB", "--at", "2026-11-02", "--quote", "3.50", "--term", "1y", "--gpus", "8", "--utilisation", "60%"}

// TestExampleReport: examples/report holds the report the README's command builds
// from the recorded example (examples/recorded), with the same numbers in every
// table (the sources' last runs aside: they are the time of the reparse). Rebuild
// it after a change of the recorded archive or of the report with
//
//	go test ./cmd/gpuprice -run TestExampleReport -update-report
func TestExampleReport(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "example.duckdb")
	recorded := filepath.Join("..", "..", "examples", "recorded")
	if _, code := run(t, "--store", dsn, "reparse", recorded); !collected(code) {
		t.Fatalf("reparse %s failed", recorded)
	}
	dir := filepath.Join("..", "..", "examples", "report")
	out := t.TempDir()
	if *updateReport {
		out = dir
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, ext := range []string{"html", "md"} {
		mustRun(t, append(append([]string{"--store", dsn}, exampleReportArgs...), "--out", filepath.Join(out, "h100-sxm-80gb."+ext))...)
	}
	if *updateReport {
		chromium(t)
		mustRun(t, append(append([]string{"--store", dsn}, exampleReportArgs...), "--out", filepath.Join(out, "h100-sxm-80gb.pdf"))...)
		t.Logf("rebuilt %s", dir)
		return
	}
	fresh, err := os.ReadFile(filepath.Join(out, "h100-sxm-80gb.html"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(dir, "h100-sxm-80gb.html"))
	if err != nil {
		t.Fatalf("%v: rebuild with go test ./cmd/gpuprice -run TestExampleReport -update-report", err)
	}
	want, got := htmlTables(t, string(fresh)), htmlTables(t, string(committed))
	for id, rows := range want {
		if id == "sources-table" {
			continue
		}
		if len(got[id]) != len(rows) {
			t.Errorf("examples/report: table %s has %d rows, a fresh build %d", id, len(got[id]), len(rows))
			continue
		}
		for i := range rows {
			for k, v := range rows[i] {
				if got[id][i][k] != v {
					t.Errorf("examples/report: table %s row %d %s: %q, a fresh build %q", id, i, k, got[id][i][k], v)
				}
			}
		}
	}
	for _, ext := range []string{"md", "pdf"} {
		if fi, err := os.Stat(filepath.Join(dir, "h100-sxm-80gb."+ext)); err != nil || fi.Size() == 0 {
			t.Errorf("examples/report/h100-sxm-80gb.%s: %v", ext, err)
		}
	}
	if t.Failed() {
		t.Log("examples/report is out of date: go test ./cmd/gpuprice -run TestExampleReport -update-report")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if cmd := "gpuprice " + strings.Join(exampleReportArgs, " "); !strings.Contains(string(readme), cmd) {
		t.Errorf("README.md does not give the example report's command %q", cmd)
	}
}

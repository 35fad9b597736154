package archive

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Jobs refuses what it cannot rebuild: an archive of no source, a source not in it,
// a source no longer known.
func TestJobsErrors(t *testing.T) {
	observed := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	empty := filepath.Join(t.TempDir(), "empty")
	rec, err := Create(empty, "run-1", observed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(observed); err != nil {
		t.Fatal(err)
	}
	a, err := Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Jobs(nil, JobOptions{}); err == nil || !strings.Contains(err.Error(), "records no source") {
		t.Errorf("empty archive: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "gone")
	rec, err = Create(dir, "run-2", observed, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.Source("retired-provider", SourceInfo{ObservedAt: observed, Endpoint: "https://retired.example/prices"})
	if err := rec.Close(observed); err != nil {
		t.Fatal(err)
	}
	if a, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Jobs([]string{"azure"}, JobOptions{}); err == nil || !strings.Contains(err.Error(), "source azure is not in the archive (it has: retired-provider)") {
		t.Errorf("--source azure: %v", err)
	}
	if jobs, err := a.Jobs(nil, JobOptions{}); err == nil || len(jobs) != 0 || !strings.Contains(err.Error(), "retired-provider is not a known source") {
		t.Errorf("unknown source: %d jobs, %v", len(jobs), err)
	}
}

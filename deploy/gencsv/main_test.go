package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/store/storetest"
)

// The file holds the header `gpuprice import csv` reads and series × steps rows.
func TestRunWritesTheHistory(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.csv")
	if err := run(out, "2025-01-01T00:00:00Z", storetest.GenSpec{Series: 7, Steps: 3, Step: time.Hour, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], storetest.CSVHeader) || len(recs) != 1+7*3 {
		t.Fatalf("header %v, %d records; want %v and %d", recs[0], len(recs), storetest.CSVHeader, 1+7*3)
	}
	if err := run("", "2025-01-01T00:00:00Z", storetest.GenSpec{}); err == nil {
		t.Fatal("no -out: no error")
	}
}

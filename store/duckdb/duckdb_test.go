package duckdb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/gpuprice/gpuprice/analytics/figurestest"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/duckdb"
	"github.com/gpuprice/gpuprice/store/storetest"
)

func TestConformance(t *testing.T) {
	open := func(t *testing.T) store.Store {
		st, err := duckdb.Open(t.Context(), filepath.Join(t.TempDir(), "gpuprice.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	storetest.Run(t, open)
	figurestest.Run(t, open)
}

func TestOpenByDSNCreatesDirectoryAndPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dir", "prices.duckdb")
	st, err := store.Open(ctx, "duckdb://"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	obs := storetest.Observations()
	if err := st.WriteObservations(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = store.Open(ctx, "duckdb://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil || len(applied) != 0 {
		t.Fatalf("Migrate on a migrated file: %v, %v", applied, err)
	}
	got, err := st.Observations(ctx, store.Filter{})
	if err != nil || len(got) != len(obs) {
		t.Fatalf("after reopening: %d rows, %v; want %d", len(got), err, len(obs))
	}
}

func TestBadDSN(t *testing.T) {
	for _, dsn := range []string{"duckdb://relative/file.duckdb", "duckdb:file.duckdb", "duckdb://"} {
		_, err := store.Open(context.Background(), dsn)
		if err == nil || !strings.Contains(err.Error(), "duckdb:///absolute/path") {
			t.Errorf("Open(%q): err = %v", dsn, err)
		}
	}
}

func TestOpenLockedFileSaysWhy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.duckdb")
	// A second process holds the file: run this test binary again as that process.
	if os.Getenv("GPUPRICE_TEST_HOLD_DUCKDB") != "" {
		st, err := duckdb.Open(context.Background(), os.Getenv("GPUPRICE_TEST_HOLD_DUCKDB"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		fmt.Println("holding")
		_, _ = io.ReadAll(os.Stdin) // until the parent closes stdin
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOpenLockedFileSaysWhy$")
	cmd.Env = append(os.Environ(), "GPUPRICE_TEST_HOLD_DUCKDB="+path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	buf := make([]byte, 7)
	if _, err := io.ReadFull(stdout, buf); err != nil || string(buf) != "holding" {
		t.Fatalf("holder did not start: %q %v", buf, err)
	}
	_, err := duckdb.Open(context.Background(), path)
	if !errors.Is(err, duckdb.ErrLocked) || !strings.Contains(err.Error(), "gpuprice serve") {
		t.Errorf("err = %v, want ErrLocked with a hint", err)
	}
}

// A stored row whose version is ahead of this process's clock (written on a machine
// whose clock was ahead) is still replaced by a later write of its identity: a
// write tells its appended rows from the stored ones by their versions, so it must
// hand out versions above every stored one.
func TestWriteReplacesRowsOfVersionsAheadOfTheClock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ahead.duckdb")
	st := openMigrated(t, path)
	obs := storetest.Observations()
	if err := st.WriteObservations(ctx, obs); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	// About 30 years ahead.
	if _, err := db.Exec(`UPDATE observations SET version = version + 1000000000000000000`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	st, err = duckdb.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	again := slices.Clone(obs)
	for i := range again {
		again[i].PriceUSDGPUHour += 1
	}
	if err := st.WriteObservations(ctx, again); err != nil {
		t.Fatal(err)
	}
	got, err := st.Observations(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(obs) {
		t.Fatalf("%d rows after writing the %d identities again, want %d", len(got), len(obs), len(obs))
	}
	want := map[string]float64{}
	for _, o := range again {
		want[fmt.Sprint(o.SeriesKey(), o.EffectiveAt.Unix())] = o.PriceUSDGPUHour
	}
	for _, o := range got {
		if p := want[fmt.Sprint(o.SeriesKey(), o.EffectiveAt.Unix())]; o.PriceUSDGPUHour != p {
			t.Errorf("%s at %v: price %v, want the later write's %v", o.SeriesKey(), o.EffectiveAt, o.PriceUSDGPUHour, p)
		}
	}
}

// openMigrated opens the DuckDB file at path and migrates it.
func openMigrated(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := duckdb.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestOpenExistingCreatesNothing: a read-only open of a file that does not exist (by
// DSN or bare path) is store.ErrNotExist naming it and creates neither the file nor
// its directory; a file without gpuprice's tables is ErrNotExist too; a migrated one
// opens.
func TestOpenExistingCreatesNothing(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "nested")
	path := filepath.Join(dir, "prices.duckdb")
	for _, dsn := range []string{"duckdb://" + path, path} {
		_, err := store.OpenExisting(ctx, dsn)
		if !errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), path+" does not exist") {
			t.Fatalf("OpenExisting(%s): %v", dsn, err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("OpenExisting(%s) made %s: %v", dsn, dir, err)
		}
	}
	st, err := store.Open(ctx, path) // the file, with no tables
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := store.OpenExisting(ctx, path); !errors.Is(err, store.ErrNotExist) ||
		!strings.Contains(err.Error(), "holds no gpuprice tables") {
		t.Fatalf("OpenExisting on a file without tables: %v", err)
	}
	if st, err = store.Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if st, err = store.OpenExisting(ctx, path); err != nil {
		t.Fatalf("OpenExisting on a migrated file: %v", err)
	}
	st.Close()
}

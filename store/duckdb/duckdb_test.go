package duckdb_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/duckdb"
	"github.com/gpuprice/gpuprice/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := duckdb.Open(t.Context(), filepath.Join(t.TempDir(), "gpuprice.duckdb"))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
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

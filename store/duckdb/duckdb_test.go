package duckdb_test

import (
	"context"
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

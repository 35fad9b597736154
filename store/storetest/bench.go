package storetest

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// BenchRows is the raw row count a store benchmark loads: $env (at least 1000),
// else def.
func BenchRows(tb testing.TB, env string, def int) int {
	tb.Helper()
	s := os.Getenv(env)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1000 {
		tb.Fatalf("%s=%q: a row count of at least 1000", env, s)
	}
	return n
}

// BenchStore opens the store at dsn (store.Open: the benchmark's package registers
// its backend), migrates it and closes it when the benchmark ends. Unless loaded
// says the store already holds the data (kept from an earlier run), it writes
// spec's SYNTHETIC history (Generate, batch rows a write) and builds its bars.
func BenchStore(
	tb testing.TB,
	ctx context.Context,
	dsn string,
	spec GenSpec,
	batch int,
	loaded func(store.Store) bool,
) store.Store {
	tb.Helper()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	if loaded(st) {
		return st
	}
	t0 := time.Now()
	if err := Generate(spec, batch,
		func(obs []schemas.Observation) error { return st.WriteObservations(ctx, obs) }); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("loaded %d rows in %v", spec.Series*spec.Steps, time.Since(t0).Round(time.Second))
	t0 = time.Now()
	if err := st.(store.Rollups).Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("built the bars in %v", time.Since(t0).Round(time.Second))
	return st
}

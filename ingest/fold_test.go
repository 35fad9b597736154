package ingest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// rollupCounter is a ClickHouse store that counts the Rollups asked of it.
type rollupCounter struct {
	*clickhouse.Store
	rollups atomic.Int32
}

func (c *rollupCounter) Rollup(ctx context.Context, since, until time.Time) error {
	c.rollups.Add(1)
	return c.Store.Rollup(ctx, since, until)
}

// TestIntegrationClickHouseRunnerFoldsBars checks that a collection and an import
// into a store that writes bars from a fold (store.FoldedRollups) build their bars
// from the rows they wrote, never asking for a Rollup, and that those bars are the
// ones a Rollup over everything written gives: into empty days, then with rows
// that rewrite identities and add to days rolled up before.
func TestIntegrationClickHouseRunnerFoldsBars(t *testing.T) {
	ctx := t.Context()
	dsn := chtest.FreshDSN(t, "fold")
	opened, err := clickhouse.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opened.Close() })
	if _, err := opened.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	st := &rollupCounter{Store: opened.(*clickhouse.Store)}
	cat, err := schemas.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Store: st, GPUs: cat, Providers: schemas.DefaultProviders(),
		Now: func() time.Time { return storetest.T0.Add(200 * time.Hour) }}
	emit := func(obs []schemas.Observation) Job {
		return Job{Name: "fold-test", Source: sourceFunc(func(_ context.Context, e scrapers.Emitter) error {
			for _, o := range obs {
				e.Emit(o)
			}
			return nil
		})}
	}
	reads := func() string {
		var out string
		for _, w := range store.Widths {
			for _, q := range []store.BarQuery{{Width: w}, {Width: w, CarryIn: true,
				Filter: store.Filter{Since: storetest.T0.Add(30 * time.Hour)}}} {
				bars, err := st.Bars(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if len(bars) == 0 {
					t.Fatalf("no %v bars: the test proves nothing", w)
				}
				out += storetest.RoundFigures(fmt.Sprintf("%v %d %+v\n", w, len(bars), bars))
			}
		}
		return out
	}
	check := func(what string) {
		t.Helper()
		if n := st.rollups.Load(); n != 0 {
			t.Fatalf("%s: %d Rollups asked for: the bars were not folded", what, n)
		}
		folded := reads()
		if err := st.Store.Rollup(ctx, time.Time{}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if rolled := reads(); folded != rolled {
			t.Fatalf("%s: bars differ from a Rollup's:\n%s\nafter a Rollup:\n%s", what, folded, rolled)
		}
	}
	all := storetest.RollupData()
	half := len(all) / 2
	for _, res := range r.Collect(ctx, []Job{emit(all[:half])}, Options{}) {
		if res.RowsStored == 0 || res.Status == schemas.RunFailed {
			t.Fatalf("collection: %+v", res.Run)
		}
	}
	check("after a collection into empty days")

	again := append([]schemas.Observation{}, all[half-30:]...)
	for i := range again[:10] {
		again[i].PriceUSDHour += 1
		again[i].PriceNative += 1
	}
	res, err := r.Import(ctx, "import:fold-test", Options{}, func(ctx context.Context, run *Run) error {
		for i, o := range again {
			run.Emit(o)
			if i%500 == 0 {
				if err := run.Commit(ctx); err != nil {
					return err
				}
			}
		}
		return run.Commit(ctx)
	})
	if err != nil || res.RowsStored == 0 {
		t.Fatalf("import: %v %+v", err, res.Run)
	}
	check("after an import rewriting and adding to days rolled up before")
}

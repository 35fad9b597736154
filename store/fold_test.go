package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestBarFoldIsTheReferenceRollup checks a fold's bars against the reference
// rollup of the same rows (storetest.WantBars): rows added in several writes, some
// rewriting identities of an earlier one (the last write wins), and the same rows
// folded by two folds merged in write order. A fold past its limit overflows and
// builds no bars.
func TestBarFoldIsTheReferenceRollup(t *testing.T) {
	all := storetest.RollupData()
	rewritten := slices.Clone(all[100:140])
	for i := range rewritten {
		rewritten[i].PriceUSDGPUHour *= 1.5
	}
	rows := append(slices.Clone(all), rewritten...)
	one := store.NewBarFold(0)
	one.Add(all[:1000])
	one.Add(all[1000:])
	one.Add(rewritten)
	first, second := store.NewBarFold(0), store.NewBarFold(0)
	first.Add(all)
	second.Add(rewritten)
	merged := store.NewBarFold(0)
	merged.Merge(first)
	merged.Merge(second)
	for name, f := range map[string]*store.BarFold{"one fold": one, "merged folds": merged} {
		got := f.Bars(nil)
		for i, w := range store.Widths {
			want := storetest.WantBars(rows, w)
			if len(want) < 10 {
				t.Fatalf("%d %v bars: the test proves little", len(want), w)
			}
			if d := storetest.BarsDiff(got[i], want); d != "" {
				t.Errorf("%s: %v bars: %s", name, w, d)
			}
		}
		since, until := f.Span()
		if lo, hi := storetest.T0.Add(-time.Hour), storetest.T0.Add(100*time.Hour); since.Before(lo) || until.After(hi) ||
			!since.Before(until) {
			t.Errorf("%s: span [%v, %v)", name, since, until)
		}
	}
	small := store.NewBarFold(len(all))
	small.Add(all)
	if small.Overflowed() {
		t.Fatal("a fold of exactly its limit overflowed")
	}
	small.Add(rewritten[:1])
	if !small.Overflowed() || len(small.Bars(nil)[0]) != 0 {
		t.Fatal("a fold past its limit did not overflow")
	}
}

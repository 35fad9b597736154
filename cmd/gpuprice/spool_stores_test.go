package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// poisonStore is one real store and the rows it refuses on its own: ClickHouse a
// time outside DateTime's range, DuckDB text that is not valid UTF-8 (collect's
// ingest.Storable keeps both out; a spool written before it, or a batch reaching
// the store another way, may still hold them).
type poisonStore struct {
	name   string
	dsn    func(t *testing.T) string
	poison []func(o *schemas.Observation) // each makes a row this store refuses
	reason string                         // in the store's error for each
	// spoolMends: a spool segment is JSON, which carries invalid UTF-8 as U+FFFD,
	// so DuckDB's poison rows read back from the spool storable (and are stored so).
	spoolMends bool
	// screened: ingest.Storable refuses the poison rows too, so spool replay
	// quarantines them without a write ("not storable: …", not the store's error).
	screened bool
}

func poisonStores() []poisonStore {
	return []poisonStore{
		{"DuckDB", func(t *testing.T) string { return "duckdb://" + filepath.Join(t.TempDir(), "poison.duckdb") },
			[]func(o *schemas.Observation){
				func(o *schemas.Observation) { o.Region = "bad-region-\xff\xfe" },
				func(o *schemas.Observation) { o.Zone = "bad-zone-\xc3" },
			}, "duckdb: write observations", true, false},
		{"ClickHouse", func(t *testing.T) string { return chtest.FreshDSN(t, "spoolpoison") },
			[]func(o *schemas.Observation){
				func(o *schemas.Observation) { o.EffectiveAt = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC) },
				func(o *schemas.Observation) { o.ObservedAt = time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC) },
			}, "outside ClickHouse DateTime's range", false, true},
	}
}

// goodRow is a normalised observation every store holds; i makes its series.
func goodRow(run string, i int) schemas.Observation {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return schemas.Observation{ObservedAt: at, EffectiveAt: at, Provider: "lambda", Tier: schemas.TierSpecialist,
		SKU: fmt.Sprintf("%s-sku-%03d", run, i), Region: "us-east-1", GPU: "H100-SXM-80GB", GPUName: "H100 SXM", GPUCount: 1,
		Pricing: schemas.OnDemand, PriceUSDHour: 2.49, PriceUSDGPUHour: 2.49, Currency: "USD", PriceNative: 2.49,
		Unit: schemas.UnitHour, FXRate: 1, SourceKind: schemas.SourceAPI, RunID: run}
}

func openMigrated(t *testing.T, dsn string) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

// storedSKUs lists the SKUs of every stored observation of run.
func storedSKUs(t *testing.T, st store.Store, run string) []string {
	t.Helper()
	var skus []string
	if err := st.Each(context.Background(), store.Filter{}, func(o schemas.Observation) error {
		if o.RunID == run {
			skus = append(skus, o.SKU)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(skus)
	return skus
}

// A spool holding a poison segment (rows the store refuses among good ones), a
// segment damaged on disk, and a run record whose error text is not valid UTF-8 is
// replayed into real stores: the rows at fault are found by splitting, quarantined
// with the store's reason, every other row is stored, the damaged segment is moved
// to spool/corrupt/ with a reason file, the run record is stored, the spool is
// left empty, and the count replay returns is what the store holds. (On DuckDB the
// spool's JSON has already made the rows storable: they are all stored, mended.)
// Rows no store may hold (ingest.Storable: here one dated 2200, which DuckDB would
// take) are quarantined without a write on every store, as "not storable".
func TestSpoolReplayPoisonSegmentIntoRealStores(t *testing.T) {
	for _, ps := range poisonStores() {
		t.Run(ps.name, func(t *testing.T) {
			ctx := context.Background()
			st := openMigrated(t, ps.dsn(t))
			dir := t.TempDir()
			sp := &ingest.DirSpool{Dir: dir}
			const run = "spooled"
			var first []schemas.Observation
			var bad []string // the poison rows' SKUs
			for i := range 40 {
				o := goodRow(run, i)
				if k := slices.Index([]int{5, 31}, i); k >= 0 && k < len(ps.poison) {
					o.SKU = fmt.Sprintf("poison-%02d", i)
					ps.poison[k](&o)
					bad = append(bad, o.SKU)
				}
				if i == 17 {
					o.SKU = "future-17"
					o.EffectiveAt = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
				}
				first = append(first, o)
			}
			damaged := []schemas.Observation{goodRow(run, 100), goodRow(run, 101)}
			last := []schemas.Observation{goodRow(run, 200), goodRow(run, 201), goodRow(run, 202)}
			for _, b := range [][]schemas.Observation{first, damaged, last} {
				if err := sp.Spool(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			rec := schemas.Run{RunID: run, Source: "lambda", StartedAt: time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC),
				FinishedAt: time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC), Status: schemas.RunFailed,
				Error: "provider said: \xff\xfe not JSON", RowsAccepted: 45}
			if err := sp.SpoolRun(ctx, rec); err != nil {
				t.Fatal(err)
			}
			names, _ := filepath.Glob(filepath.Join(dir, "*.seg.gz"))
			slices.Sort(names)
			if len(names) != 4 {
				t.Fatalf("segments %v", names)
			}
			// The second segment is damaged on disk (its end lost).
			b, err := os.ReadFile(names[1])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(names[1], b[:len(b)/2], 0o600); err != nil {
				t.Fatal(err)
			}

			n, err := sp.Replay(ctx, st)
			if err == nil || !strings.Contains(err.Error(), filepath.Base(names[1])) && !strings.Contains(err.Error(), "corrupt") {
				t.Errorf("replay error %v, want the damaged segment named", err)
			}
			refused := bad
			if ps.spoolMends {
				refused = nil
			}
			refused = append(slices.Clone(refused), "future-17")
			slices.Sort(refused)
			wantStored := len(first) - len(refused) + len(last)
			if n != wantStored {
				t.Errorf("replay says %d rows written, want %d", n, wantStored)
			}
			var want []string
			for _, o := range append(slices.Clone(first), last...) {
				if !slices.Contains(refused, o.SKU) {
					want = append(want, o.SKU)
				}
			}
			slices.Sort(want)
			if got := storedSKUs(t, st, run); !slices.Equal(got, want) {
				t.Errorf("stored %d rows %v,\nwant %d: %v", len(got), got, len(want), want)
			}
			if ps.spoolMends {
				obs, err := st.Observations(ctx, store.Filter{})
				if err != nil {
					t.Fatal(err)
				}
				mended := 0
				for _, o := range obs {
					if slices.Contains(bad, o.SKU) && strings.Contains(o.Region+o.Zone, "\uFFFD") {
						mended++
					}
				}
				if mended != len(bad) {
					t.Errorf("%d of the %d rows spooled with invalid UTF-8 stored with U+FFFD in its place", mended, len(bad))
				}
			}
			q, err := st.Quarantine(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			var quarantined []string
			for _, x := range q {
				reason := ps.reason
				if ps.screened || strings.Contains(x.Raw, "future-17") {
					reason = "spool replay: not storable: "
				}
				if !strings.Contains(x.Reason, "spool replay") || !strings.Contains(x.Reason, reason) || x.RunID != run {
					t.Errorf("quarantined with reason %q (run %q), want %q", x.Reason, x.RunID, reason)
				}
				for _, s := range append(slices.Clone(bad), "future-17") {
					if strings.Contains(x.Raw, s) {
						quarantined = append(quarantined, s)
					}
				}
			}
			slices.Sort(quarantined)
			if len(q) != len(refused) || !slices.Equal(quarantined, refused) {
				t.Errorf("quarantined %d rows (%v), want the refused rows %v", len(q), quarantined, refused)
			}
			runs, err := st.Runs(ctx, "lambda", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].RowsAccepted != 45 || !strings.Contains(runs[0].Error, "provider said: \uFFFD\uFFFD not JSON") {
				t.Errorf("run records %+v, want the spooled one with its error made valid UTF-8", runs)
			}
			if st, _ := sp.Status(); st.Segments != 0 {
				t.Errorf("spool not emptied: %+v", st)
			}
			moved := filepath.Join(dir, "corrupt", filepath.Base(names[1]))
			if _, err := os.Stat(moved); err != nil {
				t.Errorf("damaged segment not kept in corrupt/: %v", err)
			}
			if why, err := os.ReadFile(moved + ".reason"); err != nil || len(strings.TrimSpace(string(why))) == 0 {
				t.Errorf("no reason beside the damaged segment: %q %v", why, err)
			}
			// Replaying again finds nothing to do and changes nothing.
			if n, err := sp.Replay(ctx, st); n != 0 || err != nil {
				t.Errorf("second replay: %d, %v", n, err)
			}
			if got := storedSKUs(t, st, run); len(got) != len(want) {
				t.Errorf("after a second replay %d rows stored, want %d", len(got), len(want))
			}
		})
	}
}

// A batch holding rows a real store refuses is split until they are found: they go
// to the reject function with the store's error, every other row of the batch is
// stored, and the batcher's counts say so.
func TestBatchSplitAgainstRealStores(t *testing.T) {
	for _, ps := range poisonStores() {
		t.Run(ps.name, func(t *testing.T) {
			st := openMigrated(t, ps.dsn(t))
			const run = "batched"
			var mu sync.Mutex
			rejected := map[string]string{}
			b := ingest.NewBatcher(context.Background(), st, nil, ingest.BatchConfig{Size: 500}, func(o schemas.Observation, reason string) {
				mu.Lock()
				defer mu.Unlock()
				rejected[o.SKU] = reason
			})
			var bad, want []string
			const rows = 300
			for i := range rows {
				o := goodRow(run, i)
				switch i {
				case 17, 18, 250: // two neighbours and one far away
					o.SKU = fmt.Sprintf("poison-%03d", i)
					ps.poison[i%len(ps.poison)](&o)
					bad = append(bad, o.SKU)
				default:
					want = append(want, o.SKU)
				}
				b.Add(o)
			}
			stats, err := b.Close()
			if err != nil {
				t.Fatalf("close: %v (%+v)", err, stats)
			}
			if stats.Written != rows-len(bad) || stats.Quarantined != len(bad) || stats.Spooled != 0 || stats.Lost != 0 {
				t.Errorf("stats %+v, want %d written, %d quarantined, none spooled or lost", stats, rows-len(bad), len(bad))
			}
			slices.Sort(want)
			if got := storedSKUs(t, st, run); !slices.Equal(got, want) {
				t.Errorf("stored %d rows, want the %d good ones", len(got), len(want))
			}
			for _, s := range bad {
				if r, ok := rejected[s]; !ok || !strings.Contains(r, ps.reason) {
					t.Errorf("%q rejected with %q (%v), want the store's refusal (%q)", s, r, ok, ps.reason)
				}
			}
			if len(rejected) != len(bad) {
				t.Errorf("rejected %d rows, want %d", len(rejected), len(bad))
			}
		})
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// Issue 29, finding 12: `kill -9` in the middle of `gpuprice import csv` left the
// rows it had stored with no run record and no bars until a re-run. Now the run is
// recorded as started before its rows are written; the killed run shows as
// interrupted, and the next run (here an import of one row; with serve, at start)
// rebuilds the bars of its span and records it as interrupted for good.

func TestKilledImportIsRecoveredByTheNextRunDuckDB(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "store.duckdb")
	killedImportRecovered(t, dsn, false)
}

func TestKilledImportIsRecoveredByServeDuckDB(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "store.duckdb")
	killedImportRecovered(t, dsn, true)
}

func TestIntegrationClickHouseKilledImportIsRecovered(t *testing.T) {
	chtest.RequireServer(t, "the killed import and this test open the store from two processes")
	killedImportRecovered(t, chtest.FreshDSN(t, "killed"), false)
	killedImportRecovered(t, chtest.FreshDSN(t, "killedserve"), true)
}

// killChunk is the rows of each hour of the fed history, and a batch of the import.
const killChunk = 200

// killedImportRecovered feeds `gpuprice import csv` a history through a FIFO, one
// hour of killChunk series per batch, SIGKILLs it once it has stored a few batches
// and is writing more, and checks what the store shows then and after the recovery
// (by an import, or by serve when byServe).
func killedImportRecovered(t *testing.T, dsn string, byServe bool) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpuprice.yaml")
	text := fmt.Sprintf("data_dir: %s\ningest: {batch_size: %d, flush_interval: 50ms}\n", dir, killChunk)
	if err := os.WriteFile(cfg, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code := run(t, "--config", cfg, "--store", dsn, "migrate"); code != 0 {
		t.Fatal("migrate failed")
	}
	fifo := filepath.Join(dir, "history.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, out, exited := startGPUPrice(t, "--config", cfg, "--store", dsn, "--log-level", "debug", "import", "csv", fifo)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until the import opens it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Hours going back from base: each batch reaches an hour earlier, so the run's
	// started record is widened before each one (a debug line).
	base := time.Date(2026, 10, 20, 12, 0, 0, 0, time.UTC)
	fmt.Fprintln(w, "observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind")
	widened := regexp.MustCompile(`run recorded as started.* since=`)
	hours := 0
	for ; hours < 200 && len(widened.FindAllString(out.String(), -1)) < 4; hours++ {
		var b strings.Builder
		at := base.Add(-time.Duration(hours) * time.Hour).Format(time.RFC3339)
		for i := 0; i < killChunk; i++ {
			fmt.Fprintf(&b, "%s,lambda,specialist,kill-%d,H100-SXM-80GB,1,us-east-1,,on_demand,%g,%g,import\n", at, i,
				2+float64(i)/100, 2+float64(i)/100)
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			t.Fatalf("writing to the import: %v\n%s", err, out.String())
		}
		time.Sleep(100 * time.Millisecond) // two flush intervals: the hour is a batch of its own
	}
	if hours == 200 {
		t.Fatalf("the import never recorded its span:\n%s", out.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-exited; err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("import: %v, want killed", err)
	}
	t.Logf("killed after %d hours fed", hours)

	// What the store holds: some rows, the started record covering them, no bars.
	st := openStore(t, dsn)
	stored := countRows(t, st)
	if stored == 0 || stored%killChunk != 0 {
		t.Fatalf("%d rows stored before the kill: want whole batches of %d", stored, killChunk)
	}
	started, err := st.(store.RunJournal).StartedRuns(t.Context())
	if err != nil || len(started) != 1 {
		t.Fatalf("started runs after the kill: %+v, %v", started, err)
	}
	k := started[0]
	first := base.Add(-time.Duration(stored/killChunk-1) * time.Hour)
	if k.Source != "import:csv" || k.SpanSince.After(first) || k.SpanUntil.Before(base.Add(time.Second)) {
		t.Fatalf("started record %+v: want its span to cover the stored rows [%s, %s]", k, first, base)
	}
	t.Logf("%d rows stored, started record %s..%s, %d rows said", stored, k.SpanSince, k.SpanUntil, k.RowsAccepted)
	if n := countBars(t, st); n != 0 {
		t.Fatalf("%d hourly bars before the recovery: want none (the run was killed before its rollup)", n)
	}
	st.Close()
	// Shown as interrupted at once: its process is gone.
	var runs []schemas.Run
	runJSON(t, &runs, "--config", cfg, "--store", dsn, "runs", "--format", "json")
	if len(runs) != 1 || runs[0].Status != schemas.RunInterrupted || !strings.Contains(runs[0].Error, "killed?") {
		t.Fatalf("runs after the kill: %+v, want the run interrupted", runs)
	}

	if byServe {
		srv, sout, sexited := startGPUPrice(t, "--config", cfg, "--store", dsn, "--log-level", "info", "serve", "--listen", "127.0.0.1:0")
		addr := waitMatch(t, sout, regexp.MustCompile(`serving on (http://[0-9.:]+)`))
		// The runner's "killed run found" comes before the metrics are told: the
		// schedule's line comes after.
		waitMatch(t, sout, regexp.MustCompile(`killed runs recovered`))
		_, metrics := get(t, addr+"/metrics")
		if !strings.Contains(metrics, `gpuprice_runs_total{source="import:csv",status="interrupted"} 1`) {
			t.Errorf("/metrics after the recovery lacks the interrupted run:\n%s", grepLines(metrics, "gpuprice_runs_total"))
		}
		_, api := get(t, addr+"/api/v1/runs")
		if !strings.Contains(api, `"status":"interrupted"`) {
			t.Errorf("/api/v1/runs: %s", api)
		}
		terminate(t, srv, sout, sexited)
	} else {
		one := filepath.Join(dir, "one.csv")
		os.WriteFile(one, []byte("observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind\n"+
			"2026-10-21T00:00:00Z,lambda,specialist,other,H100-SXM-80GB,1,us-east-1,,on_demand,2.5,2.5,import\n"), 0o600)
		if _, code := run(t, "--config", cfg, "--store", dsn, "import", "csv", one); code != 0 {
			t.Fatal("the next import failed")
		}
	}

	st = openStore(t, dsn)
	defer st.Close()
	// A ClickHouse server may finish an insert whose client it lost: the rows
	// counted now, each within the started record's span.
	want := 0
	err = st.Each(t.Context(), store.Filter{}, func(o schemas.Observation) error {
		if strings.HasPrefix(o.SKU, "kill-") {
			want++
			if o.EffectiveAt.Before(k.SpanSince) || !o.EffectiveAt.Before(k.SpanUntil) {
				t.Errorf("row %s at %s outside the started record's span", o.SKU, o.EffectiveAt)
			}
		}
		return nil
	})
	if err != nil || want < stored {
		t.Fatalf("%d rows of the killed import after the recovery (%d before): %v", want, stored, err)
	}
	if !byServe {
		want++ // the next import's own row
	}
	if n := countBars(t, st); n != want {
		t.Fatalf("%d hourly bars after the recovery, want %d (one per series and hour stored)", n, want)
	}
	left, err := st.(store.RunJournal).StartedRuns(t.Context())
	if err != nil || len(left) != 0 {
		t.Fatalf("started runs after the recovery: %+v, %v", left, err)
	}
	all, err := st.Runs(t.Context(), "import:csv", 0)
	if err != nil {
		t.Fatal(err)
	}
	var killed *schemas.Run
	for i := range all {
		if all[i].RunID == k.RunID {
			killed = &all[i]
		}
	}
	// Its rows as its last started record said them: a ClickHouse server may also
	// finish the journal's last rewrite after the kill (as it may a batch), so the
	// count can only have grown since it was read above.
	if killed == nil || killed.Status != schemas.RunInterrupted || killed.RowsAccepted < k.RowsAccepted {
		t.Fatalf("the killed run's record after the recovery: %+v", killed)
	}
}

func openStore(t *testing.T, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func countRows(t *testing.T, st store.Store) int {
	t.Helper()
	n := 0
	if err := st.Each(t.Context(), store.Filter{}, func(schemas.Observation) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func countBars(t *testing.T, st store.Store) int {
	t.Helper()
	bars, err := st.(store.Rollups).Bars(context.WithoutCancel(t.Context()), store.BarQuery{Width: store.Hourly})
	if err != nil {
		t.Fatal(err)
	}
	return len(bars)
}

// waitMatch waits up to a minute for re in out and returns its first group (or the
// match).
func waitMatch(t *testing.T, out *syncBuffer, re *regexp.Regexp) string {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m[len(m)-1]
		}
	}
	t.Fatalf("no %q in:\n%s", re, out.String())
	return ""
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

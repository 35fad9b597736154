package main

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/clickhouse/embedded"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// BenchmarkImportCSV times `gpuprice import csv` of one generated CSV (SYNTHETIC
// rows in the shape `prices --format csv` exports, storetest.GenerateCSV) into
// ClickHouse and into the embedded DuckDB store, against clickhouse-client
// inserting the same file (`INSERT … FORMAT CSVWithNames`) into a plain MergeTree
// table with the same columns. Each iteration runs the three side by side, each
// into a fresh database whose tables are created before the timer starts (the
// client's CREATE TABLE, gpuprice's migrate); the best time of each over the
// iterations is reported, with the ratios the issue sets targets on:
//
//	ch_rate:       clickhouse-client's time / gpuprice's time into ClickHouse (target ≥ 0.5)
//	duckdb_vs_ch:  gpuprice's time into DuckDB / clickhouse-client's time (target ≤ 3)
//	chdb_vs_client: gpuprice's time into chDB (current ClickHouse embedded, when
//	                libchdb.so is installed) / clickhouse-client's time into the server
//
// and against issue 27's reference, clickhouse-client loading the rows gpuprice
// stored as its own `export --format csv` writes them, times as YYYY-MM-DD
// hh:mm:ss, into a plain MergeTree (from the second iteration; ISO times with
// best_effort parsing cost 18.16's client about three times as much):
//
//	ch_vs_exported:     that client's time / gpuprice's time into ClickHouse (target ≥ 0.9)
//	duckdb_vs_exported: gpuprice's time into DuckDB / that client's time (target ≤ 1.2)
//
// It needs GPUPRICE_CLICKHOUSE_DSN and clickhouse-client on PATH; the size is
// GPUPRICE_BENCH_IMPORT_ROWS (default 20,000); GPUPRICE_BENCH_IMPORT_STORES=clickhouse
// (or duckdb, or chdb) times gpuprice into that store only, beside the client (for a profile
// of one store's import). deploy/bench.sh runs it at 2M rows:
//
//	GPUPRICE_BENCH_IMPORT_ROWS=2000000 go test ./cmd/gpuprice -run '^$' -bench ImportCSV -benchtime 3x
func BenchmarkImportCSV(b *testing.B) {
	chDSN, err := url.Parse(chtest.FreshDSN(b, "bench_import"))
	if err != nil {
		b.Fatal(err)
	}
	db := strings.TrimPrefix(chDSN.Path, "/")
	native := chDSN
	client, lerr := exec.LookPath("clickhouse-client")
	if lerr != nil {
		b.Skip("clickhouse-client is not on PATH")
	}
	rows := 20_000
	if s := os.Getenv("GPUPRICE_BENCH_IMPORT_ROWS"); s != "" {
		if rows, err = strconv.Atoi(s); err != nil || rows < 1000 {
			b.Fatalf("GPUPRICE_BENCH_IMPORT_ROWS=%q: a row count of at least 1000", s)
		}
	}
	stores := os.Getenv("GPUPRICE_BENCH_IMPORT_STORES")
	if !slices.Equal(storetest.CSVHeader, cli.CSVHeader) {
		b.Fatalf("storetest.CSVHeader %v is not the CLI's %v", storetest.CSVHeader, cli.CSVHeader)
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "prices.csv")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	const series = 1000
	n, err := storetest.GenerateCSV(f, storetest.GenSpec{Series: series, Steps: rows / series,
		Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Step: 5 * time.Minute, Seed: 1})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	cfg := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+dir+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}

	clientArgs := []string{"--host", native.Hostname(), "--port", native.Port()}
	if native.User != nil {
		clientArgs = append(clientArgs, "--user", native.User.Username())
		if pw, ok := native.User.Password(); ok {
			clientArgs = append(clientArgs, "--password", pw)
		}
	}
	// clickhouse-client runs query with stdin from the file named, if any; ch parses
	// times with best_effort (the generated file's ISO times).
	clientRun := func(stdin, query string, opts ...string) {
		cmd := exec.Command(client, append(append(slices.Clone(clientArgs), opts...), "--query", query)...)
		if stdin != "" {
			in, err := os.Open(stdin)
			if err != nil {
				b.Fatal(err)
			}
			defer in.Close()
			cmd.Stdin = in
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("clickhouse-client %q: %v\n%s", query, err, out)
		}
	}
	ch := func(stdin, query string) { clientRun(stdin, query, "--date_time_input_format=best_effort") }
	// The same columns in the CSV's order, plain types, the observations' sort key.
	nativeTable := `CREATE TABLE ` + db + `.csv_native (observed_at DateTime('UTC'), provider String,
		tier String, sku String, gpu String, gpu_count Float64, region String, zone String, pricing String,
		price_usd_hour Float64, price_usd_gpu_hour Float64, source_kind String, effective_at DateTime('UTC'),
		gpu_name String, gpu_memory_gb Float64, currency String, price_native Float64, unit String,
		fx_rate Float64, interconnect String, source_url String, price_scope String, price_basis String, origin String)
	ENGINE = MergeTree() ORDER BY (provider, gpu, pricing, region, sku, zone, effective_at)`
	// migrate creates gpuprice's tables before the timed import, as the client's
	// table is created before its timed insert: both time loading rows into a
	// database that has its schema.
	migrate := func(dsn string) {
		var out, errb bytes.Buffer
		if code := cli.Main(context.Background(), []string{"--config", cfg, "--store", dsn, "--log-level", "error",
			"migrate"}, &out, &errb); code != 0 {
			b.Fatalf("gpuprice migrate --store %s: exit %d\n%s%s", dsn, code, out.String(), errb.String())
		}
	}
	gpuprice := func(dsn string) {
		var out, errb bytes.Buffer
		if code := cli.Main(context.Background(), []string{"--config", cfg, "--store", dsn, "--log-level", "error",
			"import", "csv", file}, &out, &errb); code != 0 {
			b.Fatalf("gpuprice import csv --store %s: exit %d\n%s%s", dsn, code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), strconv.Itoa(n)) {
			b.Fatalf("gpuprice import csv: %d rows expected in the report:\n%s", n, out.String())
		}
	}
	best := map[string]time.Duration{}
	timeIt := func(name string, fn func()) {
		t0 := time.Now()
		fn()
		if d := time.Since(t0); best[name] == 0 || d < best[name] {
			best[name] = d
		}
	}
	// The reference of issue 27: the engine loading exactly the rows gpuprice
	// stores, i.e. the file gpuprice's own `export --format csv` writes for them,
	// its times as YYYY-MM-DD hh:mm:ss (the client's default parsing), into a plain
	// MergeTree with the observations' sort key. Made from the first ClickHouse
	// import, then timed in every iteration after it.
	exported := filepath.Join(dir, "exported.csv")
	exportTable := strings.Replace(nativeTable, ".csv_native", ".csv_exported", 1)
	export := func(dsn string) {
		if _, err := os.Stat(exported); err == nil {
			return
		}
		var out, errb bytes.Buffer
		if code := cli.Main(context.Background(), []string{"--config", cfg, "--store", dsn, "--log-level", "error",
			"export", "--format", "csv"}, &out, &errb); code != 0 {
			b.Fatalf("gpuprice export --format csv: exit %d\n%s", code, errb.String())
		}
		plain := regexp.MustCompile(`(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)Z`).ReplaceAll(out.Bytes(), []byte("$1 $2"))
		if err := os.WriteFile(exported, plain, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	exportLoad := func() { clientRun(exported, "INSERT INTO "+db+".csv_exported FORMAT CSVWithNames") }
	for i := 0; b.Loop(); i++ {
		ch("", "DROP DATABASE IF EXISTS "+db)
		ch("", "CREATE DATABASE "+db)
		ch("", nativeTable)
		ch("", exportTable)
		duck := filepath.Join(dir, fmt.Sprintf("import-%d.duckdb", i))
		// Alternate the order, so that neither always runs on a warmer cache.
		steps := []func(){
			func() {
				timeIt("clickhouse-client", func() { ch(file, "INSERT INTO "+db+".csv_native FORMAT CSVWithNames") })
			},
		}
		if stores == "" || strings.Contains(stores, "clickhouse") {
			migrate(chDSN.String())
			steps = append(steps, func() { timeIt("gpuprice-clickhouse", func() { gpuprice(chDSN.String()) }) })
		}
		if _, err := os.Stat(exported); err == nil {
			steps = append(steps, func() { timeIt("clickhouse-client-exported", exportLoad) })
		}
		if (stores == "" && embedded.LibraryPath() != "") || strings.Contains(stores, "chdb") {
			// current ClickHouse embedded (chDB 26.7): this process's engine, a
			// database of its own per round
			chdb := "chdb://" + filepath.Join(dir, "chdb") + fmt.Sprintf("?database=bench_%d", i)
			migrate(chdb)
			steps = append(steps, func() { timeIt("gpuprice-chdb", func() { gpuprice(chdb) }) })
		}
		if stores == "" || strings.Contains(stores, "duckdb") {
			migrate("duckdb://" + duck)
			steps = append(steps, func() { timeIt("gpuprice-duckdb", func() { gpuprice("duckdb://" + duck) }) })
		}
		if i%2 == 1 {
			slices.Reverse(steps)
		}
		for _, s := range steps {
			s()
		}
		if stores == "" || strings.Contains(stores, "clickhouse") {
			export(chDSN.String())
		}
		os.Remove(duck)
		os.Remove(duck + ".wal")
	}
	nat := best["clickhouse-client"].Seconds()
	b.ReportMetric(float64(n), "rows")
	b.ReportMetric(nat, "client_s")
	if d, ok := best["gpuprice-clickhouse"]; ok {
		b.ReportMetric(d.Seconds(), "ch_s")
		b.ReportMetric(nat/d.Seconds(), "ch_rate")
	}
	if ref, ok := best["clickhouse-client-exported"]; ok {
		b.ReportMetric(ref.Seconds(), "client_exported_s")
		if d, ok := best["gpuprice-clickhouse"]; ok {
			b.ReportMetric(ref.Seconds()/d.Seconds(), "ch_vs_exported")
		}
		if d, ok := best["gpuprice-duckdb"]; ok {
			b.ReportMetric(d.Seconds()/ref.Seconds(), "duckdb_vs_exported")
		}
	}
	if d, ok := best["gpuprice-chdb"]; ok {
		b.ReportMetric(d.Seconds(), "chdb_s")
		b.ReportMetric(d.Seconds()/nat, "chdb_vs_client")
	}
	if d, ok := best["gpuprice-duckdb"]; ok {
		b.ReportMetric(d.Seconds(), "duckdb_s")
		b.ReportMetric(d.Seconds()/nat, "duckdb_vs_ch")
	}
}

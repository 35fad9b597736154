package main

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/ingest/parquetio"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// exportInput is a CSV of observations in the `prices --format csv` layout: three
// series of two to three points each, and one row the gates quarantine.
const exportInput = `observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind,effective_at,gpu_name,gpu_memory_gb,currency,price_native,unit,fx_rate,interconnect,source_url
2026-09-01T00:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,us-east-1a,spot,32.7128,4.0891,api,2026-09-01T00:00:00Z,NVIDIA H100 SXM,80,USD,32.7128,hour,1,efa,https://ec2.us-east-1.amazonaws.com
2026-10-15T00:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,us-east-1a,spot,31.9864,3.9983,api,2026-10-15T00:00:00Z,NVIDIA H100 SXM,80,USD,31.9864,hour,1,efa,https://ec2.us-east-1.amazonaws.com
2026-11-01T00:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,us-east-1a,spot,32.5401,4.0675,api,2026-11-01T00:00:00Z,NVIDIA H100 SXM,80,USD,32.5401,hour,1,efa,https://ec2.us-east-1.amazonaws.com
2026-09-01T00:00:00Z,lambda,specialist,gpu_1x_h100_sxm5,H100-SXM-80GB,1,us-east-1,,on_demand,3.29,3.29,scrape,2026-09-01T00:00:00Z,H100 SXM,80,USD,3.29,hour,1,,https://lambda.ai/service/gpu-cloud
2026-11-01T00:00:00Z,lambda,specialist,gpu_1x_h100_sxm5,H100-SXM-80GB,1,us-east-1,,on_demand,2.99,2.99,scrape,2026-11-01T00:00:00Z,H100 SXM,80,USD,2.99,hour,1,,https://lambda.ai/service/gpu-cloud
2026-10-01T00:00:00Z,azure,hyperscaler,Standard_NC24ads_A100_v4,A100-PCIE-80GB,1,eastus,,on_demand,3.673,3.673,api,2026-10-01T00:00:00Z,A100 80GB PCIe,80,USD,3.673,hour,1,,https://prices.azure.com/api/retail/prices
2026-11-01T00:00:00Z,azure,hyperscaler,Standard_NC24ads_A100_v4,A100-PCIE-80GB,1,eastus,,on_demand,3.4,3.4,api,2026-11-01T00:00:00Z,A100 80GB PCIe,80,USD,3.4,hour,1,,https://prices.azure.com/api/retail/prices
2026-11-01T00:00:00Z,vast,marketplace,offer-1,H100-SXM-80GB,1,US,,on_demand,900,900,api,2026-11-01T00:00:00Z,H100 SXM,80,USD,900,hour,1,,https://console.vast.ai/api/v0/bundles/
`

// importedStore imports exportInput into a new store at dsn and returns the config.
func importedStore(t *testing.T, dsn string) string {
	t.Helper()
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	in := filepath.Join(dir, "input.csv")
	if err := os.WriteFile(in, []byte(exportInput), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "--config", cfg, "--store", dsn, "import", "csv", in); code != 0 {
		t.Fatalf("import csv failed:\n%s", out)
	}
	assertBarsCover(t, dsn, "import csv")
	return cfg
}

func exportOut(t *testing.T, cfg, dsn string, args ...string) string {
	t.Helper()
	out, code := run(t, append([]string{"--config", cfg, "--store", dsn, "export"}, args...)...)
	if code != 0 {
		t.Fatalf("export %v failed", args)
	}
	return out
}

func TestParquetColumnsAreTheCSVHeader(t *testing.T) {
	if !slices.Equal(parquetio.Columns, cli.CSVHeader) {
		t.Errorf("parquetio.Columns %v\n!= cli.CSVHeader %v", parquetio.Columns, cli.CSVHeader)
	}
}

func TestExportFormatsAndRoundTrip(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "a.duckdb")
	cfg := importedStore(t, dsn)
	csvOut := exportOut(t, cfg, dsn, "--format", "csv")
	recs := parseCSV(t, csvOut)
	if len(recs) != 8 || !slices.Equal(recs[0], cli.CSVHeader) {
		t.Fatalf("csv export: %d records, header %v\n%s", len(recs), recs[0], csvOut)
	}
	// Ordered by series then effective_at; imported rows keep where they came from.
	if recs[1][1] != "aws" || recs[3][12] != "2026-11-01T00:00:00Z" || recs[4][1] != "azure" || recs[7][1] != "lambda" ||
		recs[1][11] != "import" || !strings.HasPrefix(recs[1][20], "file://") {
		t.Errorf("csv export order or provenance:\n%s", csvOut)
	}

	// Filters and time bounds.
	sub := parseCSV(t, exportOut(t, cfg, dsn, "--format", "csv", "--gpu", "H100-SXM-80GB", "--since", "2026-10-01", "--until", "2026-11-01"))
	if len(sub) != 2 || sub[1][1] != "aws" || sub[1][12] != "2026-10-15T00:00:00Z" {
		t.Errorf("filtered export: %v", sub)
	}
	if none := parseCSV(t, exportOut(t, cfg, dsn, "--since", "1h")); len(none) != 1 {
		t.Errorf("--since 1h: %v", none)
	}

	// JSON Lines: one observation per line with run_id and the import's attrs.
	sc := bufio.NewScanner(strings.NewReader(exportOut(t, cfg, dsn, "--format", "jsonl", "--provider", "azure")))
	n := 0
	for sc.Scan() {
		var o schemas.Observation
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("jsonl line %q: %v", sc.Text(), err)
		}
		if o.Provider != "azure" || o.RunID == "" || o.Attrs["original_source_url"] != "https://prices.azure.com/api/retail/prices" {
			t.Errorf("jsonl row %+v", o)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d jsonl rows, want 2", n)
	}

	// Parquet to a file, read by DuckDB, and imported back into another store: the
	// same rows.
	pq := filepath.Join(t.TempDir(), "prices.parquet")
	if out := exportOut(t, cfg, dsn, "--format", "parquet", "--out", pq, "--parquet-row-group", "3"); out != "" {
		t.Errorf("export --out wrote to stdout: %q", out)
	}
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var rows int
	var sum float64
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*), sum(price_usd_hour) FROM read_parquet('%s') WHERE effective_at >= TIMESTAMPTZ '2026-11-01 00:00:00+00'`, pq)).Scan(&rows, &sum); err != nil {
		t.Fatal(err)
	}
	if rows != 3 || fmt.Sprintf("%.4f", sum) != "38.9301" {
		t.Errorf("duckdb over the export: %d rows, sum %v", rows, sum)
	}
	dsn2 := "duckdb://" + filepath.Join(t.TempDir(), "b.duckdb")
	if out, code := run(t, "--config", cfg, "--store", dsn2, "import", "parquet", pq); code != 0 {
		t.Fatalf("import parquet failed:\n%s", out)
	}
	assertBarsCover(t, dsn2, "import parquet")
	back := parseCSV(t, exportOut(t, cfg, dsn2, "--format", "csv"))
	if a, b := dropColumns(back, 20), dropColumns(recs, 20); a != b {
		t.Errorf("parquet round trip differs (source_url aside):\n%s\n---\n%s", a, b)
	}
	// import csv reads Parquet too (told by its first bytes).
	dsn3 := "duckdb://" + filepath.Join(t.TempDir(), "c.duckdb")
	if out, code := run(t, "--config", cfg, "--store", dsn3, "import", "csv", pq); code != 0 {
		t.Fatalf("import csv of a parquet file failed:\n%s", out)
	}
	if a, b := dropColumns(parseCSV(t, exportOut(t, cfg, dsn3, "--format", "csv")), 20), dropColumns(recs, 20); a != b {
		t.Errorf("import csv of parquet differs (source_url aside):\n%s\n---\n%s", a, b)
	}

	if _, code := run(t, "--config", cfg, "--store", dsn, "export", "--format", "xlsx"); code == 0 {
		t.Error("--format xlsx accepted")
	}
	if _, code := run(t, "--config", cfg, "--store", dsn, "export", "--since", "last week"); code == 0 {
		t.Error("--since 'last week' accepted")
	}
	bad := filepath.Join(t.TempDir(), "missing-dir", "x.csv")
	if _, code := run(t, "--config", cfg, "--store", dsn, "export", "--out", bad); code == 0 {
		t.Error("--out into a missing directory succeeded")
	}
}

// The same rows exported from ClickHouse and from DuckDB are the same bytes, in every
// format that holds no run id, and a Parquet export from ClickHouse imports back.
func TestIntegrationClickHouseExport(t *testing.T) {
	dsn := chtest.FreshDSN(t, "export")
	ch := dsn
	duck := "duckdb://" + filepath.Join(t.TempDir(), "d.duckdb")
	// One input file for both, so source_url is the same.
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	in := filepath.Join(dir, "input.csv")
	os.WriteFile(in, []byte(exportInput), 0o600)
	for _, dsn := range []string{ch, duck} {
		if out, code := run(t, "--config", cfg, "--store", dsn, "import", "csv", in); code != 0 {
			t.Fatalf("import into %s failed:\n%s", dsn, out)
		}
	}
	for _, args := range [][]string{{"--format", "csv"}, {"--format", "csv", "--provider", "aws", "--since", "2026-10-01"}} {
		a, b := exportOut(t, cfg, ch, args...), exportOut(t, cfg, duck, args...)
		if a != b || len(parseCSV(t, a)) < 2 {
			t.Errorf("export %v differs:\n--- clickhouse ---\n%s\n--- duckdb ---\n%s", args, a, b)
		}
	}
	pq := filepath.Join(t.TempDir(), "ch.parquet")
	exportOut(t, cfg, ch, "--format", "parquet", "--out", pq)
	back := "duckdb://" + filepath.Join(t.TempDir(), "back.duckdb")
	if out, code := run(t, "--config", cfg, "--store", back, "import", "parquet", pq); code != 0 {
		t.Fatalf("import parquet failed:\n%s", out)
	}
	if a, b := dropColumns(parseCSV(t, exportOut(t, cfg, back)), 20), dropColumns(parseCSV(t, exportOut(t, cfg, duck)), 20); a != b {
		t.Errorf("parquet from ClickHouse imports as other rows:\n%s\n---\n%s", a, b)
	}
}

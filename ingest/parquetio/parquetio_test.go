package parquetio

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/parquet-go/parquet-go"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func sample(n int) []schemas.Observation {
	out := make([]schemas.Observation, n)
	for i := range out {
		out[i] = schemas.Observation{
			ObservedAt: t0, EffectiveAt: t0.Add(-time.Duration(i) * time.Hour), Provider: "aws", Tier: "hyperscaler",
			SKU: fmt.Sprintf("p5.%dxlarge", i%3), Region: "us-east-1", Zone: "us-east-1a", GPU: "H100-SXM-80GB",
			GPUName: "NVIDIA H100 SXM", GPUCount: 8, GPUMemoryGB: 80, Pricing: schemas.Spot,
			PriceUSDHour: 30 + float64(i)/8, PriceUSDGPUHour: (30 + float64(i)/8) / 8, Currency: "USD",
			PriceNative: 30 + float64(i)/8, Unit: schemas.UnitHour, FXRate: 1, Interconnect: "efa",
			SourceKind: schemas.SourceAPI, SourceURL: "https://ec2.us-east-1.amazonaws.com",
			PriceScope: schemas.ScopeInstance, PriceBasis: schemas.BasisListed,
		}
	}
	return out
}

func writeFile(t testing.TB, rows []schemas.Observation, group int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.parquet")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, group)
	for _, o := range rows {
		if err := w.Write(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWriterRowGroupsAndSchema(t *testing.T) {
	p := writeFile(t, sample(7), 3)
	f, _ := os.Open(p)
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if pf.NumRows() != 7 || len(pf.RowGroups()) != 3 {
		t.Errorf("%d rows in %d row groups; want 7 in 3", pf.NumRows(), len(pf.RowGroups()))
	}
	var names []string
	for _, c := range pf.Schema().Columns() {
		names = append(names, c[0])
	}
	if strings.Join(names, ",") != strings.Join(Columns, ",") {
		t.Errorf("columns %v, want %v", names, Columns)
	}
	obs, _ := pf.Schema().Lookup("observed_at")
	if lt := obs.Node.Type().LogicalType(); lt == nil || !strings.Contains(lt.String(), "TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)") {
		t.Errorf("observed_at type %v", lt)
	}
}

func TestToCSVRoundTrip(t *testing.T) {
	rows := sample(5)
	p := writeFile(t, rows, 2)
	f, _ := os.Open(p)
	defer f.Close()
	st, _ := f.Stat()
	var buf bytes.Buffer
	if err := ToCSV(f, st.Size(), &buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 || strings.Join(recs[0], ",") != strings.Join(Columns, ",") {
		t.Fatalf("csv: %v", recs)
	}
	want := []string{"2026-11-01T12:00:00Z", "aws", "hyperscaler", "p5.1xlarge", "H100-SXM-80GB", "8", "us-east-1", "us-east-1a",
		"spot", "30.125", "3.765625", "api", "2026-11-01T11:00:00Z", "NVIDIA H100 SXM", "80", "USD", "30.125", "hour", "1", "efa",
		"https://ec2.us-east-1.amazonaws.com", "instance", "listed", "live"}
	if strings.Join(recs[2], "|") != strings.Join(want, "|") {
		t.Errorf("row 2\n got %v\nwant %v", recs[2], want)
	}
}

// The import path: a Parquet file through OpenCSV into ingest.CSVSource gives back the
// rows written.
func TestOpenCSVFeedsCSVSource(t *testing.T) {
	rows := sample(4)
	p := writeFile(t, rows, 0)
	var got []schemas.Observation
	src := &ingest.CSVSource{Open: func() (io.ReadCloser, error) { return OpenCSV(p) }, Origin: "file://" + p,
		Known: func(g string) bool { return g == "H100-SXM-80GB" }}
	err := src.Collect(context.Background(), emitFunc(func(o schemas.Observation) { got = append(got, o) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows read back, want %d", len(got), len(rows))
	}
	for i, o := range got {
		w := rows[i]
		if !o.ObservedAt.Equal(w.ObservedAt) || !o.EffectiveAt.Equal(w.EffectiveAt) || o.SKU != w.SKU || o.GPU != w.GPU ||
			o.PriceNative != w.PriceNative || o.Zone != w.Zone || o.Interconnect != w.Interconnect ||
			o.Attrs["original_source_url"] != w.SourceURL || o.SourceURL != "file://"+p {
			t.Errorf("row %d: %+v\nwant %+v", i, o, w)
		}
	}

	// A CSV file is read as it is.
	c := filepath.Join(t.TempDir(), "x.parquet") // the name does not matter: the bytes do
	os.WriteFile(c, []byte("observed_at,provider\n"), 0o600)
	rc, err := OpenCSV(c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "observed_at,provider\n" {
		t.Errorf("csv file read as %q", b)
	}
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	os.WriteFile(bad, []byte("PAR1 but not parquet"), 0o600)
	rc, _ = OpenCSV(bad)
	if _, err := io.ReadAll(rc); err == nil {
		t.Error("truncated parquet read without error")
	}
}

type emitFunc func(o schemas.Observation)

func (f emitFunc) Emit(o schemas.Observation) { f(o) }

func openDuckDB(t *testing.T) *sql.DB {
	t.Helper()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

// DuckDB reads what the writer writes, with the intended types.
func TestDuckDBReadsWrittenFile(t *testing.T) {
	p := writeFile(t, sample(100), 30)
	db := openDuckDB(t)
	var n int
	var sum float64
	var maxAt time.Time
	err := db.QueryRow(fmt.Sprintf(`SELECT count(*), sum(price_usd_hour), max(effective_at) FROM read_parquet('%s')`, p)).Scan(&n, &sum, &maxAt)
	if err != nil {
		t.Fatal(err)
	}
	want := 0.0
	for _, o := range sample(100) {
		want += o.PriceUSDHour
	}
	if n != 100 || sum != want || !maxAt.Equal(t0) {
		t.Errorf("duckdb: %d rows, sum %v (want %v), max effective_at %v", n, sum, want, maxAt)
	}
	var types string
	if err := db.QueryRow(fmt.Sprintf(`SELECT string_agg(column_type, ',' ORDER BY column_name) FROM (DESCRIBE SELECT observed_at, gpu_count, sku FROM read_parquet('%s'))`, p)).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if types != "DOUBLE,TIMESTAMP WITH TIME ZONE,VARCHAR" {
		t.Errorf("duckdb types %q", types)
	}
}

// A file DuckDB writes, with its own types (DECIMAL, DATE, TIMESTAMPTZ, BIGINT), reads
// as CSV the importer understands.
func TestToCSVReadsDuckDBFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "duck.parquet")
	db := openDuckDB(t)
	_, err := db.Exec(fmt.Sprintf(`COPY (SELECT TIMESTAMPTZ '2026-11-01 12:00:00+00' AS observed_at, DATE '2026-10-31' AS effective_at,
		'lambda' AS provider, 'gpu_1x_h100_sxm5' AS sku, 1::BIGINT AS gpu_count, 'on_demand' AS pricing,
		2.49::DECIMAL(10,4) AS price_usd_hour, NULL::VARCHAR AS zone, true AS extra) TO '%s' (FORMAT parquet)`, p))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(p)
	defer f.Close()
	st, _ := f.Stat()
	var buf bytes.Buffer
	if err := ToCSV(f, st.Size(), &buf); err != nil {
		t.Fatal(err)
	}
	want := "observed_at,effective_at,provider,sku,gpu_count,pricing,price_usd_hour,zone,extra\n" +
		"2026-11-01T12:00:00Z,2026-10-31,lambda,gpu_1x_h100_sxm5,1,on_demand,2.4900,,true\n"
	if buf.String() != want {
		t.Errorf("csv\n got %q\nwant %q", buf.String(), want)
	}
}

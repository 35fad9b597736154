package export

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/parquetio"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// gen is an Eacher that makes n rows on the fly (never holding them), sampling the
// heap every sampleEvery rows when sampleEvery > 0.
type gen struct {
	n           int
	sampleEvery int
	peak        uint64
	filters     []store.Filter
	fail        error
}

func (g *gen) row(i int) schemas.Observation {
	return schemas.Observation{
		ObservedAt: t0, EffectiveAt: t0.Add(-time.Duration(i) * time.Minute), Provider: "aws", Tier: "hyperscaler",
		SKU: "p5.48xlarge", Region: "us-east-1", Zone: fmt.Sprintf("us-east-1%c", 'a'+i%6), GPU: "H100-SXM-80GB",
		GPUName: "NVIDIA H100 SXM", GPUCount: 8, GPUMemoryGB: 80, Pricing: schemas.Spot, PriceUSDHour: 30 + float64(i%997)/100,
		PriceUSDGPUHour: (30 + float64(i%997)/100) / 8, Currency: "USD", PriceNative: 30 + float64(i%997)/100,
		Unit: schemas.UnitHour, FXRate: 1, Interconnect: "efa", SourceKind: schemas.SourceAPI,
		SourceURL: "https://ec2.us-east-1.amazonaws.com", RunID: "20261101T120000Z-0a1b2c3d",
		Attrs: map[string]string{"product_description": "Linux/UNIX"},
	}
}

func (g *gen) Each(ctx context.Context, f store.Filter, fn func(schemas.Observation) error) error {
	g.filters = append(g.filters, f)
	var ms runtime.MemStats
	for i := range g.n {
		if g.fail != nil && i == g.n/2 {
			return g.fail
		}
		if err := fn(g.row(i)); err != nil {
			return err
		}
		if g.sampleEvery > 0 && i%g.sampleEvery == 0 {
			runtime.ReadMemStats(&ms)
			g.peak = max(g.peak, ms.HeapAlloc)
		}
	}
	return nil
}

func TestExportFormats(t *testing.T) {
	f := store.Filter{Provider: "aws", Since: t0.Add(-time.Hour)}
	for _, format := range Formats {
		g := &gen{n: 25}
		var buf bytes.Buffer
		n, err := Export(context.Background(), g, f, format, &buf, Options{RowGroupRows: 10})
		if err != nil || n != 25 {
			t.Fatalf("%s: %d rows, %v", format, n, err)
		}
		if len(g.filters) != 1 || g.filters[0] != f {
			t.Errorf("%s: filters %v", format, g.filters)
		}
		var recs [][]string
		switch format {
		case CSV:
			recs, err = csv.NewReader(&buf).ReadAll()
		case Parquet:
			var out bytes.Buffer
			if err = parquetio.ToCSV(bytes.NewReader(buf.Bytes()), int64(buf.Len()), &out); err == nil {
				recs, err = csv.NewReader(&out).ReadAll()
			}
		case JSONL:
			sc := bufio.NewScanner(&buf)
			recs = append(recs, parquetio.Columns)
			for sc.Scan() {
				var o schemas.Observation
				if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
					t.Fatal(err)
				}
				if o.RunID == "" || o.Attrs["product_description"] != "Linux/UNIX" {
					t.Errorf("jsonl row lacks run_id or attrs: %s", sc.Text())
				}
				recs = append(recs, Record(o))
			}
		}
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if len(recs) != 26 || strings.Join(recs[0], ",") != strings.Join(parquetio.Columns, ",") {
			t.Fatalf("%s: %d records, header %v", format, len(recs), recs[0])
		}
		for i, rec := range recs[1:] {
			if want := Record(g.row(i)); strings.Join(rec, "|") != strings.Join(want, "|") {
				t.Fatalf("%s row %d:\n got %v\nwant %v", format, i, rec, want)
			}
		}
	}
}

func TestExportErrors(t *testing.T) {
	if _, err := Export(context.Background(), &gen{n: 1}, store.Filter{}, "xlsx", io.Discard, Options{}); err == nil {
		t.Error("unknown format accepted")
	}
	boom := errors.New("store gone")
	if _, err := Export(context.Background(), &gen{n: 10, fail: boom}, store.Filter{}, CSV, io.Discard, Options{}); !errors.Is(err, boom) {
		t.Errorf("store error = %v", err)
	}
}

// peakHeap exports n rows and returns the peak heap seen while rows streamed.
func peakHeap(format string, n int) uint64 {
	runtime.GC()
	g := &gen{n: n, sampleEvery: 2048}
	if _, err := Export(context.Background(), g, store.Filter{}, format, io.Discard, Options{RowGroupRows: 8192}); err != nil {
		panic(err)
	}
	return g.peak
}

// The heap of an export does not grow with its size: ten times the rows stay within a
// few MiB of the smaller export's peak (holding 400k rows would take well over 100 MiB).
func TestExportMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("exports 440k rows")
	}
	for _, format := range Formats {
		peakHeap(format, 40_000) // warm-up: pools and buffers the first export allocates
		small, large := peakHeap(format, 40_000), peakHeap(format, 400_000)
		t.Logf("%s: peak heap %.1f MiB for 40k rows, %.1f MiB for 400k", format, float64(small)/(1<<20), float64(large)/(1<<20))
		if large > small+16<<20 {
			t.Errorf("%s: peak heap grew from %d to %d bytes with 10x the rows", format, small, large)
		}
	}
}

// BenchmarkExport measures one export of N rows per op: allocs/row and B/row should
// be flat in N, and peak-heap-MiB should not grow with N.
func BenchmarkExport(b *testing.B) {
	for _, format := range Formats {
		for _, n := range []int{10_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/rows=%d", format, n), func(b *testing.B) {
				var peak uint64
				var ms0, ms1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms0)
				for b.Loop() {
					g := &gen{n: n, sampleEvery: 4096}
					if _, err := Export(context.Background(), g, store.Filter{}, format, io.Discard, Options{}); err != nil {
						b.Fatal(err)
					}
					peak = max(peak, g.peak)
				}
				runtime.ReadMemStats(&ms1)
				rows := float64(b.N) * float64(n)
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/rows, "allocs/row")
				b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/rows, "B/row")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
	}
}

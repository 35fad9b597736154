// Package parquetio writes observations as Parquet with the columns of `gpuprice
// prices --format csv` (Columns), and reads Parquet files back as that CSV so that
// `gpuprice import csv` takes both through one reader (ingest.CSVSource): the same
// column names, normalisation, gates and quarantine.
//
// Types: observed_at and effective_at are TIMESTAMP(isAdjustedToUTC, microseconds);
// gpu_count, gpu_memory_gb and the prices are DOUBLE; the rest are UTF-8 strings,
// dictionary-encoded. Files are Snappy-compressed, written a row group at a time
// (DefaultRowGroupRows rows), so writing holds at most one row group in memory.
// Reading accepts any flat Parquet file whose column names are CSV columns (others
// are ignored): strings, booleans, integers, floats, decimals, dates and timestamps
// are turned into the CSV's text.
package parquetio

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/gpuprice/gpuprice/schemas"
)

// Columns are the columns of a written file, in order: the header of `gpuprice prices
// --format csv`.
var Columns = []string{
	"observed_at", "provider", "tier", "sku", "gpu", "gpu_count", "region", "zone", "pricing",
	"price_usd_hour", "price_usd_gpu_hour", "source_kind",
	"effective_at", "gpu_name", "gpu_memory_gb", "currency", "price_native", "unit", "fx_rate",
	"interconnect", "source_url", "price_scope", "price_basis", "origin",
}

// Row is one written row.
type Row struct {
	ObservedAt      time.Time `parquet:"observed_at,timestamp(microsecond)"`
	Provider        string    `parquet:"provider,dict"`
	Tier            string    `parquet:"tier,dict"`
	SKU             string    `parquet:"sku,dict"`
	GPU             string    `parquet:"gpu,dict"`
	GPUCount        float64   `parquet:"gpu_count"`
	Region          string    `parquet:"region,dict"`
	Zone            string    `parquet:"zone,dict"`
	Pricing         string    `parquet:"pricing,dict"`
	PriceUSDHour    float64   `parquet:"price_usd_hour"`
	PriceUSDGPUHour float64   `parquet:"price_usd_gpu_hour"`
	SourceKind      string    `parquet:"source_kind,dict"`
	EffectiveAt     time.Time `parquet:"effective_at,timestamp(microsecond)"`
	GPUName         string    `parquet:"gpu_name,dict"`
	GPUMemoryGB     float64   `parquet:"gpu_memory_gb"`
	Currency        string    `parquet:"currency,dict"`
	PriceNative     float64   `parquet:"price_native"`
	Unit            string    `parquet:"unit,dict"`
	FXRate          float64   `parquet:"fx_rate"`
	Interconnect    string    `parquet:"interconnect,dict"`
	SourceURL       string    `parquet:"source_url,dict"`
	PriceScope      string    `parquet:"price_scope,dict"`
	PriceBasis      string    `parquet:"price_basis,dict"`
	Origin          string    `parquet:"origin,dict"` // "live", or "recorded" (schemas.OriginRecorded)
}

// RowOf returns the row of an observation.
func RowOf(o schemas.Observation) Row {
	return Row{
		ObservedAt: o.ObservedAt.UTC(), Provider: o.Provider, Tier: o.Tier, SKU: o.SKU, GPU: o.GPU, GPUCount: o.GPUCount,
		Region: o.Region, Zone: o.Zone, Pricing: o.Pricing, PriceUSDHour: o.PriceUSDHour, PriceUSDGPUHour: o.PriceUSDGPUHour,
		SourceKind: o.SourceKind, EffectiveAt: o.EffectiveAt.UTC(), GPUName: o.GPUName, GPUMemoryGB: o.GPUMemoryGB,
		Currency: o.Currency, PriceNative: o.PriceNative, Unit: o.Unit, FXRate: o.FXRate, Interconnect: o.Interconnect,
		SourceURL: o.SourceURL, PriceScope: o.PriceScope, PriceBasis: o.PriceBasis, Origin: o.Origin(),
	}
}

// DefaultRowGroupRows is the number of rows per row group.
const DefaultRowGroupRows = 64 << 10

// writeChunk is how many rows are handed to the Parquet writer at once.
const writeChunk = 1024

// Writer writes observations to a Parquet stream. Close must be called to write the
// footer; the output is a valid file only after it.
type Writer struct {
	pw       *parquet.GenericWriter[Row]
	buf      []Row
	groupMax int64
	inGroup  int64
	rows     int64
}

// NewWriter starts a Parquet stream on w with at most rowGroupRows rows per row group
// (0: DefaultRowGroupRows).
func NewWriter(w io.Writer, rowGroupRows int64) *Writer {
	if rowGroupRows <= 0 {
		rowGroupRows = DefaultRowGroupRows
	}
	pw := parquet.NewGenericWriter[Row](w,
		parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(rowGroupRows),
		parquet.CreatedBy("gpuprice", "", ""),
	)
	return &Writer{pw: pw, buf: make([]Row, 0, writeChunk), groupMax: rowGroupRows}
}

// Write adds one observation.
func (w *Writer) Write(o schemas.Observation) error {
	w.buf = append(w.buf, RowOf(o))
	if int64(len(w.buf)) >= min(writeChunk, w.groupMax-w.inGroup) {
		return w.flush()
	}
	return nil
}

func (w *Writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.pw.Write(w.buf); err != nil {
		return fmt.Errorf("parquetio: writing rows: %w", err)
	}
	w.inGroup += int64(len(w.buf))
	w.rows += int64(len(w.buf))
	clear(w.buf)
	w.buf = w.buf[:0]
	if w.inGroup >= w.groupMax {
		if err := w.pw.Flush(); err != nil {
			return fmt.Errorf("parquetio: writing row group: %w", err)
		}
		w.inGroup = 0
	}
	return nil
}

// Rows returns the number of rows written so far.
func (w *Writer) Rows() int64 { return w.rows + int64(len(w.buf)) }

// Close writes the rows left and the footer. It does not close the underlying writer.
func (w *Writer) Close() error {
	if err := w.flush(); err != nil {
		return err
	}
	if err := w.pw.Close(); err != nil {
		return fmt.Errorf("parquetio: closing: %w", err)
	}
	return nil
}

// Magic is the first (and last) four bytes of every Parquet file.
var Magic = []byte("PAR1")

// IsParquet reports whether r starts with the Parquet magic.
func IsParquet(r io.ReaderAt) bool {
	b := make([]byte, len(Magic))
	n, _ := r.ReadAt(b, 0)
	return n == len(Magic) && bytes.Equal(b, Magic)
}

// column is one leaf column read as CSV text.
type column struct {
	name   string
	format func(parquet.Value) (string, error)
}

// ToCSV writes the rows of the Parquet file r (size bytes) to w as CSV: a header of
// the file's top-level leaf columns, then one record per row. Rows are read in
// batches, so memory does not grow with the file.
func ToCSV(r io.ReaderAt, size int64, w io.Writer) error {
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return fmt.Errorf("parquetio: %w", err)
	}
	paths := f.Schema().Columns()
	cols := make([]column, len(paths))
	header := make([]string, len(paths))
	for i, p := range paths {
		leaf, ok := f.Schema().Lookup(p...)
		if !ok {
			return fmt.Errorf("parquetio: column %s not in the schema", strings.Join(p, "."))
		}
		if leaf.MaxRepetitionLevel > 0 || len(p) != 1 {
			return fmt.Errorf(
				"parquetio: column %s is nested or repeated: only flat files can be read",
				strings.Join(p, "."),
			)
		}
		cols[i] = column{name: p[0], format: formatter(leaf.Node)}
		header[i] = p[0]
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("parquetio: %w", err)
	}
	rd := parquet.NewReader(f)
	defer rd.Close()
	rows := make([]parquet.Row, 256)
	rec := make([]string, len(cols))
	line := 0
	for {
		n, rerr := rd.ReadRows(rows)
		for _, row := range rows[:n] {
			line++
			clear(rec)
			for _, v := range row {
				c := v.Column()
				if c < 0 || c >= len(cols) || v.IsNull() {
					continue
				}
				s, err := cols[c].format(v)
				if err != nil {
					return fmt.Errorf("parquetio: row %d column %s: %w", line, cols[c].name, err)
				}
				rec[c] = s
			}
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("parquetio: %w", err)
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("parquetio: reading rows: %w", rerr)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("parquetio: %w", err)
	}
	return nil
}

// formatter returns how a leaf column's values read as text.
func formatter(n parquet.Node) func(parquet.Value) (string, error) {
	var lt format.LogicalTypeValue
	if l := n.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	switch t := lt.(type) {
	case *format.TimestampType:
		var at func(int64) time.Time = time.UnixMicro
		switch t.Unit.Value.(type) {
		case *format.MilliSeconds:
			at = time.UnixMilli
		case *format.NanoSeconds:
			at = func(n int64) time.Time { return time.Unix(0, n) }
		}
		return func(v parquet.Value) (string, error) {
			return at(v.Int64()).UTC().Format(time.RFC3339Nano), nil
		}
	case *format.DateType:
		return func(v parquet.Value) (string, error) {
			return time.Unix(int64(v.Int32())*86400, 0).UTC().Format("2006-01-02"), nil
		}
	case *format.DecimalType:
		scale := int(t.Scale)
		return func(v parquet.Value) (string, error) {
			var u *big.Int
			switch v.Kind() {
			case parquet.Int32:
				u = big.NewInt(int64(v.Int32()))
			case parquet.Int64:
				u = big.NewInt(v.Int64())
			default:
				u = new(big.Int).SetBytes(v.ByteArray())
				if b := v.ByteArray(); len(b) > 0 && b[0]&0x80 != 0 { // two's complement
					u.Sub(u, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
				}
			}
			return new(big.Rat).SetFrac(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale),
				nil
		}
	}
	if n.Type().Kind() == parquet.Int96 {
		// Legacy timestamps (Spark, Impala): nanoseconds of the day and a Julian day.
		return func(v parquet.Value) (string, error) {
			i := v.Int96()
			nanos := int64(i[1])<<32 | int64(i[0])
			day := int64(i[2]) - 2440588
			return time.Unix(day*86400, nanos).UTC().Format(time.RFC3339Nano), nil
		}
	}
	return func(v parquet.Value) (string, error) {
		switch v.Kind() {
		case parquet.Boolean:
			return strconv.FormatBool(v.Boolean()), nil
		case parquet.Int32:
			return strconv.FormatInt(int64(v.Int32()), 10), nil
		case parquet.Int64:
			return strconv.FormatInt(v.Int64(), 10), nil
		case parquet.Float:
			return formatFloat(float64(v.Float()), 32)
		case parquet.Double:
			return formatFloat(v.Double(), 64)
		case parquet.ByteArray, parquet.FixedLenByteArray:
			return string(v.ByteArray()), nil
		}
		return "", fmt.Errorf("values of kind %s cannot be read", v.Kind())
	}
}

func formatFloat(f float64, bits int) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("%v is not a number", f)
	}
	return strconv.FormatFloat(f, 'f', -1, bits), nil
}

// OpenCSV opens path for ingest.CSVSource: a Parquet file (found by its magic bytes,
// whatever its name) is converted to CSV on the fly, any other file is returned as
// it is.
func OpenCSV(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if !IsParquet(f) {
		return f, nil
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		err := ToCSV(f, st.Size(), pw)
		f.Close()
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// Package export streams stored observations to a file: CSV with the header of
// `gpuprice prices --format csv` (which `import csv` reads back), JSON Lines (one
// schemas.Observation per line, with run_id and attrs), or Parquet with the CSV's
// columns (ingest/parquetio). Rows come from the store's Each one at a time and go
// out through a bounded buffer, so the memory of an export does not grow with its
// size (Parquet holds at most one row group).
package export

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/ingest/parquetio"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/store"
)

// Formats.
const (
	CSV     = "csv"
	JSONL   = "jsonl"
	Parquet = "parquet"
)

// Formats lists the formats, for help texts.
var Formats = []string{CSV, JSONL, Parquet}

// Eacher is the part of a store an export reads.
type Eacher interface {
	Each(ctx context.Context, f store.Filter, fn func(schemas.Observation) error) error
}

// Encoder writes observations in one format. Close writes what is buffered (and the
// Parquet footer); it does not close the underlying writer.
type Encoder interface {
	Write(o schemas.Observation) error
	Close() error
}

// Options tune the encoders.
type Options struct {
	// RowGroupRows bounds the rows of a Parquet row group (0: parquetio's default).
	RowGroupRows int64
	// RawCSV writes CSV cells as they are; by default a cell a spreadsheet would run
	// as a formula (= + - @ first) is prefixed with ' (textsafe.CSV), which `import
	// csv` takes off again.
	RawCSV bool
}

// NewEncoder returns the encoder of a format writing to w.
func NewEncoder(format string, w io.Writer, o Options) (Encoder, error) {
	switch format {
	case CSV:
		e := &csvEncoder{w: csv.NewWriter(w), rec: make([]string, len(parquetio.Columns)), raw: o.RawCSV}
		if err := e.w.Write(parquetio.Columns); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		return e, nil
	case JSONL:
		bw := bufio.NewWriterSize(w, 64<<10)
		return &jsonlEncoder{bw: bw, enc: json.NewEncoder(bw)}, nil
	case Parquet:
		return parquetio.NewWriter(w, o.RowGroupRows), nil
	}
	return nil, fmt.Errorf("export: format %q is not csv, jsonl or parquet", format)
}

// Export streams every observation matching f from src to w in format, ordered and
// deduplicated as the store's Each gives them, and returns how many it wrote.
func Export(ctx context.Context, src Eacher, f store.Filter, format string, w io.Writer, o Options) (int64, error) {
	enc, err := NewEncoder(format, w, o)
	if err != nil {
		return 0, err
	}
	var n int64
	err = src.Each(ctx, f, func(obs schemas.Observation) error {
		n++
		return enc.Write(obs)
	})
	if err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	if err := enc.Close(); err != nil {
		return n, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

type csvEncoder struct {
	w   *csv.Writer
	rec []string
	raw bool
}

func fnum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Record returns the CSV record of an observation, in the order of parquetio.Columns
// (the format of `gpuprice prices --format csv`).
func Record(o schemas.Observation) []string {
	return []string{
		o.ObservedAt.UTC().
			Format(time.RFC3339),
		o.Provider, o.Tier, o.SKU, o.GPU, fnum(o.GPUCount), o.Region, o.Zone, o.Pricing,
		fnum(o.PriceUSDHour), fnum(o.PriceUSDGPUHour), o.SourceKind,
		o.EffectiveAt.UTC().
			Format(time.RFC3339),
		o.GPUName, fnum(o.GPUMemoryGB), o.Currency, fnum(o.PriceNative), o.Unit, fnum(o.FXRate),
		o.Interconnect, o.SourceURL, o.PriceScope, o.PriceBasis, o.Origin(),
	}
}

func (e *csvEncoder) Write(o schemas.Observation) error {
	rec := Record(o)
	if !e.raw {
		rec = textsafe.CSVRecord(rec)
	}
	if err := e.w.Write(rec); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	return nil
}

func (e *csvEncoder) Close() error {
	e.w.Flush()
	if err := e.w.Error(); err != nil {
		return fmt.Errorf("csv: %w", err)
	}
	return nil
}

type jsonlEncoder struct {
	bw  *bufio.Writer
	enc *json.Encoder
}

func (e *jsonlEncoder) Write(o schemas.Observation) error {
	o.ObservedAt, o.EffectiveAt = o.ObservedAt.UTC(), o.EffectiveAt.UTC()
	if err := e.enc.Encode(o); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	return nil
}

func (e *jsonlEncoder) Close() error {
	if err := e.bw.Flush(); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	return nil
}

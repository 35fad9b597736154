// Package report holds what the command line and the HTTP server share about a
// result: how it is computed from the store and how it is written as a table, CSV,
// Markdown or JSON. A CLI command and its /api/v1 endpoint call the same function
// with the same parameters, so they give the same numbers; when the embedded store
// is held by a running server, the CLI decodes the endpoint's JSON into the same
// types and writes it the way it would have.
package query

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// CSVHeader is the column list of `prices --format csv`, which `import csv` reads back.
// The first twelve columns are the contract; the rest keep what re-import needs.
var CSVHeader = []string{
	"observed_at", "provider", "tier", "sku", "gpu", "gpu_count", "region", "zone", "pricing",
	"price_usd_hour", "price_usd_gpu_hour", "source_kind",
	"effective_at", "gpu_name", "gpu_memory_gb", "currency", "price_native", "unit", "fx_rate",
	"interconnect", "source_url", "price_scope", "price_basis", "origin",
}

// Num writes a number as briefly as it round-trips.
func Num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// CSVRecord is an observation's CSV row, in CSVHeader's order.
func CSVRecord(o schemas.Observation) []string {
	return []string{
		o.ObservedAt.UTC().Format(time.RFC3339), o.Provider, o.Tier, o.SKU, o.GPU, Num(o.GPUCount), o.Region, o.Zone,
		o.Pricing,
		Num(o.PriceUSDHour), Num(o.PriceUSDGPUHour), o.SourceKind,
		o.EffectiveAt.UTC().Format(time.RFC3339), o.GPUName, Num(o.GPUMemoryGB), o.Currency, Num(o.PriceNative), o.Unit,
		Num(o.FXRate),
		o.Interconnect, o.SourceURL, o.PriceScope, o.PriceBasis, o.Origin(),
	}
}

// PricesColumns are the columns of `prices` as a table or Markdown: CSV names (a
// table upper-cases them, as every table command does), origin last ("recorded"
// for a row of a recorded example, never today's price).
var PricesColumns = []string{"gpu", "price_usd_gpu_hour", "price_usd_hour", "price_scope", "price_basis", "provider",
	"tier",
	"pricing", "sku", "gpu_count", "interconnect", "region", "zone", "observed_at", "origin"}

// pricesCells are an observation's cells under PricesColumns.
func pricesCells(o schemas.Observation) []string {
	return []string{o.GPU, fmt.Sprintf("%.4f", o.PriceUSDGPUHour), fmt.Sprintf("%.4f", o.PriceUSDHour),
		schemas.ScopeOf(o.PriceScope), schemas.BasisOf(o.PriceBasis), o.Provider, o.Tier, o.Pricing, o.SKU, Num(o.GPUCount),
		o.Interconnect, o.Region, o.Zone, o.ObservedAt.UTC().Format(time.RFC3339), o.Origin()}
}

// CountRecorded is how many rows come from a recorded example (schemas.OriginRecorded).
func CountRecorded(rows []schemas.Observation) int {
	n := 0
	for _, o := range rows {
		if o.Recorded() {
			n++
		}
	}
	return n
}

// WriteObservations writes rows as csv (CSVHeader), json (an array, never null; a
// recorded row's attrs say origin "recorded"), or a table or Markdown (PricesColumns).
func WriteObservations(w io.Writer, format string, rows []schemas.Observation) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(CSVHeader); err != nil {
			return err
		}
		for _, o := range rows {
			if err := cw.Write(csvCells(w, CSVRecord(o))); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	case "json":
		if rows == nil {
			rows = []schemas.Observation{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	case "markdown", "table":
		cells := make([][]string, 0, len(rows))
		for _, o := range rows {
			cells = append(cells, pricesCells(o))
		}
		if format == "table" && len(rows) == 0 {
			return Write(w, "table", PricesColumns, nil, nil,
				"(no prices match: run `gpuprice collect` first, or loosen the filters)")
		}
		return Write(w, format, PricesColumns, cells, nil)
	default:
		return fmt.Errorf("--format %q: use table, json, csv or markdown", format)
	}
}

// PricesTable is the observations as CSV rows (CSVHeader).
func PricesTable(rows []schemas.Observation) ([]string, [][]string) {
	out := make([][]string, len(rows))
	for i, o := range rows {
		out[i] = CSVRecord(o)
	}
	return CSVHeader, out
}

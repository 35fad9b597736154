// Package report holds what the command line and the HTTP server share about a
// result: how it is computed from the store and how it is written as a table, CSV,
// Markdown or JSON. A CLI command and its /api/v1 endpoint call the same function
// with the same parameters, so they give the same numbers; when the embedded store
// is held by a running server, the CLI decodes the endpoint's JSON into the same
// types and writes it the way it would have.
package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// CSVHeader is the column list of `prices --format csv`, which `import csv` reads back.
// The first twelve columns are the contract; the rest keep what re-import needs.
var CSVHeader = []string{
	"observed_at", "provider", "tier", "sku", "gpu", "gpu_count", "region", "zone", "pricing",
	"price_usd_hour", "price_usd_gpu_hour", "source_kind",
	"effective_at", "gpu_name", "gpu_memory_gb", "currency", "price_native", "unit", "fx_rate",
	"interconnect", "source_url", "price_scope", "price_basis",
}

// Num writes a number as briefly as it round-trips.
func Num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// CSVRecord is an observation's CSV row, in CSVHeader's order.
func CSVRecord(o schemas.Observation) []string {
	return []string{
		o.ObservedAt.UTC().Format(time.RFC3339), o.Provider, o.Tier, o.SKU, o.GPU, Num(o.GPUCount), o.Region, o.Zone, o.Pricing,
		Num(o.PriceUSDHour), Num(o.PriceUSDGPUHour), o.SourceKind,
		o.EffectiveAt.UTC().Format(time.RFC3339), o.GPUName, Num(o.GPUMemoryGB), o.Currency, Num(o.PriceNative), o.Unit, Num(o.FXRate),
		o.Interconnect, o.SourceURL, o.PriceScope, o.PriceBasis,
	}
}

// WriteObservations writes rows as csv (CSVHeader), json (an array, never null) or a
// table.
func WriteObservations(w io.Writer, format string, rows []schemas.Observation) error {
	switch format {
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(CSVHeader); err != nil {
			return err
		}
		for _, o := range rows {
			if err := cw.Write(CSVRecord(o)); err != nil {
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
	case "markdown": // the table's columns, named as in the CSV
		header := []string{"gpu", "price_usd_gpu_hour", "price_usd_hour", "price_scope", "price_basis", "provider", "tier",
			"pricing", "sku", "gpu_count", "region", "zone", "observed_at"}
		var cells [][]string
		for _, o := range rows {
			cells = append(cells, []string{o.GPU, fmt.Sprintf("%.4f", o.PriceUSDGPUHour), fmt.Sprintf("%.4f", o.PriceUSDHour),
				schemas.ScopeOf(o.PriceScope), schemas.BasisOf(o.PriceBasis), o.Provider, o.Tier, o.Pricing, o.SKU, Num(o.GPUCount),
				o.Region, o.Zone, o.ObservedAt.UTC().Format(time.RFC3339)})
		}
		return Write(w, "markdown", header, cells, nil)
	case "table":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "GPU\t$/GPU-H\t$/H\tSCOPE\tBASIS\tPROVIDER\tTIER\tPRICING\tSKU\tGPUS\tREGION\tZONE\tOBSERVED")
		for _, o := range rows {
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.GPU, o.PriceUSDGPUHour, o.PriceUSDHour,
				schemas.ScopeOf(o.PriceScope), schemas.BasisOf(o.PriceBasis), o.Provider, o.Tier, o.Pricing, o.SKU, Num(o.GPUCount), o.Region, o.Zone, o.ObservedAt.UTC().Format(time.RFC3339))
		}
		if len(rows) == 0 {
			fmt.Fprintln(tw, "(no prices match: run `gpuprice collect` first, or loosen the filters)")
		}
		return tw.Flush()
	default:
		return fmt.Errorf("--format %q: use table, json or csv", format)
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

// Package opencost writes OpenCost's custom pricing CSV (its CSV provider:
// USE_CSV_PROVIDER=true, CSV_PATH) for GPU nodes from the latest market prices, so
// that a Kubernetes cluster's cost model prices the GPU instance types it runs at
// what the market asks. The format is OpenCost's configs/pricing_schema.csv, read
// by pkg/cloud/provider/csvprovider.go: one row per asset with EndTimestamp,
// InstanceID, Region, AssetClass, InstanceIDField, InstanceType,
// MarketPriceHourly and Version.
package opencost

import (
	"encoding/csv"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// Header is the CSV's header, as OpenCost's CSV provider decodes it.
var Header = []string{"EndTimestamp", "InstanceID", "Region", "AssetClass", "InstanceIDField", "InstanceType",
	"MarketPriceHourly", "Version"}

// InstanceTypeLabel is the node field the rows name (InstanceIDField): the
// well-known label of a node's instance type, which every managed Kubernetes sets
// to the provider's instance type.
const InstanceTypeLabel = "metadata.labels.node.kubernetes.io/instance-type"

// TimeLayout is how EndTimestamp is written (as OpenCost's example writes it).
const TimeLayout = "2006-01-02 15:04:05 UTC"

// Row is one asset's price.
type Row struct {
	EndTimestamp time.Time // the newest observation it summarises
	InstanceType string    // the provider's SKU (instance type)
	Region       string    // "" for the row every region without a row of its own falls back to
	// PriceHourly is the whole node's $ per hour (its GPUs and the rest): the
	// median of the series summarised.
	PriceHourly float64
	Series      int // how many series (zones, providers) the price summarises
}

// Rows turns the latest prices of GPU instances into node rows: one per region and
// instance type (the median of its series, zones and providers alike), and one per
// instance type without a region (the median of all its series), which OpenCost
// uses for a node in a region that has no row. Only whole-instance listed prices
// count: a GPU-only price is not a node's, a derived price no offer's.
func Rows(obs []schemas.Observation) []Row {
	type key struct{ region, sku string }
	prices := map[key][]float64{}
	newest := map[key]time.Time{}
	add := func(k key, o schemas.Observation) {
		prices[k] = append(prices[k], o.PriceUSDHour)
		if o.ObservedAt.After(newest[k]) {
			newest[k] = o.ObservedAt
		}
	}
	for _, o := range obs {
		if schemas.ScopeOf(o.PriceScope) != schemas.ScopeInstance || !o.Comparable() || o.SKU == "" ||
			!(o.PriceUSDHour > 0) || !(o.GPUCount > 0) {
			continue
		}
		if o.Region != "" {
			add(key{o.Region, o.SKU}, o)
		}
		add(key{"", o.SKU}, o)
	}
	rows := make([]Row, 0, len(prices))
	for k, ps := range prices {
		rows = append(rows, Row{EndTimestamp: newest[k].UTC(), InstanceType: k.sku, Region: k.region,
			PriceHourly: analytics.Median(ps), Series: len(ps)})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].InstanceType != rows[j].InstanceType {
			return rows[i].InstanceType < rows[j].InstanceType
		}
		return rows[i].Region < rows[j].Region
	})
	return rows
}

// Write writes the header and the rows as OpenCost reads them: AssetClass node,
// the instance type as InstanceID (matched against InstanceTypeLabel) and as
// InstanceType (OpenCost's match by region and instance type), the price to six
// decimals.
func Write(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header); err != nil {
		return err
	}
	for _, r := range rows {
		price := strconv.FormatFloat(math.Round(r.PriceHourly*1e6)/1e6, 'f', -1, 64)
		// A provider's SKU is its text: a cell a spreadsheet would run is quoted
		// (textsafe.CSV), as in every CSV gpuprice writes.
		if err := cw.Write(textsafe.CSVRecord([]string{r.EndTimestamp.Format(TimeLayout), r.InstanceType, r.Region,
			"node", InstanceTypeLabel, r.InstanceType, price, ""})); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

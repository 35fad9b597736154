package store

import (
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// Column is one column of the observations table as the backends write it: its
// name and how to take its value from an observation (exactly one of Time, Text
// and Number is set). Attrs are encoded by the writer (see AttrsEncoder), so the
// attrs column has none of them; version is the writer's own.
type Column struct {
	Name   string
	Time   func(*schemas.Observation) time.Time
	Text   func(*schemas.Observation) string
	Number func(*schemas.Observation) float64
}

// AttrsColumn is the name of the column holding the encoded attrs.
const AttrsColumn = "attrs"

// ObservationColumns is every column of observations a write sets, in the order
// writers send them, version excepted: the one list both backends write from, so a
// column added by a migration is added here once. The backends' reads name their
// columns in the same order.
var ObservationColumns = []Column{
	{Name: "observed_at", Time: func(o *schemas.Observation) time.Time { return o.ObservedAt }},
	{Name: "effective_at", Time: func(o *schemas.Observation) time.Time { return o.EffectiveAt }},
	{Name: "provider", Text: func(o *schemas.Observation) string { return o.Provider }},
	{Name: "tier", Text: func(o *schemas.Observation) string { return o.Tier }},
	{Name: "sku", Text: func(o *schemas.Observation) string { return o.SKU }},
	{Name: "region", Text: func(o *schemas.Observation) string { return o.Region }},
	{Name: "zone", Text: func(o *schemas.Observation) string { return o.Zone }},
	{Name: "gpu", Text: func(o *schemas.Observation) string { return o.GPU }},
	{Name: "gpu_name", Text: func(o *schemas.Observation) string { return o.GPUName }},
	{Name: "gpu_count", Number: func(o *schemas.Observation) float64 { return o.GPUCount }},
	{Name: "gpu_memory_gb", Number: func(o *schemas.Observation) float64 { return o.GPUMemoryGB }},
	{Name: "pricing", Text: func(o *schemas.Observation) string { return o.Pricing }},
	{Name: "price_usd_hour", Number: func(o *schemas.Observation) float64 { return o.PriceUSDHour }},
	{Name: "price_usd_gpu_hour", Number: func(o *schemas.Observation) float64 { return o.PriceUSDGPUHour }},
	{Name: "currency", Text: func(o *schemas.Observation) string { return o.Currency }},
	{Name: "price_native", Number: func(o *schemas.Observation) float64 { return o.PriceNative }},
	{Name: "unit", Text: func(o *schemas.Observation) string { return o.Unit }},
	{Name: "fx_rate", Number: func(o *schemas.Observation) float64 { return o.FXRate }},
	{Name: "interconnect", Text: func(o *schemas.Observation) string { return o.Interconnect }},
	{Name: "source_kind", Text: func(o *schemas.Observation) string { return o.SourceKind }},
	{Name: "source_url", Text: func(o *schemas.Observation) string { return o.SourceURL }},
	{Name: "run_id", Text: func(o *schemas.Observation) string { return o.RunID }},
	{Name: AttrsColumn},
	{Name: "price_scope", Text: func(o *schemas.Observation) string { return o.PriceScope }},
	{Name: "price_basis", Text: func(o *schemas.Observation) string { return o.PriceBasis }},
	// origin (schema version 11): "" or "recorded", from the row's attrs.origin.
	{Name: "origin", Text: func(o *schemas.Observation) string { return o.Attrs[schemas.AttrOrigin] }},
}

// ObservationColumnNames is the names of ObservationColumns joined by ", ", for
// SQL column lists.
func ObservationColumnNames() string {
	names := make([]string, len(ObservationColumns))
	for i, c := range ObservationColumns {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

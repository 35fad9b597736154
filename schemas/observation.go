// Package schemas holds the types every part of gpuprice shares: the observation row,
// collection runs and quarantined rows, the DDL and migrations of each store backend,
// the GPU catalog with its canonicaliser, and the provider catalog.
package schemas

import (
	"fmt"
	"strings"
	"time"
)

// Pricing kinds. Commitment terms outside the reserved 1y/3y pair are written
// "commitment_<n>m" (see CommitmentPricing).
const (
	OnDemand   = "on_demand"
	Spot       = "spot"
	Reserved1Y = "reserved_1y"
	Reserved3Y = "reserved_3y"
)

// CommitmentPricing returns the pricing kind of an n-month commitment.
func CommitmentPricing(months int) string { return fmt.Sprintf("commitment_%dm", months) }

// ValidPricing reports whether p is a pricing kind the project knows.
func ValidPricing(p string) bool {
	switch p {
	case OnDemand, Spot, Reserved1Y, Reserved3Y:
		return true
	}
	if m, ok := strings.CutPrefix(p, "commitment_"); ok {
		n, ok := strings.CutSuffix(m, "m")
		if !ok || n == "" {
			return false
		}
		for _, c := range n {
			if c < '0' || c > '9' {
				return false
			}
		}
		return n[0] != '0'
	}
	return false
}

// TermHours is the number of hours in the term of a pricing kind that is sold for a
// fixed term (reserved_1y, reserved_3y, commitment_<n>m), and 0 for the others.
func TermHours(pricing string) float64 {
	switch pricing {
	case Reserved1Y:
		return 365 * 24
	case Reserved3Y:
		return 3 * 365 * 24
	}
	if m, ok := strings.CutPrefix(pricing, "commitment_"); ok {
		var n int
		if _, err := fmt.Sscanf(m, "%dm", &n); err == nil && n > 0 {
			return float64(n) * 730
		}
	}
	return 0
}

// Price units a source may publish. Ingest turns every one of them into $/hour.
const (
	UnitHour     = "hour"     // per instance per hour
	UnitGPUHour  = "gpu_hour" // per GPU per hour
	UnitMonth    = "month"    // per instance per month (730 hours)
	UnitTerm     = "term"     // per instance for the whole reserved term
	UnitGPUMonth = "gpu_month"
)

// Source kinds.
const (
	SourceAPI     = "api"
	SourceScrape  = "scrape"
	SourceImport  = "import"
	SourceDerived = "derived"
)

// Interconnects.
const (
	InterconnectInfiniband = "infiniband"
	InterconnectRoCE       = "roce"
	InterconnectEFA        = "efa"
	InterconnectEthernet   = "ethernet"
	InterconnectNVLinkOnly = "nvlink-only"
	InterconnectUnknown    = "unknown"
)

// UnknownGPU is the gpu of a row whose GPU name the canonicaliser could not place.
const UnknownGPU = "unknown"

// Observation is one price for one SKU, at one place, of one pricing kind, at one time.
//
// Sources fill the raw fields (provider, sku, region, zone, pricing, price_native,
// currency, unit, gpu_name, gpu_count, …); ingest fills the normalised ones (gpu, tier,
// price_usd_hour, price_usd_gpu_hour, fx_rate, run_id, observed_at).
//
// The identity of an observation is its series (provider, sku, region, zone, pricing)
// plus effective_at: storing the same identity twice keeps one row.
type Observation struct {
	ObservedAt      time.Time         `json:"observed_at"`
	EffectiveAt     time.Time         `json:"effective_at"`
	Provider        string            `json:"provider"`
	Tier            string            `json:"tier"`
	SKU             string            `json:"sku"`
	Region          string            `json:"region"`
	Zone            string            `json:"zone"`
	GPU             string            `json:"gpu"`
	GPUName         string            `json:"gpu_name"` // the provider's GPU name, verbatim
	GPUCount        float64           `json:"gpu_count"`
	GPUMemoryGB     float64           `json:"gpu_memory_gb"`
	Pricing         string            `json:"pricing"`
	PriceUSDHour    float64           `json:"price_usd_hour"`
	PriceUSDGPUHour float64           `json:"price_usd_gpu_hour"`
	Currency        string            `json:"currency"`
	PriceNative     float64           `json:"price_native"` // as published, in Currency per Unit
	Unit            string            `json:"unit"`
	FXRate          float64           `json:"fx_rate"` // USD per unit of Currency used
	Interconnect    string            `json:"interconnect"`
	SourceKind      string            `json:"source_kind"`
	SourceURL       string            `json:"source_url"`
	RunID           string            `json:"run_id"`
	Attrs           map[string]string `json:"attrs,omitempty"` // stored as a JSON object string
}

// SeriesKey identifies the series an observation belongs to.
func (o Observation) SeriesKey() string {
	return o.Provider + "|" + o.SKU + "|" + o.Region + "|" + o.Zone + "|" + o.Pricing
}

// Run statuses.
const (
	RunOK       = "ok"
	RunDegraded = "degraded"
	RunFailed   = "failed"
)

// Run is the record of one source's part in one collection.
type Run struct {
	RunID          string    `json:"run_id"`
	Source         string    `json:"source"`
	StartedAt      time.Time `json:"started_at"`
	FinishedAt     time.Time `json:"finished_at"`
	Status         string    `json:"status"`
	RowsAccepted   int       `json:"rows_accepted"`
	RowsQuarantine int       `json:"rows_quarantined"`
	UnknownGPUs    int       `json:"unknown_gpus"`
	Error          string    `json:"error"`
}

// Quarantined is a row that failed validation, kept with the reason.
type Quarantined struct {
	QuarantinedAt time.Time `json:"quarantined_at"`
	RunID         string    `json:"run_id"`
	Source        string    `json:"source"`
	Reason        string    `json:"reason"`
	Raw           string    `json:"raw"` // the row as JSON (or the source's raw text)
}

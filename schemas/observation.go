// Package schemas holds the types every part of gpuprice shares: the observation row,
// collection runs and quarantined rows, the DDL and migrations of each store backend,
// the GPU catalog with its canonicaliser, and the provider catalog.
package schemas

import (
	"crypto/sha256"
	"encoding/hex"
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
	// LowPriority is Azure's Low Priority VM meters: evictable capacity sold as a
	// product of its own (batch), not Spot; kept apart from spot everywhere.
	LowPriority = "low_priority"
)

// CommitmentPricing returns the pricing kind of an n-month commitment.
func CommitmentPricing(months int) string { return fmt.Sprintf("commitment_%dm", months) }

// ValidPricing reports whether p is a pricing kind the project knows.
func ValidPricing(p string) bool {
	switch p {
	case OnDemand, Spot, Reserved1Y, Reserved3Y, LowPriority:
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

// Price scopes: what a price covers (docs/analytics.md, "Like with like").
const (
	ScopeInstance = "instance" // the whole machine (GPUs with their CPU, memory, disk)
	ScopeGPUOnly  = "gpu_only" // an accelerator priced apart from the VM it attaches to
)

// Price bases: how a price was obtained. Only listed prices enter the cheapest
// offers, spreads and the index by default.
const (
	BasisListed  = "listed"  // a price the provider publishes for this SKU
	BasisDerived = "derived" // computed by a documented rule (OCI preemptible at 50 %)
	BasisFloor   = "floor"   // a "from $X" lower bound, not the price of one offer
)

// ValidScope reports whether s is a price scope ("" reads as ScopeInstance).
func ValidScope(s string) bool { return s == "" || s == ScopeInstance || s == ScopeGPUOnly }

// ValidBasis reports whether b is a price basis ("" reads as BasisListed).
func ValidBasis(b string) bool {
	return b == "" || b == BasisListed || b == BasisDerived || b == BasisFloor
}

// ScopeOf is the scope of a row: s, or ScopeInstance for rows stored before scopes
// were recorded ("").
func ScopeOf(s string) string {
	if s == "" {
		return ScopeInstance
	}
	return s
}

// BasisOf is the basis of a row: b, or BasisListed for rows stored before bases
// were recorded ("").
func BasisOf(b string) string {
	if b == "" {
		return BasisListed
	}
	return b
}

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
	// PriceScope is ScopeInstance or ScopeGPUOnly; PriceBasis is BasisListed,
	// BasisDerived or BasisFloor. Ingest fills both ("" in rows stored before
	// schema version 5 reads as instance/listed).
	PriceScope string `json:"price_scope,omitempty"`
	PriceBasis string `json:"price_basis,omitempty"`
}

// AttrOrigin is the attribute that says where a row came from when it was not
// collected from its provider by this deployment; OriginRecorded marks rows loaded
// from a recorded example archive (`gpuprice reparse examples/recorded`): the sources'
// test fixtures in each provider's format, mostly constructed (AttrProvenance says
// which), kept with the time they were recorded at.
// They are never today's prices: every output marks them (the origin column, the
// attribute in JSON, a note on stderr, a badge in the web app).
const (
	AttrOrigin     = "origin"
	OriginRecorded = "recorded"
	OriginLive     = "live" // what outputs write for a row without AttrOrigin
)

// AttrProvenance is set on a recorded example's rows (AttrOrigin OriginRecorded) to
// the provenance of the response each was parsed from: "verbatim" (a real response,
// as a public recording kept it), "retyped" (copied by hand from a page the provider
// published) or "constructed" (built in the provider's format from a real excerpt,
// its values partly illustrative); see examples/recorded/README.md.
const AttrProvenance = "provenance"

// The values of AttrProvenance (archive.Entry.Provenance), from the most to the least
// faithful.
const (
	ProvenanceVerbatim    = "verbatim"
	ProvenanceRetyped     = "retyped"
	ProvenanceConstructed = "constructed"
)

// Origin is the row's origin: OriginRecorded, or OriginLive for a row collected
// from its provider (or imported).
func (o Observation) Origin() string {
	if v := o.Attrs[AttrOrigin]; v != "" {
		return v
	}
	return OriginLive
}

// Recorded reports whether the row was loaded from a recorded example.
func (o Observation) Recorded() bool { return o.Attrs[AttrOrigin] == OriginRecorded }

// Comparable reports whether the row is a listed price: not derived by a rule nor
// a "from" floor. Cheapest offers, spreads and the index use only these by default.
func (o Observation) Comparable() bool { return BasisOf(o.PriceBasis) == BasisListed }

// SeriesKey identifies the series an observation belongs to.
func (o Observation) SeriesKey() string {
	return o.Provider + "|" + o.SKU + "|" + o.Region + "|" + o.Zone + "|" + o.Pricing
}

// Run statuses.
const (
	RunOK       = "ok"
	RunDegraded = "degraded"
	RunFailed   = "failed"
	// RunInterrupted is a run stopped by a signal (SIGTERM, Ctrl-C): what it had read
	// was stored or spooled, but its input was not read to the end.
	RunInterrupted = "interrupted"
	// RunStarted is a run under way: recorded before its first rows are written, so
	// that a run killed before its end (kill -9, a lost machine) leaves a record. Its
	// FinishedAt is when its process last reported (Heartbeat), Owner names that
	// process and SpanSince/SpanUntil cover the rows it began to write. Once its
	// process is gone (RunGone), the next run rewrites it as interrupted after
	// rebuilding the bars over its span.
	RunStarted = "started"
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
	// RowsSuspect are the quarantined rows held as suspect by the relative gate
	// (counted within RowsQuarantine; `gpuprice quarantine release` stores one a
	// person confirms). Records written before schema version 12 read 0.
	RowsSuspect int `json:"rows_suspect"`
	// RowsNotOffered are the rows the source said are not offered (a null or 0
	// price, the provider's own "not available"): no price and no problem of the
	// source, so neither stored nor quarantined, only counted. Records written
	// before schema version 17 read 0.
	RowsNotOffered int `json:"rows_not_offered"`
	UnknownGPUs    int `json:"unknown_gpus"`
	// What became of the accepted rows: stored, spooled (the store was away; a
	// replay writes them) or lost (neither took them: a failed run). Run records
	// written before schema version 8 read 0 for all three.
	RowsStored  int    `json:"rows_stored"`
	RowsSpooled int    `json:"rows_spooled"`
	RowsLost    int    `json:"rows_lost"`
	Error       string `json:"error"`
	// Owner is the process that ran it ("host/pid"), and SpanSince/SpanUntil the
	// span [since, until) of effective_at of the rows it wrote or began to write
	// (zero when none): what a killed run's bars are rebuilt over. Records written
	// before schema version 19 hold "" and zero.
	Owner     string    `json:"-"`
	SpanSince time.Time `json:"-"`
	SpanUntil time.Time `json:"-"`
}

// Quarantined is a row that failed validation, kept with the reason.
type Quarantined struct {
	QuarantinedAt time.Time `json:"quarantined_at"`
	RunID         string    `json:"run_id"`
	Source        string    `json:"source"`
	Reason        string    `json:"reason"`
	Raw           string    `json:"raw"` // the row as JSON (or the source's raw text)
}

// ID is a short, stable identifier of a quarantined row (the first 12 hex digits
// of a SHA-256 over its time, source, run and raw text), for `gpuprice quarantine
// release ID`. The quarantine log has no key of its own.
func (q Quarantined) ID() string {
	h := sha256.Sum256(
		[]byte(q.QuarantinedAt.UTC().Format(time.RFC3339) + "\x00" + q.Source + "\x00" + q.RunID + "\x00" + q.Raw),
	)
	return hex.EncodeToString(h[:6])
}

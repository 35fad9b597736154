package schemas

import (
	"fmt"
	"math"
	"time"
)

// Signal kinds: what a Signal measures. Each is a time series per (provider, sku,
// region, zone, kind), stored like prices (docs/risk.md).
const (
	// SignalInterruption is a spot interruption band: Value is the band's index
	// (0 the lowest; AWS Spot Advisor: 0 "<5%" … 4 ">20%"), Label the band as the
	// provider prints it.
	SignalInterruption = "interruption"
	// SignalStock is an offer's stock: Value the units (GPUs, or machines where
	// the provider counts those) that can be rented now, 0 when out of stock;
	// Label the provider's status word ("High", "Low", "None", "") verbatim.
	SignalStock = "stock"
	// SignalDepth is a marketplace's depth for one GPU: Value the count of offers
	// that can be rented now.
	SignalDepth = "depth"
	// SignalReliability is a marketplace offer's reliability score (0..1).
	SignalReliability = "reliability"
	// SignalPreemption is a day's preemption share of a spot machine type in a
	// zone (GCP capacity history's preemptionRate: the spot VMs preempted that day
	// over those that stopped running that day, 0..1); EffectiveAt the day's start.
	// It is not a rate per hour of running and is not priced as one (docs/risk.md).
	SignalPreemption = "preemption"
)

// ValidSignalKind reports whether k is a signal kind the project knows.
func ValidSignalKind(k string) bool {
	switch k {
	case SignalInterruption, SignalStock, SignalDepth, SignalReliability, SignalPreemption:
		return true
	}
	return false
}

// Signal is one risk or availability fact about an offer at one time: its
// interruption band, its stock, the depth of its market. Its identity is its series
// (provider, sku, region, zone, kind) plus effective_at; storing the same identity
// twice keeps the last write. An offer out of stock is a row with Value 0, not a
// missing row, so history survives a signal's disappearance.
type Signal struct {
	ObservedAt  time.Time `json:"observed_at"`
	EffectiveAt time.Time `json:"effective_at"`
	Provider    string    `json:"provider"`
	SKU         string    `json:"sku"`
	Region      string    `json:"region"`
	Zone        string    `json:"zone"`
	GPU         string    `json:"gpu"`
	Kind        string    `json:"kind"`
	Value       float64   `json:"value"`
	Label       string    `json:"label"`
	// Provenance: the source that read it, the URL it was read from, the run.
	Source    string            `json:"source"`
	SourceURL string            `json:"source_url"`
	RunID     string            `json:"run_id"`
	Attrs     map[string]string `json:"attrs,omitempty"` // stored as a JSON object string
}

// SameSeries reports whether s and o are of one series (provider, sku, region,
// zone); the kind is the caller's to compare.
func (s Signal) SameSeries(o Signal) bool {
	return s.Provider == o.Provider && s.SKU == o.SKU && s.Region == o.Region && s.Zone == o.Zone
}

// Validate reports what makes s unstorable: no provider, sku or effective time, an
// unknown kind, or a value that is not a finite number >= 0.
func (s Signal) Validate() error {
	switch {
	case s.Provider == "" || s.SKU == "":
		return fmt.Errorf("schemas: signal without provider or sku")
	case !ValidSignalKind(s.Kind):
		return fmt.Errorf("schemas: signal %s/%s: unknown kind %q", s.Provider, s.SKU, s.Kind)
	case s.EffectiveAt.IsZero():
		return fmt.Errorf("schemas: signal %s/%s %s: no effective time", s.Provider, s.SKU, s.Kind)
	case math.IsNaN(s.Value) || math.IsInf(s.Value, 0) || s.Value < 0:
		return fmt.Errorf("schemas: signal %s/%s %s: value %v is not a finite number >= 0",
			s.Provider, s.SKU, s.Kind, s.Value)
	case (s.Kind == SignalReliability || s.Kind == SignalPreemption) && s.Value > 1:
		return fmt.Errorf("schemas: signal %s/%s %s: value %v is a share, at most 1", s.Provider, s.SKU, s.Kind, s.Value)
	}
	return nil
}

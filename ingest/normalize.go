// Package ingest turns what sources emit into stored rows: it normalises every raw
// observation (canonical GPU, $/hour and $/GPU-hour, currency to USD with the rate
// kept, tier and interconnect from the provider catalog), applies the plausibility
// gates (failures go to quarantine with the reason, never dropped), batches writes,
// and keeps a run record per source per collection.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Canonicalizer places a provider's GPU name on the GPU catalog.
type Canonicalizer interface {
	Canonicalize(h schemas.Hint) string
}

// FX gives the USD value of one unit of a currency at a time.
type FX interface {
	Rate(ctx context.Context, currency string, at time.Time) (float64, error)
}

// ErrNoRate is returned by FX when it has no rate for a currency.
var ErrNoRate = errors.New("ingest: no FX rate")

// StaticFX is a fixed table of USD per currency unit (from config).
type StaticFX map[string]float64

// Rate implements FX.
func (s StaticFX) Rate(_ context.Context, currency string, _ time.Time) (float64, error) {
	if currency == "USD" {
		return 1, nil
	}
	if r, ok := s[currency]; ok && r > 0 {
		return r, nil
	}
	return 0, fmt.Errorf("%w for %s", ErrNoRate, currency)
}

// Bounds are the plausible $/GPU-hour range; prices outside go to quarantine.
type Bounds struct {
	MinUSDGPUHour float64
	MaxUSDGPUHour float64
}

// DefaultBounds: below a cent or above $150 per GPU-hour is not a real offer.
func DefaultBounds() Bounds { return Bounds{MinUSDGPUHour: 0.01, MaxUSDGPUHour: 150} }

// Normalizer normalises and gates raw observations. It is safe for concurrent use
// once its fields are set; they are not changed after the first Normalize.
type Normalizer struct {
	GPUs      Canonicalizer
	Providers schemas.ProviderCatalog
	FX        FX
	Bounds    Bounds
	// Peers, when set, holds prices far from their peers as suspect (SuspectConfig)
	// and learns every row that passes. nil: no relative gate (imports, backfills).
	Peers *Peers

	// Places GPUs.Canonicalize gave, per distinct hint: a source publishes a few
	// hundred distinct GPU names and SKUs over millions of rows, and placing one
	// (tokens, rules, the catalog) costs far more than a lookup.
	canon sync.Map // schemas.Hint → string
	// canonN counts the entries, so that the cache stays bounded (a source with a
	// new name on every row would otherwise grow it without end).
	canonN atomic.Int64
}

// maxCanonCache bounds the canonicaliser cache; past it, hints are placed anew.
const maxCanonCache = 100_000

// canonicalize is GPUs.Canonicalize(h), cached per distinct hint.
func (n *Normalizer) canonicalize(h schemas.Hint) string {
	if id, ok := n.canon.Load(h); ok {
		return id.(string)
	}
	id := n.GPUs.Canonicalize(h)
	if n.canonN.Load() < maxCanonCache {
		if _, loaded := n.canon.LoadOrStore(h, id); !loaded {
			n.canonN.Add(1)
		}
	}
	return id
}

// Rejection is why an observation failed a gate.
type Rejection struct {
	Reason string
	// NotOffered: the source said the row is not offered (price 0 with no text, or
	// a text scrapers.NotOffered knows). It is no price and no problem of the source:
	// a Run counts it (rows_not_offered) and neither stores nor quarantines it.
	NotOffered bool
}

func (r *Rejection) Error() string { return r.Reason }

// Normalize fills the normalised fields of o and checks it. It returns a *Rejection
// error when the row must go to quarantine. unknownGPU reports a GPU name the catalog
// could not place (the row is kept with gpu "unknown").
func (n *Normalizer) Normalize(
	ctx context.Context,
	o schemas.Observation,
) (out schemas.Observation, unknownGPU bool, err error) {
	reject := func(format string, args ...any) (schemas.Observation, bool, error) {
		return o, false, &Rejection{Reason: fmt.Sprintf(format, args...)}
	}
	o = Clean(o)
	o.ObservedAt = o.ObservedAt.UTC().Truncate(time.Second)
	if o.EffectiveAt.IsZero() {
		o.EffectiveAt = o.ObservedAt
	}
	o.EffectiveAt = o.EffectiveAt.UTC().Truncate(time.Second)
	// The published price is kept to 1e-9 of its currency, as the USD prices are: a
	// source's own arithmetic (Vast's dph_total 0.16166666666666668) is not stored
	// or shown as float noise.
	o.PriceNative = round(o.PriceNative)
	switch {
	case o.ObservedAt.IsZero():
		return reject("missing observed_at")
	case o.Provider == "":
		return reject("missing provider")
	case o.SKU == "":
		return reject("missing sku")
	case !schemas.ValidPricing(o.Pricing):
		return reject("unknown pricing kind %q", o.Pricing)
	case math.IsNaN(o.PriceNative) || math.IsInf(o.PriceNative, 0):
		return reject("price is not a number")
	case o.PriceNative == 0:
		t := o.Attrs["price_text"]
		switch {
		case scrapers.NotOffered(t):
			return o, false, &Rejection{Reason: "not offered", NotOffered: true}
		case strings.HasPrefix(t, scrapers.PlaceholderPrefix):
			return reject("%s", t)
		}
		return reject("no price published (%q)", t)
	case o.PriceNative < 0:
		return reject("non-positive price %v", o.PriceNative)
	case math.IsNaN(o.GPUCount) || o.GPUCount <= 0:
		return reject("gpu_count %v is not positive", o.GPUCount)
	}
	if o.Currency == "" {
		return reject("missing currency")
	}
	o.Currency = strings.ToUpper(o.Currency)
	rate := 1.0
	switch {
	case o.Currency == "USD":
	case o.FXRate > 0 && !math.IsInf(o.FXRate, 0):
		// A rate the row carries (an export of gpuprice's own rows being imported):
		// keep it, so that export → import is lossless whatever rates this store has.
		// Sources never set FXRate.
		rate = o.FXRate
	default:
		if n.FX == nil {
			return reject("no FX rate for %s", o.Currency)
		}
		r, ferr := n.FX.Rate(ctx, o.Currency, o.EffectiveAt)
		if ferr != nil || r <= 0 {
			return reject("no FX rate for %s", o.Currency)
		}
		rate = r
	}
	o.FXRate = rate
	usd := o.PriceNative * rate
	switch o.Unit {
	case schemas.UnitHour:
		o.PriceUSDHour = usd
	case schemas.UnitGPUHour:
		o.PriceUSDHour = usd * o.GPUCount
	case schemas.UnitMonth:
		o.PriceUSDHour = usd / 730
	case schemas.UnitGPUMonth:
		o.PriceUSDHour = usd / 730 * o.GPUCount
	case schemas.UnitTerm:
		h := schemas.TermHours(o.Pricing)
		if h == 0 {
			return reject("price for a whole term but pricing %q has no term", o.Pricing)
		}
		o.PriceUSDHour = usd / h
	default:
		return reject("unknown price unit %q", o.Unit)
	}
	o.PriceUSDHour = round(o.PriceUSDHour)
	o.PriceUSDGPUHour = round(o.PriceUSDHour / o.GPUCount)
	b := n.Bounds
	if b.MaxUSDGPUHour == 0 {
		b = DefaultBounds()
	}
	if o.PriceUSDGPUHour < b.MinUSDGPUHour || o.PriceUSDGPUHour > b.MaxUSDGPUHour {
		return reject(
			"$%.4g per GPU-hour is outside the plausible range [%g, %g]",
			o.PriceUSDGPUHour,
			b.MinUSDGPUHour,
			b.MaxUSDGPUHour,
		)
	}
	if !schemas.ValidScope(o.PriceScope) {
		return reject("unknown price scope %q", o.PriceScope)
	}
	o.PriceScope = schemas.ScopeOf(o.PriceScope)
	switch {
	case !schemas.ValidBasis(o.PriceBasis):
		return reject("unknown price basis %q", o.PriceBasis)
	case o.PriceBasis != "":
	case o.SourceKind == schemas.SourceDerived:
		o.PriceBasis = schemas.BasisDerived
	case strings.EqualFold(o.Attrs["price_qualifier"], "from"):
		o.PriceBasis = schemas.BasisFloor
	default:
		o.PriceBasis = schemas.BasisListed
	}
	p := n.Providers.Lookup(o.Provider)
	if o.Tier == "" {
		o.Tier = p.Tier
	}
	if o.Interconnect == "" {
		// The provider's rule for its SKUs, when its fabric is not on every size
		// (AWS: EFA only on the sizes it lists).
		o.Interconnect = schemas.SKUInterconnect(o.Provider, o.SKU, o.GPUCount)
	}
	if o.Interconnect == "" {
		o.Interconnect = p.Interconnect
		if o.GPUCount <= 1 {
			// A single GPU talks to no other: the provider's fabric says nothing about it.
			o.Interconnect = schemas.InterconnectUnknown
		}
	}
	if o.GPU == "" || o.GPU == schemas.UnknownGPU {
		o.GPU = schemas.UnknownGPU
		if n.GPUs != nil {
			name := o.GPUName
			if ff := o.Attrs["form_factor"]; ff != "" {
				// Pages that print the form factor apart from the model ("NVIDIA H100" over
				// "HGX") put it in Attrs["form_factor"]: the canonicaliser needs both.
				name += " " + ff
			}
			o.GPU = n.canonicalize(schemas.Hint{Provider: o.Provider, Name: name, SKU: o.SKU, MemoryGB: o.GPUMemoryGB,
				MemoryType: o.Attrs["gpu_memory_interface"]})
		}
	}
	if why := n.Peers.Judge(o); why != "" {
		return o, false, &Rejection{Reason: why}
	}
	n.Peers.Learn(o)
	return o, o.GPU == schemas.UnknownGPU, nil
}

// round keeps prices to 1e-9 dollars so that arithmetic noise never separates
// equal prices (and both stores hold the same value).
func round(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// FXChain asks each FX in turn and returns the first rate found (e.g. the stored ECB
// rates, then static rates from the config).
type FXChain []FX

// Rate implements FX.
func (c FXChain) Rate(ctx context.Context, currency string, at time.Time) (float64, error) {
	var errs []error
	for _, f := range c {
		if f == nil {
			continue
		}
		r, err := f.Rate(ctx, currency, at)
		if err == nil && r > 0 {
			return r, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return 0, fmt.Errorf("%w for %s", ErrNoRate, currency)
	}
	return 0, errors.Join(errs...)
}

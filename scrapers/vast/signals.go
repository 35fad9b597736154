package vast

import (
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// DepthSKUPrefix starts the SKU of a depth signal: "depth:" + the GPU name as Vast
// states it ("depth:RTX 4090"), one series per GPU name of the marketplace.
const DepthSKUPrefix = "depth:"

// UnitGPUs is the unit (Attrs["unit"]) of an offer's stock: GPUs.
const UnitGPUs = "gpus"

// OfferSignals is what an offer's row states of its risk and availability
// (scrapers.Info.Signals), offered or not: a schemas.SignalReliability of its
// reliability2 score, and a schemas.SignalStock of the GPUs that can be rented now —
// num_gpus when Vast says the offer is rentable and not rented, else 0 (Attrs unit
// "gpus"; Vast has no status word, so no label). A row without reliability2 has no
// reliability signal; one that does not state both rentable and rented has no stock
// signal. The on-demand and spot rows of an offer state the same signals (one
// series, the store keeps one). Region and GPU name are cleaned as ingest cleans the
// row's (textsafe), so that the signals name the offer as its stored prices do.
func OfferSignals(o schemas.Observation) []schemas.Signal {
	region, _ := textsafe.Region(textsafe.Clean(o.Region, textsafe.MaxText))
	base := schemas.Signal{
		ObservedAt:  o.ObservedAt,
		EffectiveAt: o.EffectiveAt,
		Provider:    o.Provider,
		SKU:         o.SKU,
		Region:      region,
		Zone:        o.Zone,
		SourceURL:   schemas.RedactURL(o.SourceURL),
	}
	attrs := func(extra ...string) map[string]string {
		a := map[string]string{"gpu_name": textsafe.Clean(o.GPUName, textsafe.MaxName)}
		if o.GPUMemoryGB > 0 {
			a["gpu_memory_gb"] = schemas.FormatNum(o.GPUMemoryGB)
		}
		for _, k := range []string{"offer_id", "machine_id"} {
			if v, ok := o.Attrs[k]; ok {
				a[k] = v
			}
		}
		for i := 0; i+1 < len(extra); i += 2 {
			a[extra[i]] = extra[i+1]
		}
		return a
	}
	var out []schemas.Signal
	if r, ok := o.Attrs["reliability2"]; ok {
		s := base
		s.Kind = schemas.SignalReliability
		s.Value = parseValue(r)
		s.Attrs = attrs()
		out = append(out, s)
	}
	rentable, okA := o.Attrs["rentable"]
	rented, okB := o.Attrs["rented"]
	if okA && okB {
		s := base
		s.Kind = schemas.SignalStock
		if rentable == "true" && rented == "false" {
			s.Value = o.GPUCount
		}
		s.Attrs = attrs("unit", UnitGPUs, "rentable", rentable, "rented", rented)
		out = append(out, s)
	}
	return out
}

// parseValue reads a number an attribute holds; NaN when it holds none, which the
// signal's validation quarantines with its SKU.
func parseValue(v string) float64 {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// depthSignals are the market's depth in one answer: per GPU name, a
// schemas.SignalDepth whose Value is the count of the answer's offers of that GPU
// that can be rented now (0 when all are taken), SKU DepthSKUPrefix + the name,
// Region "" (the whole marketplace), Attrs gpu_name; sorted by name.
func depthSignals(depth map[string]int, at time.Time, sourceURL string) []schemas.Signal {
	names := make([]string, 0, len(depth))
	for n := range depth {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]schemas.Signal, 0, len(names))
	for _, n := range names {
		out = append(out, schemas.Signal{
			ObservedAt:  at,
			EffectiveAt: at,
			Provider:    "vast",
			SKU:         DepthSKUPrefix + n,
			Kind:        schemas.SignalDepth,
			Value:       float64(depth[n]),
			SourceURL:   schemas.RedactURL(sourceURL),
			Attrs:       map[string]string{"gpu_name": n},
		})
	}
	return out
}

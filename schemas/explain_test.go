package schemas

import (
	"strings"
	"testing"
	"time"
)

func TestExplainPrice(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	lam := Observation{EffectiveAt: at, Provider: "lambda", SKU: "gpu_8x_h100_sxm5", GPUCount: 8, Pricing: OnDemand,
		PriceNative: 19.92, Currency: "USD", Unit: UnitHour, FXRate: 1, PriceUSDHour: 19.92, PriceUSDGPUHour: 2.49}
	s := strings.Join(ExplainPrice(lam).Steps, "\n")
	for _, want := range []string{"19.92 USD per instance-hour", "USD: no conversion", "$19.92/h ÷ 8 GPUs = $2.49/GPU-h", "instance: the whole machine", "listed"} {
		if !strings.Contains(s, want) {
			t.Errorf("lambda: %q missing in\n%s", want, s)
		}
	}
	ovh := Observation{EffectiveAt: at, Provider: "ovhcloud", GPUCount: 1, Pricing: OnDemand, PriceNative: 1.65, Currency: "EUR",
		Unit: UnitHour, FXRate: 1.1553, PriceUSDHour: 1.906245, PriceUSDGPUHour: 1.906245}
	s = strings.Join(ExplainPrice(ovh).Steps, "\n")
	if !strings.Contains(s, "× 1.1553 USD per EUR (the rate in force on 2026-11-30) = 1.906245 USD") || !strings.Contains(s, "= $1.9062/GPU-h") {
		t.Errorf("ovhcloud:\n%s", s)
	}
	oci := Observation{EffectiveAt: at, Provider: "oci", GPUCount: 8, Pricing: Spot, PriceNative: 5, Currency: "USD", Unit: UnitGPUHour,
		FXRate: 1, PriceUSDHour: 40, PriceUSDGPUHour: 5, PriceScope: ScopeInstance, PriceBasis: BasisDerived,
		Attrs: map[string]string{"rule": "oci-preemptible-50pct-of-on-demand"}}
	s = strings.Join(ExplainPrice(oci).Steps, "\n")
	if !strings.Contains(s, "$5.00/GPU-h × 8 GPUs = $40.00/h") || !strings.Contains(s, "derived: computed by a documented rule (oci-preemptible-50pct-of-on-demand)") {
		t.Errorf("oci:\n%s", s)
	}
	gcp := Observation{EffectiveAt: at, Provider: "gcp", GPUCount: 1, PriceNative: 9.8, Currency: "USD", Unit: UnitGPUHour, FXRate: 1,
		PriceUSDHour: 9.8, PriceUSDGPUHour: 9.8, PriceScope: ScopeGPUOnly}
	if s := strings.Join(ExplainPrice(gcp).Steps, "\n"); !strings.Contains(s, "gpu_only: the GPU alone") {
		t.Errorf("gcp:\n%s", s)
	}
	if p := ExplainPrice(gcp); p.Origin != "" || strings.Contains(strings.Join(p.Steps, "\n"), "origin") {
		t.Errorf("a live row explained with an origin: %+v", p)
	}
	// A recorded example's row says what its figure was parsed from: "listed" alone
	// would present an illustrative figure as the provider's.
	for kind, want := range map[string]string{
		ProvenanceVerbatim:    "verbatim capture of the provider's response",
		ProvenanceConstructed: "the figure may be illustrative, not the provider's",
		"":                    "not today's price",
	} {
		rec := gcp
		rec.Attrs = map[string]string{AttrOrigin: OriginRecorded, AttrProvenance: kind}
		if p := ExplainPrice(rec); !strings.Contains(p.Origin, want) || !strings.HasPrefix(p.Steps[len(p.Steps)-1], "origin     recorded example") ||
			strings.HasSuffix(p.Origin, ": ") {
			t.Errorf("recorded %q: %+v", kind, p)
		}
	}
}

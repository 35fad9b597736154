package ingest

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// fakeGPUs places exactly the names in its map.
type fakeGPUs map[string]string

func (f fakeGPUs) Canonicalize(h schemas.Hint) string {
	if g, ok := f[h.Name]; ok {
		return g
	}
	return schemas.UnknownGPU
}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 500_000_000, time.UTC)

func raw(mod func(*schemas.Observation)) schemas.Observation {
	o := schemas.Observation{
		ObservedAt: t0, Provider: "lambda", SKU: "gpu_8x_h100_sxm5", Pricing: schemas.OnDemand,
		PriceNative: 2.99, Currency: "USD", Unit: schemas.UnitGPUHour, GPUName: "H100 SXM", GPUCount: 8,
		SourceKind: schemas.SourceScrape,
	}
	if mod != nil {
		mod(&o)
	}
	return o
}

func testNormalizer() *Normalizer {
	return &Normalizer{
		GPUs: fakeGPUs{"H100 SXM": "H100-SXM-80GB"},
		// Lambda's facts as its source registers them (scrapers/lambda); ingest's
		// tests do not import the sources.
		Providers: schemas.ProviderCatalog{"lambda": {Name: "lambda", Tier: schemas.TierSpecialist, Interconnect: schemas.InterconnectInfiniband}},
		FX:        StaticFX{"EUR": 1.25},
		Bounds:    DefaultBounds(),
	}
}

func TestNormalizeConverts(t *testing.T) {
	n := testNormalizer()
	cases := []struct {
		name              string
		in                schemas.Observation
		hour, gpuHour, fx float64
	}{
		{"per GPU-hour", raw(nil), 23.92, 2.99, 1},
		{"per instance-hour", raw(func(o *schemas.Observation) { o.Unit = schemas.UnitHour; o.PriceNative = 98.32 }), 98.32, 12.29, 1},
		{"per month", raw(func(o *schemas.Observation) { o.Unit = schemas.UnitMonth; o.PriceNative = 730 * 16 }), 16, 2, 1},
		{"reserved 1y whole term", raw(func(o *schemas.Observation) {
			o.Unit, o.Pricing, o.PriceNative = schemas.UnitTerm, schemas.Reserved1Y, 8760*20
		}), 20, 2.5, 1},
		{"reserved 3y whole term", raw(func(o *schemas.Observation) {
			o.Unit, o.Pricing, o.PriceNative = schemas.UnitTerm, schemas.Reserved3Y, 3*8760*16
		}), 16, 2, 1},
		{"EUR converted", raw(func(o *schemas.Observation) { o.Currency = "eur"; o.PriceNative = 2 }), 20, 2.5, 1.25},
		{"fractional GPU", raw(func(o *schemas.Observation) { o.Unit = schemas.UnitHour; o.GPUCount = 1.0 / 6; o.PriceNative = 0.454 }), 0.454, 2.724, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, unknown, err := n.Normalize(context.Background(), c.in)
			if err != nil {
				t.Fatal(err)
			}
			if unknown {
				t.Error("GPU reported unknown")
			}
			if math.Abs(o.PriceUSDHour-c.hour) > 1e-9 || math.Abs(o.PriceUSDGPUHour-c.gpuHour) > 1e-9 || o.FXRate != c.fx {
				t.Errorf("got $%v/h, $%v/GPU-h, fx %v; want %v, %v, %v", o.PriceUSDHour, o.PriceUSDGPUHour, o.FXRate, c.hour, c.gpuHour, c.fx)
			}
			if o.GPU != "H100-SXM-80GB" || o.Tier != schemas.TierSpecialist {
				t.Errorf("gpu %q tier %q", o.GPU, o.Tier)
			}
			if !o.ObservedAt.Equal(t0.Truncate(time.Second)) || !o.EffectiveAt.Equal(o.ObservedAt) {
				t.Errorf("times not truncated to seconds: %v %v", o.ObservedAt, o.EffectiveAt)
			}
		})
	}
}

func TestNormalizeDefaults(t *testing.T) {
	n := testNormalizer()
	o, _, err := n.Normalize(context.Background(), raw(nil))
	if err != nil {
		t.Fatal(err)
	}
	if o.Interconnect != schemas.InterconnectInfiniband {
		t.Errorf("8-GPU lambda interconnect = %q, want the provider default infiniband", o.Interconnect)
	}
	one, _, err := n.Normalize(context.Background(), raw(func(o *schemas.Observation) { o.GPUCount = 1 }))
	if err != nil {
		t.Fatal(err)
	}
	if one.Interconnect != schemas.InterconnectUnknown {
		t.Errorf("single-GPU interconnect = %q, want unknown", one.Interconnect)
	}
	stated, _, _ := n.Normalize(context.Background(), raw(func(o *schemas.Observation) { o.Interconnect = schemas.InterconnectEthernet }))
	if stated.Interconnect != schemas.InterconnectEthernet {
		t.Errorf("stated interconnect overwritten: %q", stated.Interconnect)
	}
	spot := time.Date(2026, 10, 30, 8, 15, 0, 0, time.FixedZone("x", 3600))
	h, _, _ := n.Normalize(context.Background(), raw(func(o *schemas.Observation) { o.EffectiveAt = spot }))
	if !h.EffectiveAt.Equal(spot) || h.EffectiveAt.Location() != time.UTC {
		t.Errorf("effective_at = %v, want %v in UTC", h.EffectiveAt, spot)
	}
	u, unknown, err := n.Normalize(context.Background(), raw(func(o *schemas.Observation) { o.GPUName = "Quadro RTX 6000" }))
	if err != nil || !unknown || u.GPU != schemas.UnknownGPU || u.GPUName != "Quadro RTX 6000" {
		t.Errorf("unplaceable name: gpu %q unknown=%v err=%v name %q", u.GPU, unknown, err, u.GPUName)
	}
}

func TestNormalizeRejects(t *testing.T) {
	n := testNormalizer()
	cases := []struct {
		name, reason string
		mod          func(*schemas.Observation)
	}{
		{"placeholder", "placeholder: community on_demand $0.5 is a quarter", func(o *schemas.Observation) {
			o.PriceNative = 0
			o.Attrs = map[string]string{"price_text": "placeholder: community on_demand $0.5 is a quarter or less of secure $2.39"}
		}},
		{"contact sales", `no price published ("Contact sales")`, func(o *schemas.Observation) {
			o.PriceNative = 0
			o.Attrs = map[string]string{"price_text": "Contact sales"}
		}},
		{"negative", "non-positive price -1", func(o *schemas.Observation) { o.PriceNative = -1 }},
		{"NaN", "price is not a number", func(o *schemas.Observation) { o.PriceNative = math.NaN() }},
		{"too cheap", "outside the plausible range", func(o *schemas.Observation) { o.PriceNative = 0.001 }},
		{"absurd", "outside the plausible range", func(o *schemas.Observation) { o.PriceNative = 5000 }},
		{"unit", `unknown price unit "1/Day"`, func(o *schemas.Observation) { o.Unit = "1/Day" }},
		{"pricing", `unknown pricing kind "preemptible"`, func(o *schemas.Observation) { o.Pricing = "preemptible" }},
		{"term without term", "has no term", func(o *schemas.Observation) { o.Unit = schemas.UnitTerm }},
		{"no FX", "no FX rate for JPY", func(o *schemas.Observation) { o.Currency = "JPY" }},
		{"gpu count", "gpu_count 0 is not positive", func(o *schemas.Observation) { o.GPUCount = 0 }},
		{"sku", "missing sku", func(o *schemas.Observation) { o.SKU = "" }},
		{"currency", "missing currency", func(o *schemas.Observation) { o.Currency = "" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := n.Normalize(context.Background(), raw(c.mod))
			var rej *Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("err = %v, want a *Rejection", err)
			}
			if !strings.Contains(rej.Reason, c.reason) || rej.NotOffered {
				t.Errorf("reason %q (not offered %v) does not contain %q", rej.Reason, rej.NotOffered, c.reason)
			}
		})
	}
}

// TestNormalizeNotOffered: a price of 0 with no text, RunPod's null, a dash, "N/A" and
// a source's "not offered in …" are not offered (counted by the run, never
// quarantined); a text that is a price no one can read is not.
func TestNormalizeNotOffered(t *testing.T) {
	n := testNormalizer()
	for _, text := range []string{"", "null", "—", "N/A", " not  available ", "not offered in community cloud (communityCloud false; listed 0.5)"} {
		_, _, err := n.Normalize(context.Background(), raw(func(o *schemas.Observation) {
			o.PriceNative = 0
			o.Attrs = map[string]string{"price_text": text}
		}))
		var rej *Rejection
		if !errors.As(err, &rej) || !rej.NotOffered {
			t.Errorf("price 0 with text %q: %v, want not offered", text, err)
		}
	}
	for _, text := range []string{"Contact sales", "dph_total missing", "placeholder: x"} {
		_, _, err := n.Normalize(context.Background(), raw(func(o *schemas.Observation) {
			o.PriceNative = 0
			o.Attrs = map[string]string{"price_text": text}
		}))
		var rej *Rejection
		if !errors.As(err, &rej) || rej.NotOffered {
			t.Errorf("price 0 with text %q: %v, want quarantined", text, err)
		}
	}
}

func TestNormalizeUsesSeparateFormFactor(t *testing.T) {
	n := testNormalizer()
	n.GPUs = fakeGPUs{"NVIDIA H100 HGX": "H100-SXM-80GB"}
	o, unknown, err := n.Normalize(context.Background(), raw(func(o *schemas.Observation) {
		o.GPUName = "NVIDIA H100"
		o.Attrs = map[string]string{"form_factor": "HGX"}
	}))
	if err != nil || unknown || o.GPU != "H100-SXM-80GB" || o.GPUName != "NVIDIA H100" {
		t.Errorf("gpu %q (unknown=%v, err=%v), name %q", o.GPU, unknown, err, o.GPUName)
	}
}

func TestFXChainFallsBack(t *testing.T) {
	chain := FXChain{StaticFX{"EUR": 1.1}, StaticFX{"GBP": 1.3, "EUR": 9}}
	ctx := context.Background()
	if r, err := chain.Rate(ctx, "EUR", t0); err != nil || r != 1.1 {
		t.Errorf("EUR: %v %v, want the first answer 1.1", r, err)
	}
	if r, err := chain.Rate(ctx, "GBP", t0); err != nil || r != 1.3 {
		t.Errorf("GBP: %v %v, want the fallback 1.3", r, err)
	}
	if _, err := chain.Rate(ctx, "JPY", t0); !errors.Is(err, ErrNoRate) {
		t.Errorf("JPY: err %v, want ErrNoRate", err)
	}
	if _, err := (FXChain{}).Rate(ctx, "EUR", t0); !errors.Is(err, ErrNoRate) {
		t.Errorf("empty chain: err %v", err)
	}
}

func TestNormalizeScopeAndBasis(t *testing.T) {
	n := testNormalizer()
	cases := []struct {
		name         string
		in           schemas.Observation
		scope, basis string
	}{
		{"defaults", raw(nil), schemas.ScopeInstance, schemas.BasisListed},
		{"gpu only kept", raw(func(o *schemas.Observation) { o.PriceScope = schemas.ScopeGPUOnly }), schemas.ScopeGPUOnly, schemas.BasisListed},
		{"derived source", raw(func(o *schemas.Observation) { o.SourceKind = schemas.SourceDerived }), schemas.ScopeInstance, schemas.BasisDerived},
		{"from floor", raw(func(o *schemas.Observation) { o.Attrs = map[string]string{"price_qualifier": "from"} }), schemas.ScopeInstance, schemas.BasisFloor},
	}
	for _, c := range cases {
		o, _, err := n.Normalize(context.Background(), c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if o.PriceScope != c.scope || o.PriceBasis != c.basis {
			t.Errorf("%s: scope %q basis %q, want %q %q", c.name, o.PriceScope, o.PriceBasis, c.scope, c.basis)
		}
	}
	for _, bad := range []schemas.Observation{
		raw(func(o *schemas.Observation) { o.PriceScope = "vm" }),
		raw(func(o *schemas.Observation) { o.PriceBasis = "estimate" }),
	} {
		if _, _, err := n.Normalize(context.Background(), bad); err == nil {
			t.Errorf("scope %q basis %q accepted", bad.PriceScope, bad.PriceBasis)
		}
	}
}

// TestNormalizeNoFloatNoise: a source's own arithmetic (Vast's dph_total) is stored
// to 1e-9, so no output prints 0.16166666666666668.
func TestNormalizeNoFloatNoise(t *testing.T) {
	n := testNormalizer()
	o, _, err := n.Normalize(context.Background(), raw(func(o *schemas.Observation) {
		o.Unit, o.GPUCount, o.PriceNative = schemas.UnitHour, 1, 0.16166666666666668
	}))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{"price_native": o.PriceNative, "price_usd_hour": o.PriceUSDHour, "price_usd_gpu_hour": o.PriceUSDGPUHour} {
		if s := strconv.FormatFloat(v, 'f', -1, 64); s != "0.161666667" {
			t.Errorf("%s = %s, want 0.161666667", name, s)
		}
	}
	if s := schemas.FormatNum(0.1 + 0.2); s != "0.3" {
		t.Errorf("FormatNum(0.1+0.2) = %s", s)
	}
}

package storetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// RealisticEnd is the last day of RealisticHistory (its observations end on it).
var RealisticEnd = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// RealisticHistory is a SYNTHETIC market of two years (test data, never to be
// presented as prices) with what real histories have and clean generators lack:
//   - hyperscaler list prices observed daily but effective since long before the first
//     observation (carried-in bars), with a cut that takes effect on a date, and a
//     correction re-published with the same effective_at (a tie broken by observed_at);
//   - specialist on-demand and one-year prices that step, and stop being published;
//   - spot series that random-walk daily, with weeks-long gaps, and hourly for the last
//     week;
//   - marketplace offers that appear in several regions and are withdrawn after days or
//     weeks, a few of them coming back.
//
// It is deterministic: the same rows on every call.
func RealisticHistory() []schemas.Observation {
	rng := rand.New(rand.NewPCG(21, 2026))
	start := RealisticEnd.AddDate(-2, 0, 0)
	var out []schemas.Observation
	obs := func(provider, tier, sku, gpu, region, zone, pricing, ic string, count float64, at, eff time.Time,
		usdGPUHour float64) schemas.Observation {
		usdGPUHour = math.Round(usdGPUHour*1e4) / 1e4
		return schemas.Observation{
			ObservedAt: at, EffectiveAt: eff, Provider: provider, Tier: tier, SKU: sku, Region: region, Zone: zone,
			GPU: gpu, GPUName: gpu, GPUCount: count, GPUMemoryGB: memOf(gpu), Pricing: pricing,
			PriceUSDGPUHour: usdGPUHour, PriceUSDHour: usdGPUHour * count, PriceNative: usdGPUHour * count,
			Currency: "USD", Unit: schemas.UnitHour, FXRate: 1, Interconnect: ic,
			SourceKind: schemas.SourceImport, SourceURL: "synthetic://storetest.RealisticHistory", RunID: "realistic",
			PriceScope: schemas.ScopeInstance, PriceBasis: schemas.BasisListed,
		}
	}
	days := int(RealisticEnd.Sub(start).Hours()/24) + 1
	day := func(d int) time.Time { return start.AddDate(0, 0, d).Add(6 * time.Hour) }

	// Hyperscaler list prices: effective 2024-06-01, cut on 2025-09-01, and AWS's
	// cut corrected on 2025-09-20 under the same effective date.
	listed := []struct {
		provider, sku, gpu, region, ic string
		price, cut                     float64
	}{
		{"aws", "p5.48xlarge", "H100-SXM-80GB", "us-east-1", schemas.InterconnectEFA, 12.29, 7.57},
		{"aws", "p4de.24xlarge", "A100-SXM-80GB", "us-east-1", schemas.InterconnectEFA, 5.12, 3.43},
		{"azure", "Standard_ND96isr_H100_v5", "H100-SXM-80GB", "eastus", schemas.InterconnectInfiniband, 12.29, 12.29},
		{"azure", "Standard_ND96isr_H100_v5", "H100-SXM-80GB", "westeurope", schemas.InterconnectInfiniband, 13.52, 13.52},
		{"gcp", "a3-highgpu-8g", "H100-SXM-80GB", "us-central1", schemas.InterconnectRoCE, 11.06, 10.98},
	}
	firstEff := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	cutEff := time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)
	for _, l := range listed {
		for d := 0; d < days; d++ {
			at := day(d)
			price, eff := l.price, firstEff
			if !at.Before(cutEff) {
				price, eff = l.cut, cutEff
				if l.provider == "aws" && at.After(time.Date(2025, 9, 20, 0, 0, 0, 0, time.UTC)) {
					price = l.cut * 0.98 // corrected, same effective_at
				}
			}
			out = append(out, obs(l.provider, schemas.TierHyperscaler, l.sku, l.gpu, l.region, "", schemas.OnDemand,
				l.ic, 8, at, eff, price))
		}
	}

	// Specialists: on-demand steps and a one-year commitment; CoreWeave's A100
	// stops being published a year before the end (a withdrawn series).
	specialists := []struct {
		provider, sku, gpu, region, pricing string
		price                               float64
		until                               int
	}{
		{"lambda", "gpu_8x_h100_sxm5", "H100-SXM-80GB", "us-east-1", schemas.OnDemand, 3.29, days},
		{"lambda", "gpu_8x_a100_80gb_sxm4", "A100-SXM-80GB", "us-east-1", schemas.OnDemand, 1.79, days},
		{"coreweave", "h100-sxm-8", "H100-SXM-80GB", "US-EAST-04", schemas.OnDemand, 6.16, days},
		{"coreweave", "a100-sxm-8", "A100-SXM-80GB", "US-EAST-04", schemas.OnDemand, 2.70, days - 365},
		{"lambda", "gpu_8x_h100_sxm5", "H100-SXM-80GB", "us-east-1", schemas.Reserved1Y, 2.49, days},
	}
	for _, s := range specialists {
		price := s.price
		for d := 0; d < s.until; d++ {
			if d > 0 && d%120 == 0 {
				price *= 0.94 // a step down every four months
			}
			at := day(d)
			out = append(out, obs(s.provider, schemas.TierSpecialist, s.sku, s.gpu, s.region, "", s.pricing,
				schemas.InterconnectInfiniband, 8, at, at, price))
		}
	}

	// Spot: daily random walks with gaps, hourly for the last week.
	spots := []struct {
		provider, tier, sku, gpu, region, zone, ic string
		base                                       float64
		gapFrom, gapDays                           int
	}{
		{"aws", schemas.TierHyperscaler, "p5.48xlarge", "H100-SXM-80GB", "us-east-1", "us-east-1a",
			schemas.InterconnectEFA, 4.9, 200, 21},
		{"aws", schemas.TierHyperscaler, "p5.48xlarge", "H100-SXM-80GB", "us-east-1", "us-east-1b",
			schemas.InterconnectEFA, 5.3, 480, 9},
		{"gcp", schemas.TierHyperscaler, "a3-highgpu-8g", "H100-SXM-80GB", "us-central1", "us-central1-a",
			schemas.InterconnectRoCE, 3.9, 300, 30},
		{"runpod", schemas.TierMarketplace, "NVIDIA H100 80GB HBM3", "H100-SXM-80GB", "community", "",
			schemas.InterconnectEthernet, 2.1, 600, 14},
		{"runpod", schemas.TierMarketplace, "NVIDIA A100-SXM4-80GB", "A100-SXM-80GB", "community", "",
			schemas.InterconnectEthernet, 1.0, 100, 40},
	}
	hourlyFrom := RealisticEnd.AddDate(0, 0, -7)
	for _, s := range spots {
		count := 8.0
		if s.tier == schemas.TierMarketplace {
			count = 1
		}
		price := s.base
		for d := 0; d < days; d++ {
			price *= math.Exp(0.03*rng.NormFloat64() + 0.02*math.Log(s.base/price))
			if d >= s.gapFrom && d < s.gapFrom+s.gapDays {
				continue
			}
			at := day(d)
			if at.Before(hourlyFrom) {
				out = append(out, obs(s.provider, s.tier, s.sku, s.gpu, s.region, s.zone, schemas.Spot, s.ic, count,
					at, at, price))
				continue
			}
			for h := 0; h < 24; h++ {
				p := price * math.Exp(0.01*rng.NormFloat64())
				at := start.AddDate(0, 0, d).Add(time.Duration(h) * time.Hour)
				out = append(out, obs(s.provider, s.tier, s.sku, s.gpu, s.region, s.zone, schemas.Spot, s.ic, count,
					at, at, p))
			}
		}
	}

	// Marketplace offers (Vast-like): listed for 3 to 60 days in one of five
	// regions, then withdrawn; one in five comes back a month later.
	regions := []string{"US", "CA", "DE", "SE", "JP"}
	for i := 0; i < 60; i++ {
		gpu := []string{"H100-SXM-80GB", "A100-SXM-80GB", "L40S-PCIE-48GB"}[i%3]
		base := map[string]float64{"H100-SXM-80GB": 1.9, "A100-SXM-80GB": 0.9, "L40S-PCIE-48GB": 0.5}[gpu]
		first := rng.IntN(days - 10)
		life := 3 + rng.IntN(58)
		price := base * (0.8 + 0.4*rng.Float64())
		sku := fmt.Sprintf("offer-%03d", i)
		region := regions[i%len(regions)]
		spans := [][2]int{{first, first + life}}
		if i%5 == 0 {
			spans = append(spans, [2]int{first + life + 30, first + 2*life + 30})
		}
		for _, sp := range spans {
			for d := sp[0]; d < sp[1] && d < days; d++ {
				at := day(d)
				out = append(out, obs("vast", schemas.TierMarketplace, sku, gpu, region, "", schemas.OnDemand,
					schemas.InterconnectEthernet, 1, at, at, price))
			}
		}
	}
	return out
}

func memOf(gpu string) float64 {
	switch gpu {
	case "L40S-PCIE-48GB":
		return 48
	default:
		return 80
	}
}

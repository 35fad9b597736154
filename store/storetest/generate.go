package storetest

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// GenSpec describes a synthetic price history for benchmarks: Series series, each
// with one observation every Step for Steps steps from Start.
type GenSpec struct {
	Series int
	Steps  int
	Start  time.Time
	Step   time.Duration
	Seed   uint64
}

// genProviders are the generator's providers with their tier and interconnect.
var genProviders = []struct{ name, tier, ic string }{
	{"aws", schemas.TierHyperscaler, schemas.InterconnectEFA},
	{"azure", schemas.TierHyperscaler, schemas.InterconnectInfiniband},
	{"gcp", schemas.TierHyperscaler, schemas.InterconnectRoCE},
	{"lambda", schemas.TierSpecialist, schemas.InterconnectInfiniband},
	{"coreweave", schemas.TierSpecialist, schemas.InterconnectInfiniband},
	{"runpod", schemas.TierMarketplace, schemas.InterconnectEthernet},
	{"vast", schemas.TierMarketplace, schemas.InterconnectEthernet},
}

var genGPUs = []struct {
	id   string
	base float64
	mem  float64
}{{"H100-SXM-80GB", 3.2, 80}, {"A100-SXM-80GB", 1.6, 80}, {"B200-SXM-180GB", 9.0, 180}, {"L40S-PCIE-48GB", 1.1, 48}}

// Generate produces a realistic, deterministic history (SYNTHETIC, for benchmarks
// only, never to be presented as data): spot series follow a geometric random walk
// with mean reversion, on-demand and reserved series hold their price and change
// it in rare steps. Rows are handed to emit in batches of at most batch rows, time
// step by time step.
func Generate(spec GenSpec, batch int, emit func([]schemas.Observation) error) error {
	if spec.Series <= 0 || spec.Steps <= 0 || spec.Step <= 0 || batch <= 0 {
		return fmt.Errorf("storetest: generate: bad spec %+v, batch %d", spec, batch)
	}
	rng := rand.New(rand.NewPCG(spec.Seed, spec.Seed^0x9e3779b97f4a7c15))
	type series struct {
		o     schemas.Observation
		base  float64
		price float64
		spot  bool
	}
	ss := make([]series, spec.Series)
	pricings := []string{schemas.Spot, schemas.Spot, schemas.OnDemand, schemas.Reserved1Y}
	for i := range ss {
		p := genProviders[i%len(genProviders)]
		g := genGPUs[(i/len(genProviders))%len(genGPUs)]
		pr := pricings[(i/(len(genProviders)*len(genGPUs)))%len(pricings)]
		tierMul := map[string]float64{schemas.TierHyperscaler: 1.35, schemas.TierSpecialist: 0.85,
			schemas.TierMarketplace: 0.75}[p.tier]
		prMul := map[string]float64{schemas.Spot: 0.6, schemas.OnDemand: 1, schemas.Reserved1Y: 0.7}[pr]
		base := g.base * tierMul * prMul * (0.9 + 0.2*rng.Float64())
		ss[i] = series{o: schemas.Observation{
			Provider: p.name, Tier: p.tier, SKU: fmt.Sprintf("%s-sku-%d", g.id, i), Region: fmt.Sprintf("region-%d", i%17),
			Zone: fmt.Sprintf("zone-%c", 'a'+rune(i%3)), GPU: g.id, GPUName: g.id, GPUCount: 8, GPUMemoryGB: g.mem,
			Pricing: pr, Currency: "USD", Unit: schemas.UnitHour, FXRate: 1, Interconnect: p.ic,
			SourceKind: schemas.SourceImport, SourceURL: "synthetic://storetest.Generate", RunID: "bench",
			PriceScope: schemas.ScopeInstance, PriceBasis: schemas.BasisListed,
		}, base: base, price: base, spot: pr == schemas.Spot}
	}
	buf := make([]schemas.Observation, 0, batch)
	for step := 0; step < spec.Steps; step++ {
		at := spec.Start.Add(time.Duration(step) * spec.Step)
		for i := range ss {
			s := &ss[i]
			if s.spot {
				// log-price random walk, pulled back towards the base
				s.price *= math.Exp(0.01*rng.NormFloat64() + 0.002*math.Log(s.base/s.price))
			} else if rng.Float64() < 0.0005 {
				s.price *= 1 + 0.05*(rng.Float64()-0.6) // rare step changes, mostly down
			}
			o := s.o
			o.ObservedAt, o.EffectiveAt = at, at
			o.PriceUSDGPUHour = math.Round(s.price*1e4) / 1e4
			o.PriceUSDHour = o.PriceUSDGPUHour * 8
			o.PriceNative = o.PriceUSDHour
			buf = append(buf, o)
			if len(buf) == batch {
				if err := emit(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	if len(buf) > 0 {
		return emit(buf)
	}
	return nil
}

// CSVHeader is the header GenerateCSV writes: the columns of `gpuprice prices
// --format csv`, which `gpuprice import csv` reads back.
var CSVHeader = []string{
	"observed_at", "provider", "tier", "sku", "gpu", "gpu_count", "region", "zone", "pricing",
	"price_usd_hour", "price_usd_gpu_hour", "source_kind",
	"effective_at", "gpu_name", "gpu_memory_gb", "currency", "price_native", "unit", "fx_rate",
	"interconnect", "source_url", "price_scope", "price_basis", "origin",
}

// genNames are the device names marketplaces publish (nvidia-smi's), per catalog id:
// the rows of marketplace series carry one with an empty gpu column, so an import
// places them through the canonicaliser, as it does real marketplace exports.
var genNames = map[string]string{
	"H100-SXM-80GB":  "NVIDIA H100 80GB HBM3",
	"A100-SXM-80GB":  "NVIDIA A100-SXM4-80GB",
	"B200-SXM-180GB": "NVIDIA B200",
	"L40S-PCIE-48GB": "NVIDIA L40S",
}

// GenerateCSV writes the history Generate makes (SYNTHETIC, for benchmarks only) as
// a CSV with CSVHeader, the shape `prices --format csv` exports: RFC 3339 times,
// marketplace rows with a device name and no gpu id (placed by the canonicaliser on
// import). It returns the rows written.
func GenerateCSV(w io.Writer, spec GenSpec) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return 0, err
	}
	n := 0
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	rec := make([]string, len(CSVHeader))
	err := Generate(spec, 10_000, func(obs []schemas.Observation) error {
		for _, o := range obs {
			gpu, name := o.GPU, o.GPUName
			if o.Tier == schemas.TierMarketplace {
				gpu, name = "", genNames[o.GPU]
			}
			at := o.ObservedAt.UTC().Format(time.RFC3339)
			rec = append(rec[:0], at, o.Provider, o.Tier, o.SKU, gpu, f(o.GPUCount), o.Region, o.Zone, o.Pricing,
				f(o.PriceUSDHour), f(o.PriceUSDGPUHour), o.SourceKind, at, name, f(o.GPUMemoryGB),
				o.Currency, f(o.PriceNative), o.Unit, f(o.FXRate), o.Interconnect, o.SourceURL,
				schemas.ScopeInstance, schemas.BasisListed, schemas.OriginLive)
			if err := cw.Write(rec); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	cw.Flush()
	return n, cw.Error()
}

package analytics

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// MFUBand is a published range of model FLOP utilisation for a configuration.
type MFUBand struct {
	GPUs          []string // canonical GPU ids it applies to
	Provider      string   // "" for any provider
	Interconnects []string // nil for any interconnect
	Low, High     float64  // fractions, e.g. 0.48 and 0.58
	Estimate      bool     // the source calls it an estimate
	Source        string
}

// Mid is the band's midpoint, the default MFU.
func (b MFUBand) Mid() float64 { return (b.Low + b.High) / 2 }

// String is e.g. "48–58 % (H100 SXM, InfiniBand HDR, 8-GPU nodes)".
func (b MFUBand) String() string {
	return fmt.Sprintf("%g–%g %%", math.Round(b.Low*100), math.Round(b.High*100))
}

const marketGuides = "2026 public GPU-cloud market guides, model FLOP utilisation bands for H100-era training (summarised in the project's MARKET.md)"

var (
	rdma  = []string{schemas.InterconnectInfiniband, schemas.InterconnectEFA, schemas.InterconnectRoCE}
	h100  = []string{"H100-SXM-80GB"}
	a100  = []string{"A100-SXM-80GB", "A100-SXM-40GB"}
	b200  = []string{"B200-SXM-180GB"}
	gb200 = []string{"GB200-SUPERCHIP-186GB"}
)

// MFUBands is the table MFUFor consults, most specific first: the per-provider
// H100 bands, then the bands by configuration. Changing it changes the default MFU
// of `gpuprice tokens`; keep the sources.
var MFUBands = []MFUBand{
	{GPUs: h100, Provider: "coreweave", Low: 0.50, High: 0.58, Source: marketGuides + ": per provider (H100), CoreWeave"},
	{GPUs: h100, Provider: "lambda", Low: 0.46, High: 0.54, Source: marketGuides + ": per provider (H100), Lambda"},
	{GPUs: h100, Provider: "aws", Low: 0.48, High: 0.56, Source: marketGuides + ": per provider (H100), AWS p5"},
	{GPUs: h100, Provider: "gcp", Low: 0.46, High: 0.54, Source: marketGuides + ": per provider (H100), GCP A3 Mega"},
	{GPUs: h100, Provider: "azure", Low: 0.46, High: 0.54, Source: marketGuides + ": per provider (H100), Azure ND"},
	{GPUs: h100, Provider: "gmi", Low: 0.46, High: 0.54, Source: marketGuides + ": per provider (H100), GMI"},
	{GPUs: h100, Provider: "oci", Low: 0.44, High: 0.52, Source: marketGuides + ": per provider (H100), OCI"},
	{GPUs: h100, Provider: "ovhcloud", Low: 0.40, High: 0.48, Source: marketGuides + ": per provider (H100), OVHcloud"},
	{GPUs: h100, Provider: "runpod", Low: 0.38, High: 0.46, Source: marketGuides + ": per provider (H100), RunPod"},
	{GPUs: h100, Provider: "vast", Low: 0.28, High: 0.45, Source: marketGuides + ": per provider (H100), Vast.ai"},
	{GPUs: h100, Interconnects: rdma, Low: 0.48, High: 0.58, Source: marketGuides + ": H100 SXM, InfiniBand HDR, 8-GPU nodes"},
	{GPUs: h100, Interconnects: []string{schemas.InterconnectNVLinkOnly, schemas.InterconnectEthernet, schemas.InterconnectUnknown, ""},
		Low: 0.38, High: 0.48, Source: marketGuides + ": H100 SXM, NVLink only, no InfiniBand"},
	{GPUs: []string{"H100-PCIE-80GB"}, Low: 0.28, High: 0.38, Source: marketGuides + ": H100 PCIe, Ethernet"},
	{GPUs: a100, Interconnects: rdma, Low: 0.42, High: 0.52, Source: marketGuides + ": A100 SXM 80GB, InfiniBand"},
	{GPUs: b200, Interconnects: rdma, Low: 0.52, High: 0.62, Estimate: true, Source: marketGuides + ": B200, InfiniBand NDR (estimate)"},
	{GPUs: gb200, Low: 0.58, High: 0.68, Estimate: true, Source: marketGuides + ": GB200 NVL72, NVLink fabric (estimate)"},
}

// ErrNoMFUBand means no published band covers an offering; the user must pass an MFU.
var ErrNoMFUBand = errors.New("analytics: no published MFU band")

// MFUFor returns the band for a GPU sold by a provider over an interconnect.
func MFUFor(gpu, provider, interconnect string) (MFUBand, error) {
	for _, b := range MFUBands {
		if !contains(b.GPUs, gpu) || (b.Provider != "" && b.Provider != provider) {
			continue
		}
		if b.Interconnects != nil && !contains(b.Interconnects, interconnect) {
			continue
		}
		return b, nil
	}
	return MFUBand{}, fmt.Errorf("%w for %s at %s over %q: pass --mfu", ErrNoMFUBand, gpu, provider, interconnect)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Precisions of a training run.
const (
	BF16 = "bf16"
	FP8  = "fp8"
)

// PeakTFLOPS returns the dense peak a run at precision divides by: the GPU's
// PeakDenseTFLOPS for bf16, DenseFP8TFLOPS for fp8 (an error when it has none).
func PeakTFLOPS(g schemas.GPU, precision string) (float64, error) {
	switch strings.ToLower(precision) {
	case BF16, "":
		if p := g.PeakDenseTFLOPS(); p > 0 {
			return p, nil
		}
		return 0, fmt.Errorf("analytics: %s has no dense BF16/FP16 figure in the catalog", g.ID)
	case FP8:
		if g.DenseFP8TFLOPS > 0 {
			return g.DenseFP8TFLOPS, nil
		}
		return 0, fmt.Errorf("analytics: %s has no FP8 (no dense FP8 figure in the catalog)", g.ID)
	}
	return 0, fmt.Errorf("analytics: precision %q: use bf16 or fp8", precision)
}

// TokenCost is the effective cost of training on one offering.
type TokenCost struct {
	PriceUSDGPUHour  float64 `json:"price_usd_gpu_hour"`
	Params           float64 `json:"params"`
	PeakTFLOPS       float64 `json:"peak_tflops"`
	MFU              float64 `json:"mfu"`
	TokensPerGPUHour float64 `json:"tokens_per_gpu_hour"`
	USDPer1BTokens   float64 `json:"usd_per_1b_tokens"`
	Tokens           float64 `json:"tokens,omitempty"`
	GPUHours         float64 `json:"gpu_hours,omitempty"`
	RunUSD           float64 `json:"run_usd,omitempty"`
}

// Tokens computes the project's definition:
//
//	tokens per GPU-hour = peak_dense_flops × MFU × 3600 / (6 × params)
//	$ per 1B tokens     = price_usd_gpu_hour × 1e9 × 6 × params / (peak_dense_flops × MFU × 3600)
//	GPU-hours of a run  = tokens / tokens per GPU-hour; its cost = GPU-hours × price
//
// peakTFLOPS is in TFLOPS (1e12 FLOP/s). tokens may be 0 (no run totals).
func Tokens(priceUSDGPUHour, params, peakTFLOPS, mfu, tokens float64) (TokenCost, error) {
	switch {
	case !(params > 0):
		return TokenCost{}, fmt.Errorf("analytics: params %v: must be positive", params)
	case !(peakTFLOPS > 0):
		return TokenCost{}, fmt.Errorf("analytics: peak TFLOPS %v: must be positive", peakTFLOPS)
	case !(mfu > 0 && mfu <= 1):
		return TokenCost{}, fmt.Errorf("analytics: MFU %v: must be in (0, 1]", mfu)
	case priceUSDGPUHour < 0 || math.IsNaN(priceUSDGPUHour):
		return TokenCost{}, fmt.Errorf("analytics: price %v: must not be negative", priceUSDGPUHour)
	case tokens < 0 || math.IsNaN(tokens):
		return TokenCost{}, fmt.Errorf("analytics: tokens %v: must not be negative", tokens)
	}
	c := TokenCost{PriceUSDGPUHour: priceUSDGPUHour, Params: params, PeakTFLOPS: peakTFLOPS, MFU: mfu, Tokens: tokens}
	c.TokensPerGPUHour = peakTFLOPS * 1e12 * mfu * 3600 / (6 * params)
	c.USDPer1BTokens = priceUSDGPUHour * 1e9 * 6 * params / (peakTFLOPS * 1e12 * mfu * 3600)
	if tokens > 0 {
		c.GPUHours = tokens / c.TokensPerGPUHour
		c.RunUSD = c.GPUHours * priceUSDGPUHour
	}
	return c, nil
}

// Explain writes the formula with c's numbers filled in.
func (c TokenCost) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "FLOPs per token        = 6 × params = 6 × %g = %.4g\n", c.Params, 6*c.Params)
	fmt.Fprintf(&b, "tokens per GPU-hour    = peak × MFU × 3600 / (6 × params)\n")
	fmt.Fprintf(&b, "                       = %g TFLOPS × 1e12 × %g × 3600 / %.4g = %.0f\n",
		c.PeakTFLOPS, c.MFU, 6*c.Params, c.TokensPerGPUHour)
	fmt.Fprintf(&b, "$ per 1B tokens        = $/GPU-h × 1e9 / tokens per GPU-hour\n")
	fmt.Fprintf(&b, "                       = %g × 1e9 / %.0f = $%.4f\n", c.PriceUSDGPUHour, c.TokensPerGPUHour, c.USDPer1BTokens)
	if c.Tokens > 0 {
		fmt.Fprintf(&b, "GPU-hours for the run  = %.4g tokens / %.0f = %.2f\n", c.Tokens, c.TokensPerGPUHour, c.GPUHours)
		fmt.Fprintf(&b, "cost of the run        = %.2f GPU-h × $%g = $%.2f\n", c.GPUHours, c.PriceUSDGPUHour, c.RunUSD)
	}
	return b.String()
}

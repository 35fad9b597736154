package analytics

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// MFU classes: what physically limits model FLOP utilisation (docs/analytics.md,
// "MFU"). A provider's published interconnect and the GPU's form factor pick the
// class; the provider's brand never does.
const (
	// MFUMultiNodeRDMA: NVLink (or Infinity Fabric) inside a node, InfiniBand, RoCE
	// or EFA between nodes: large runs that shard across nodes.
	MFUMultiNodeRDMA = "multi-node-rdma"
	// MFUSingleNodeNVLink: NVLink-connected GPUs with no RDMA fabric between nodes:
	// a run must fit in one node.
	MFUSingleNodeNVLink = "single-node-nvlink"
	// MFUPCIe: data-centre and workstation PCIe cards without NVLink: gradients
	// cross PCIe.
	MFUPCIe = "pcie-no-nvlink"
	// MFUConsumer: GeForce cards as marketplaces rent them (FP32 accumulate at half
	// rate, PCIe, consumer hosts).
	MFUConsumer = "marketplace-consumer"
	// MFUMultiNodeNoRDMA: a job that crosses nodes of NVLink-class GPUs over an
	// interconnect with no stated RDMA fabric (Ethernet, or none stated).
	MFUMultiNodeNoRDMA = "multi-node-no-rdma"
	// MFUUnstated: the provider does not state the form factor (schemas.FormUnstated),
	// so what limits MFU is unknown: no band, the user passes --mfu.
	MFUUnstated = "form-factor-unstated"
)

// MFUSource is one public measurement behind a band.
type MFUSource struct {
	Cite    string  `json:"cite"`
	Figure  string  `json:"figure"`
	MFU     float64 `json:"mfu"` // the measured fraction, 0 when the source gives a range only
	Setting string  `json:"setting"`
}

// MFUBand is the range of model FLOP utilisation of one class, from public
// measurements. A class without a public measurement has Low = High = 0 and
// NoBand saying so: its offerings need --mfu.
type MFUBand struct {
	Class     string      `json:"class"`
	Limit     string      `json:"limit"` // what bounds MFU in this class
	Low, High float64     `json:"-"`
	Sources   []MFUSource `json:"sources"`
	NoBand    string      `json:"no_band,omitempty"`
}

// Mid is the band's midpoint, the default MFU, to 4 decimals (no float noise).
func (b MFUBand) Mid() float64 { return Round((b.Low+b.High)/2, 4) }

// String is e.g. "38–55.2 % (multi-node-rdma)".
func (b MFUBand) String() string {
	if b.NoBand != "" {
		return "no published band (" + b.Class + ")"
	}
	return fmt.Sprintf("%s–%s %% (%s)", FormatNumber(b.Low*100, 1), FormatNumber(b.High*100, 1), b.Class)
}

// Sources of the bands.
var (
	srcLlama3 = MFUSource{
		Cite: "Llama Team, AI @ Meta, \"The Llama 3 Herd of Models\", arXiv:2407.21783 (2024), §3.3.2 and Table 4",
		Figure: "BF16 MFU 38–43 % training Llama 3 405B on 8,192–16,384 H100 GPUs (NVLink in 8-GPU nodes, RoCE and " +
			"InfiniBand between them)",
		Setting: "16K H100 SXM, multi-node RDMA", MFU: 0.38,
	}
	srcMegaScale = MFUSource{
		Cite: "Jiang et al., \"MegaScale: Scaling Large Language Model Training to More Than 10,000 GPUs\", NSDI 2024, " +
			"arXiv:2402.15627, Abstract and Table 2",
		Figure:  "55.2 % MFU training a 175B model on 12,288 GPUs",
		Setting: "12,288 GPUs, NVLink nodes, RDMA fabric", MFU: 0.552,
	}
	srcMegatron = MFUSource{
		Cite: "Narayanan et al., \"Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM\", " +
			"SC21, arXiv:2104.04473, Table 1",
		Figure: "44 % of theoretical peak (137 TFLOP/s per A100) for the smallest (1.7B) configuration; 52 % at 1T on " +
			"3,072 A100s",
		Setting: "A100 SXM, NVLink nodes", MFU: 0.44,
	}
	srcFlashAttn2 = MFUSource{
		Cite: "Dao, \"FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning\", " +
			"arXiv:2307.08691 (2023), §4.2",
		Figure: "end-to-end GPT-style training at up to 225 TFLOP/s per A100, 72 % model FLOPs utilisation, on one 8×A100 " +
			"80GB SXM node",
		Setting: "8×A100 SXM, single NVLink node", MFU: 0.72,
	}
	srcMLPerf = MFUSource{
		Cite:    "MLCommons MLPerf Training results (mlcommons.org/benchmarks/training)",
		Figure:  "time-to-train only; MFU is not reported, and no PCIe-only or GeForce submission states one",
		Setting: "context",
	}
)

// MFUBands is the band of every class. Changing it changes the default MFU of
// `gpuprice tokens`; keep the sources.
var MFUBands = []MFUBand{
	{Class: MFUMultiNodeRDMA,
		Limit: "collectives across nodes over InfiniBand/RoCE/EFA; stragglers and pipeline bubbles at scale",
		Low:   srcLlama3.MFU, High: srcMegaScale.MFU, Sources: []MFUSource{srcLlama3, srcMegaScale}},
	{Class: MFUSingleNodeNVLink,
		Limit: "kernel efficiency and NVLink collectives inside one node; the model must fit the node",
		Low:   srcMegatron.MFU, High: srcFlashAttn2.MFU, Sources: []MFUSource{srcMegatron, srcFlashAttn2}},
	{Class: MFUMultiNodeNoRDMA, Limit: "collectives across nodes over a network with no stated RDMA fabric",
		Sources: []MFUSource{srcMLPerf},
		NoBand: "no public MFU measurement of LLM training across nodes without InfiniBand, RoCE or EFA was found; pass " +
			"--mfu"},
	{Class: MFUPCIe, Limit: "gradient all-reduce over PCIe (tens of GB/s against hundreds over NVLink)",
		Sources: []MFUSource{srcMLPerf},
		NoBand:  "no public MFU measurement of LLM training on PCIe cards without NVLink was found; pass --mfu"},
	{Class: MFUConsumer,
		Limit: "GeForce tensor cores accumulate FP32 at half rate (the catalog's figure already is the FP32-accumulate " +
			"one), PCIe, consumer hosts",
		Sources: []MFUSource{srcMLPerf},
		NoBand:  "no public MFU measurement of LLM training on marketplace GeForce cards was found; pass --mfu"},
}

// ErrNoMFUBand means no published band covers an offering; the user must pass an MFU.
var ErrNoMFUBand = errors.New("analytics: no published MFU band")

// MFUClassOf is the class of a GPU reached over an interconnect: NVLink-class
// parts (SXM, OAM, Superchip, NVL) are multi-node when the offering's interconnect
// is InfiniBand, RoCE or EFA and single-node otherwise; PCIe cards are consumer
// (GeForce RTX 30/40/50) or PCIe.
func MFUClassOf(g schemas.GPU, interconnect string) string {
	switch g.FormFactor {
	case schemas.FormUnstated:
		return MFUUnstated
	case schemas.FormSXM, schemas.FormOAM, schemas.FormSuperchip, schemas.FormNVL:
		switch interconnect {
		case schemas.InterconnectInfiniband, schemas.InterconnectRoCE, schemas.InterconnectEFA:
			return MFUMultiNodeRDMA
		}
		return MFUSingleNodeNVLink
	}
	if consumer(g.Model) {
		return MFUConsumer
	}
	return MFUPCIe
}

// consumer reports a GeForce model: "RTX 3090", "RTX 4090", "RTX 5080"…
func consumer(model string) bool {
	m, ok := strings.CutPrefix(model, "RTX ")
	return ok && len(m) == 4 && (m[0] == '3' || m[0] == '4' || m[0] == '5') && strings.Trim(m, "0123456789") == ""
}

// Job is the shape of a training job: how many GPUs on how many nodes. Nodes 0 is
// one node unless the GPUs do not fit one instance of the offer.
type Job struct {
	GPUs  int `json:"gpus"`
	Nodes int `json:"nodes"`
}

// CrossesNodes reports whether the job spans more than one instance of an offer
// with perInstance GPUs: more than one node asked for, or more GPUs than one
// instance has.
func (j Job) CrossesNodes(perInstance float64) bool {
	return j.Nodes > 1 || (perInstance > 0 && float64(j.GPUs) > perInstance)
}

// MFUForJob returns the band of a job on an offer of GPU g with the offer's
// interconnect and GPUs per instance, and why that band: the interconnect between
// nodes matters only when the job crosses nodes. A job inside one node of
// NVLink-class GPUs is single-node NVLink whatever the fabric between nodes.
func MFUForJob(g schemas.GPU, interconnect string, perInstance float64, j Job) (MFUBand, string, error) {
	class, why := MFUClassOf(g, interconnect), ""
	nvlink := class == MFUMultiNodeRDMA || class == MFUSingleNodeNVLink
	switch {
	case nvlink && !j.CrossesNodes(perInstance):
		class = MFUSingleNodeNVLink
		why = fmt.Sprintf(
			"the job (%s) fits one %s-GPU node: NVLink inside it, the interconnect between nodes (%s) is not used",
			j.String(), FormatNumber(perInstance, 0), cmpOr(interconnect, "none stated"))
	case nvlink && class == MFUSingleNodeNVLink:
		class = MFUMultiNodeNoRDMA
		why = fmt.Sprintf("the job (%s) crosses %s-GPU nodes over %s: no RDMA fabric stated",
			j.String(), FormatNumber(perInstance, 0), cmpOr(interconnect, "an unstated interconnect"))
	case nvlink:
		why = fmt.Sprintf("the job (%s) crosses %s-GPU nodes over %s", j.String(), FormatNumber(perInstance, 0), interconnect)
	default:
		why = fmt.Sprintf("%s (%s form factor): the class does not depend on the job's shape", g.ID, g.FormFactor)
	}
	b, err := bandOf(g, interconnect, class)
	return b, why, err
}

// String is e.g. "8 GPU(s) on 1 node(s)", "one node" when neither was given.
func (j Job) String() string {
	if j.GPUs == 0 && j.Nodes == 0 {
		return "one node, the default"
	}
	if j.GPUs == 0 {
		return fmt.Sprintf("%d node(s)", j.Nodes)
	}
	return fmt.Sprintf("%d GPU(s) on %d node(s)", j.GPUs, max(j.Nodes, 1))
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// MFUFor returns the band of a GPU reached over an interconnect (the
// observation's own), or ErrNoMFUBand with the reason.
func MFUFor(g schemas.GPU, interconnect string) (MFUBand, error) {
	return bandOf(g, interconnect, MFUClassOf(g, interconnect))
}

func bandOf(g schemas.GPU, interconnect, class string) (MFUBand, error) {
	for _, b := range MFUBands {
		if b.Class != class {
			continue
		}
		if b.NoBand != "" {
			return b, fmt.Errorf("%w for %s over %q (%s): %s", ErrNoMFUBand, g.ID, interconnect, class, b.NoBand)
		}
		return b, nil
	}
	return MFUBand{Class: class}, fmt.Errorf("%w for %s over %q: pass --mfu", ErrNoMFUBand, g.ID, interconnect)
}

// ExplainBands writes every class with its band and sources, for tokens --explain.
func ExplainBands() string {
	var b strings.Builder
	b.WriteString(
		"MFU bands, by what physically limits MFU (a provider's published interconnect and the GPU's form factor pick the " +
			"class):\n")
	for _, band := range MFUBands {
		if band.NoBand != "" {
			fmt.Fprintf(&b, "  %-21s no band: %s\n", band.Class, band.NoBand)
		} else {
			fmt.Fprintf(&b, "  %-21s %s–%s %%, midpoint %s\n", band.Class, FormatNumber(band.Low*100, 1),
				FormatNumber(band.High*100, 1), FormatNumber(band.Mid(), 4))
		}
		fmt.Fprintf(&b, "  %-21s limit: %s\n", "", band.Limit)
		for _, s := range band.Sources {
			fmt.Fprintf(&b, "  %-21s - %s: %s\n", "", s.Cite, s.Figure)
		}
	}
	return b.String()
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
		if g.NoDenseFigure != "" {
			return 0, fmt.Errorf("analytics: %s: no dense BF16/FP16 figure is known (%s)", g.ID, g.NoDenseFigure)
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
	// What is printed and serialised carries no binary noise.
	c.TokensPerGPUHour = Round(c.TokensPerGPUHour, 3)
	c.USDPer1BTokens = Round(c.USDPer1BTokens, 6)
	c.GPUHours, c.RunUSD = Round(c.GPUHours, 6), Round(c.RunUSD, 6)
	c.MFU = Round(c.MFU, 6)
	return c, nil
}

// Explain writes the formula with c's numbers filled in.
func (c TokenCost) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "FLOPs per token        = 6 × params = 6 × %g = %.4g\n", c.Params, 6*c.Params)
	fmt.Fprintf(&b, "tokens per GPU-hour    = peak × MFU × 3600 / (6 × params)\n")
	fmt.Fprintf(&b, "                       = %s TFLOPS × 1e12 × %s × 3600 / %.4g = %.0f\n",
		FormatNumber(c.PeakTFLOPS, 4), FormatNumber(c.MFU, 4), 6*c.Params, c.TokensPerGPUHour)
	fmt.Fprintf(&b, "$ per 1B tokens        = $/GPU-h × 1e9 / tokens per GPU-hour\n")
	fmt.Fprintf(&b, "                       = %s × 1e9 / %.0f = $%.4f\n", FormatNumber(c.PriceUSDGPUHour, 6),
		c.TokensPerGPUHour, c.USDPer1BTokens)
	if c.Tokens > 0 {
		fmt.Fprintf(&b, "GPU-hours for the run  = %.4g tokens / %.0f = %.2f\n", c.Tokens, c.TokensPerGPUHour, c.GPUHours)
		fmt.Fprintf(&b, "cost of the run        = %.2f GPU-h × $%s = $%.2f\n", c.GPUHours, FormatNumber(c.PriceUSDGPUHour, 6),
			c.RunUSD)
	}
	return b.String()
}

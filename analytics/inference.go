package analytics

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// Inference precisions: the bytes each weight takes (docs/analytics.md, "Inference").
const (
	FP16 = "fp16"
	INT4 = "int4"
)

// BytesPerParam is the bytes one weight takes at a precision: fp16/bf16 2, fp8 1,
// int4 0.5.
func BytesPerParam(precision string) (float64, error) {
	switch strings.ToLower(precision) {
	case FP16, BF16:
		return 2, nil
	case FP8:
		return 1, nil
	case INT4:
		return 0.5, nil
	}
	return 0, fmt.Errorf("analytics: precision %q: use fp16, bf16, fp8 or int4", precision)
}

// Efficiency is a band of the share of a GPU's peak that inference reaches, from
// public measurements.
type Efficiency struct {
	What      string      `json:"what"`
	Low, High float64     `json:"-"`
	Sources   []MFUSource `json:"sources"`
}

// Mid is the band's midpoint, the default efficiency, to 4 decimals.
func (e Efficiency) Mid() float64 { return Round((e.Low+e.High)/2, 4) }

// String is e.g. "58.3–73.3 % of peak memory bandwidth".
func (e Efficiency) String() string {
	return fmt.Sprintf("%s–%s %% %s", FormatNumber(e.Low*100, 1), FormatNumber(e.High*100, 1), e.What)
}

// lmdeployCite is the public measurement both bands come from.
const lmdeployCite = "InternLM/lmdeploy, docs/en/benchmark/a100_fp16.md (lmdeploy v0.1.0a1, TurboMind, 8× A100-80G, " +
	"CUDA 11.8), \"Static Inference Benchmark\", batch 1"

// DecodeEfficiency is the band of achieved over peak memory bandwidth in decode
// (model bandwidth utilisation): measured out tok/s × weight bytes ÷ (GPUs × peak
// bandwidth), A100 80GB SXM at 2.039 TB/s, fp16 weights, batch 1, 1 prompt token,
// 128 output tokens (KV cache negligible).
var DecodeEfficiency = Efficiency{
	What: "of peak memory bandwidth (decode)",
	Low:  0.583, High: 0.733,
	Sources: []MFUSource{
		{Cite: lmdeployCite, Setting: "llama2-70b, TP 4", MFU: 0.583,
			Figure: "33.94 out tok/s × 140 GB ÷ (4 × 2.039 TB/s) = 58.3 %"},
		{Cite: lmdeployCite, Setting: "llama2-7b, TP 1", MFU: 0.687,
			Figure: "100.02 out tok/s × 14 GB ÷ 2.039 TB/s = 68.7 %"},
		{Cite: lmdeployCite, Setting: "llama2-13b, TP 1", MFU: 0.733,
			Figure: "57.49 out tok/s × 26 GB ÷ 2.039 TB/s = 73.3 %"},
	},
}

// PrefillEfficiency is the band of achieved over dense peak FLOP/s in prefill:
// 2 × params × prompt tokens ÷ first-token latency ÷ (GPUs × 312 TFLOPS), the
// same runs with a 2,048-token prompt (attention FLOPs not counted).
var PrefillEfficiency = Efficiency{
	What: "of dense peak FLOP/s (prefill)",
	Low:  0.571, High: 0.705,
	Sources: []MFUSource{
		{Cite: lmdeployCite, Setting: "llama2-70b, TP 4", MFU: 0.571,
			Figure: "2 × 70e9 × 2048 ÷ 0.402 s ÷ (4 × 312 TFLOPS) = 57.1 %"},
		{Cite: lmdeployCite, Setting: "llama2-7b, TP 1", MFU: 0.661,
			Figure: "2 × 7e9 × 2048 ÷ 0.139 s ÷ 312 TFLOPS = 66.1 %"},
		{Cite: lmdeployCite, Setting: "llama2-13b, TP 1", MFU: 0.705,
			Figure: "2 × 13e9 × 2048 ÷ 0.242 s ÷ 312 TFLOPS = 70.5 %"},
	},
}

// Model is a model to serve: its parameters, the precision of its weights, and the
// KV cache read per decode step (Batch sequences of Context tokens, each token
// KVBytesPerToken: 2 × layers × KV heads × head dimension × bytes per element).
type Model struct {
	Params          float64 `json:"params"`
	Precision       string  `json:"precision"`
	Batch           int     `json:"batch"`
	Context         int     `json:"context"`
	KVBytesPerToken float64 `json:"kv_bytes_per_token"`
}

// KVBytesPerToken is the KV cache of one token: 2 (K and V) × layers × KV heads ×
// head dimension × bytes per element.
func KVBytesPerToken(layers, kvHeads, headDim int, bytesPerElement float64) float64 {
	return 2 * float64(layers) * float64(kvHeads) * float64(headDim) * bytesPerElement
}

// ErrNoFit means the model does not fit the GPUs of one instance of an offer.
var ErrNoFit = errors.New("analytics: the model does not fit the offer's GPUs")

// ServeCost is the cost of serving a model on one offer.
type ServeCost struct {
	Model Model `json:"model"`
	// GPUs is how many of the instance's GPUs serve one copy of the model: 1 when
	// weights and KV cache fit one GPU's memory, else the fewest (a power of two,
	// for tensor parallelism) that hold them; TPNote says why.
	GPUs         int     `json:"gpus"`
	TPNote       string  `json:"tp_note"`
	WeightsGB    float64 `json:"weights_gb"`
	KVCacheGB    float64 `json:"kv_cache_gb"`
	BandwidthTBs float64 `json:"bandwidth_tbs"` // per GPU, from the catalog
	PeakTFLOPS   float64 `json:"peak_tflops"`   // per GPU, dense at the precision's compute
	DecodeEff    float64 `json:"decode_efficiency"`
	PrefillEff   float64 `json:"prefill_efficiency"`
	// OutputTokensPerSec = Batch × GPUs × bandwidth × DecodeEff ÷ bytes read per step
	// (weights + KV cache); InputTokensPerSec = GPUs × peak × PrefillEff ÷ (2 × params).
	OutputTokensPerSec float64 `json:"output_tokens_per_s"`
	InputTokensPerSec  float64 `json:"input_tokens_per_s"`
	PriceUSDGPUHour    float64 `json:"price_usd_gpu_hour"`
	// USDPer1MOutput and USDPer1MInput are the GPUs' hourly price over the tokens of
	// an hour, per million.
	USDPer1MOutput float64 `json:"usd_per_1m_output_tokens"`
	USDPer1MInput  float64 `json:"usd_per_1m_input_tokens"`
}

// ComputeTFLOPS is the dense peak the prefill of weights at precision runs on:
// fp8 on FP8 tensor cores, fp16/bf16 and int4 (weights dequantised to 16 bits) on
// the BF16/FP16 figure.
func ComputeTFLOPS(g schemas.GPU, precision string) (float64, error) {
	if strings.EqualFold(precision, FP8) {
		return PeakTFLOPS(g, FP8)
	}
	return PeakTFLOPS(g, BF16)
}

// Serve computes the cost of serving m on an offer of GPU g with perInstance GPUs
// at priceUSDGPUHour, with decode and prefill efficiencies (0: the bands' midpoints).
func Serve(g schemas.GPU, perInstance, priceUSDGPUHour float64, m Model, decodeEff, prefillEff float64) (
	ServeCost, error) {
	bpp, err := BytesPerParam(m.Precision)
	if err != nil {
		return ServeCost{}, err
	}
	switch {
	case !(m.Params > 0):
		return ServeCost{}, fmt.Errorf("analytics: params %v: must be positive", m.Params)
	case m.Batch < 1 || m.Context < 0 || m.KVBytesPerToken < 0:
		return ServeCost{}, fmt.Errorf("analytics: batch %d, context %d, KV bytes %v: batch ≥ 1, the others ≥ 0",
			m.Batch, m.Context, m.KVBytesPerToken)
	case !(g.BandwidthTBs > 0):
		return ServeCost{}, fmt.Errorf("analytics: %s has no memory bandwidth in the catalog", g.ID)
	case !(g.MemoryGB > 0):
		return ServeCost{}, fmt.Errorf("analytics: %s has no memory size in the catalog", g.ID)
	case !(priceUSDGPUHour > 0):
		return ServeCost{}, fmt.Errorf("analytics: price %v: must be positive", priceUSDGPUHour)
	}
	peak, err := ComputeTFLOPS(g, m.Precision)
	if err != nil {
		return ServeCost{}, err
	}
	if decodeEff == 0 {
		decodeEff = DecodeEfficiency.Mid()
	}
	if prefillEff == 0 {
		prefillEff = PrefillEfficiency.Mid()
	}
	if !(decodeEff > 0 && decodeEff <= 1) || !(prefillEff > 0 && prefillEff <= 1) {
		return ServeCost{}, fmt.Errorf("analytics: efficiencies %v, %v: must be in (0, 1]", decodeEff, prefillEff)
	}
	weights := m.Params * bpp
	kv := float64(m.Batch) * float64(m.Context) * m.KVBytesPerToken
	c := ServeCost{Model: m, WeightsGB: Round(weights/1e9, 3), KVCacheGB: Round(kv/1e9, 3), BandwidthTBs: g.BandwidthTBs,
		PeakTFLOPS: peak, DecodeEff: decodeEff, PrefillEff: prefillEff, PriceUSDGPUHour: priceUSDGPUHour}
	need := (weights + kv) / (g.MemoryGB * 1e9)
	c.GPUs = 1
	for float64(c.GPUs) < need {
		c.GPUs *= 2
	}
	n := math.Max(perInstance, 1)
	switch {
	case float64(c.GPUs) > n:
		return c, fmt.Errorf("%w: %s GB of weights and KV cache need %d × %s (%s GB each); the instance has %s",
			ErrNoFit, FormatNumber((weights+kv)/1e9, 1), c.GPUs, g.ID, FormatNumber(g.MemoryGB, 0), FormatNumber(n, 0))
	case c.GPUs == 1:
		c.TPNote = fmt.Sprintf("fits one GPU (%s of %s GB): one GPU serves a copy, no tensor parallelism",
			FormatNumber((weights+kv)/1e9, 1), FormatNumber(g.MemoryGB, 0))
	default:
		c.TPNote = fmt.Sprintf("does not fit one GPU (%s GB > %s GB): split by tensor parallelism over %d GPUs "+
			"(their bandwidth adds up; the all-reduce between them is not counted)",
			FormatNumber((weights+kv)/1e9, 1), FormatNumber(g.MemoryGB, 0), c.GPUs)
	}
	gpus := float64(c.GPUs)
	c.OutputTokensPerSec = float64(m.Batch) * gpus * g.BandwidthTBs * 1e12 * decodeEff / (weights + kv)
	c.InputTokensPerSec = gpus * peak * 1e12 * prefillEff / (2 * m.Params)
	hourly := priceUSDGPUHour * gpus
	c.USDPer1MOutput = Round(hourly/(c.OutputTokensPerSec*3600)*1e6, 6)
	c.USDPer1MInput = Round(hourly/(c.InputTokensPerSec*3600)*1e6, 6)
	c.OutputTokensPerSec = Round(c.OutputTokensPerSec, 3)
	c.InputTokensPerSec = Round(c.InputTokensPerSec, 3)
	return c, nil
}

// Explain writes the arithmetic with c's numbers.
func (c ServeCost) Explain() string {
	var b strings.Builder
	m := c.Model
	bpp, _ := BytesPerParam(m.Precision)
	fmt.Fprintf(&b, "weights               = params × bytes per weight = %g × %s (%s) = %s GB\n",
		m.Params, FormatNumber(bpp, 2), m.Precision, FormatNumber(c.WeightsGB, 3))
	fmt.Fprintf(&b, "KV cache per step     = batch × context × KV bytes per token = %d × %d × %s = %s GB\n",
		m.Batch, m.Context, FormatNumber(m.KVBytesPerToken, 0), FormatNumber(c.KVCacheGB, 3))
	fmt.Fprintf(&b, "GPUs per copy         = %d: the model %s\n", c.GPUs, c.TPNote)
	fmt.Fprintf(&b, "decode (memory bound) = batch × GPUs × bandwidth × efficiency / bytes read per step\n")
	fmt.Fprintf(&b, "                      = %d × %d × %s TB/s × %s / %s GB = %s output tokens/s\n",
		m.Batch, c.GPUs, FormatNumber(c.BandwidthTBs, 4), FormatNumber(c.DecodeEff, 4),
		FormatNumber(c.WeightsGB+c.KVCacheGB, 3), FormatNumber(c.OutputTokensPerSec, 2))
	fmt.Fprintf(&b, "$ per 1M output       = $/GPU-h × GPUs × 1e6 / (tokens/s × 3600)\n")
	fmt.Fprintf(&b, "                      = %s × %d × 1e6 / (%s × 3600) = $%s\n", FormatNumber(c.PriceUSDGPUHour, 6),
		c.GPUs, FormatNumber(c.OutputTokensPerSec, 2), FormatNumber(c.USDPer1MOutput, 4))
	fmt.Fprintf(&b, "prefill (compute)     = GPUs × dense peak × efficiency / (2 × params)\n")
	fmt.Fprintf(&b, "                      = %d × %s TFLOPS × %s / %.4g = %s input tokens/s; $ per 1M input = $%s\n",
		c.GPUs, FormatNumber(c.PeakTFLOPS, 4), FormatNumber(c.PrefillEff, 4), 2*m.Params,
		FormatNumber(c.InputTokensPerSec, 0), FormatNumber(c.USDPer1MInput, 4))
	return b.String()
}

// ExplainEfficiency writes both bands with their sources.
func ExplainEfficiency() string {
	var b strings.Builder
	for _, e := range []Efficiency{DecodeEfficiency, PrefillEfficiency} {
		fmt.Fprintf(&b, "%s, midpoint %s:\n", e.String(), FormatNumber(e.Mid(), 4))
		for _, s := range e.Sources {
			fmt.Fprintf(&b, "  - %s (%s): %s\n", s.Setting, s.Cite, s.Figure)
		}
	}
	return b.String()
}

package query

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/gpuprice/gpuprice/analytics"
)

// InferenceQuery is `gpuprice inference` and GET /api/v1/inference: $ per 1M output
// tokens of serving a model on every offer.
type InferenceQuery struct {
	Filter
	Params    float64
	Precision string
	// Batch sequences of Context tokens; the KV cache per token is 2 × Layers ×
	// KVHeads × HeadDim × the precision's bytes (0 layers: no KV cache counted).
	Batch, Context, Layers, KVHeads, HeadDim int
	// DecodeEff and PrefillEff override the bands' midpoints (0: the midpoint).
	DecodeEff, PrefillEff float64
	Limit                 int
}

// InferencePrecisions are the precisions a model's weights may be served at.
var InferencePrecisions = []string{analytics.FP16, analytics.BF16, analytics.FP8, analytics.INT4}

// ParseInference reads an InferenceQuery's parameters.
func ParseInference(v url.Values, caps Caps) (InferenceQuery, error) {
	p := newParams(v, caps)
	var q InferenceQuery
	q.read(p, "gpu", "provider", "pricing", "region", "tier", "scope", "interconnect")
	if !p.has("params") && p.err == nil {
		p.fail("params", "is required: the model's parameter count, e.g. 70e9")
	}
	q.Params = p.number("params", 0, 1, 1e15)
	q.Precision = p.enum("precision", analytics.FP16, InferencePrecisions...)
	q.Batch = p.integer("batch", 1, 1, 1<<16)
	q.Context = p.integer("context", 0, 0, 1<<24)
	q.Layers = p.integer("layers", 0, 0, 1<<12)
	q.KVHeads = p.integer("kv-heads", 0, 0, 1<<12)
	q.HeadDim = p.integer("head-dim", 0, 0, 1<<14)
	some := q.Layers > 0 || q.KVHeads > 0 || q.HeadDim > 0
	if some && (q.Layers == 0 || q.KVHeads == 0 || q.HeadDim == 0) && p.err == nil {
		p.fail("layers", "layers, kv-heads and head-dim size the KV cache together: give all three")
	}
	q.DecodeEff = p.number("decode-efficiency", 0, 0, 1)
	q.PrefillEff = p.number("prefill-efficiency", 0, 0, 1)
	q.Limit = p.limit("limit")
	return q, p.done("format", "explain")
}

// Values are the query's parameters.
func (q InferenceQuery) Values() url.Values {
	v := vals(q.values()...)
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	v.Set("params", g(q.Params))
	v.Set("precision", q.Precision)
	setInt(v, "batch", q.Batch)
	setInt(v, "context", q.Context)
	setInt(v, "layers", q.Layers)
	setInt(v, "kv-heads", q.KVHeads)
	setInt(v, "head-dim", q.HeadDim)
	if q.DecodeEff > 0 {
		v.Set("decode-efficiency", g(q.DecodeEff))
	}
	if q.PrefillEff > 0 {
		v.Set("prefill-efficiency", g(q.PrefillEff))
	}
	setInt(v, "limit", q.Limit)
	return v
}

// Model is the model the query serves.
func (q InferenceQuery) Model() analytics.Model {
	bpp, _ := analytics.BytesPerParam(q.Precision)
	return analytics.Model{Params: q.Params, Precision: q.Precision, Batch: max(q.Batch, 1), Context: q.Context,
		KVBytesPerToken: analytics.KVBytesPerToken(q.Layers, q.KVHeads, q.HeadDim, bpp)}
}

// InferenceRow is one offer's cost of serving the model.
type InferenceRow struct {
	Provider     string              `json:"provider"`
	SKU          string              `json:"sku"`
	Region       string              `json:"region"`
	Zone         string              `json:"zone"`
	Pricing      string              `json:"pricing"`
	GPU          string              `json:"gpu"`
	GPUCount     float64             `json:"gpu_count"`
	Interconnect string              `json:"interconnect"`
	Cost         analytics.ServeCost `json:"cost"`
}

// Inference is the cost of serving a model on every offer, cheapest per output
// token first, and how many offers were left out and why.
type Inference struct {
	Rows    []InferenceRow
	Skipped map[string]int
}

// MarshalJSON writes the rows: the value of `inference --format json`.
func (t Inference) MarshalJSON() ([]byte, error) { return jsonOf(nonNil(t.Rows)) }

// UnmarshalJSON reads the rows.
func (t *Inference) UnmarshalJSON(b []byte) error { return jsonUnmarshal(b, &t.Rows) }

// Inference computes $ per 1M output (and input) tokens on the latest prices still
// on offer, as Tokens does for training.
func (r *Reader) Inference(ctx context.Context, q InferenceQuery) (Result[Inference], error) {
	res := Result[Inference]{Data: Inference{Skipped: map[string]int{}}}
	offers, matched, err := r.pricedOffers(ctx, q.Filter, res.Data.Skipped)
	res.Matched = matched
	if err != nil {
		return res, err
	}
	m := q.Model()
	var rows []InferenceRow
	for _, po := range offers {
		o, g := po.Observation, po.GPU
		c, err := analytics.Serve(g, o.GPUCount, o.PriceUSDGPUHour, m, q.DecodeEff, q.PrefillEff)
		if errors.Is(err, analytics.ErrNoFit) {
			res.Data.Skipped["the model does not fit one instance's GPUs"]++
			continue
		}
		if err != nil {
			res.Data.Skipped[err.Error()]++
			continue
		}
		rows = append(rows, InferenceRow{o.Provider, o.SKU, o.Region, o.Zone, o.Pricing, o.GPU, o.GPUCount,
			o.Interconnect, c})
		res.Recorded = countRecorded(res.Recorded, o)
	}
	res.Data.Rows = cheapestFirst(rows, func(r InferenceRow) float64 { return r.Cost.USDPer1MOutput }, q.Limit)
	return res, nil
}

// Table is the serving costs as table rows.
func (t Inference) Table() ([]string, [][]string) {
	header := []string{"gpu", "provider", "pricing", "sku", "region", "price_usd_gpu_hour", "gpus_per_copy",
		"output_tokens_per_s", "usd_per_1m_output", "input_tokens_per_s", "usd_per_1m_input"}
	var out [][]string
	for _, r := range t.Rows {
		c := r.Cost
		out = append(out, []string{r.GPU, r.Provider, r.Pricing, r.SKU, r.Region, f4(c.PriceUSDGPUHour), strconv.Itoa(c.GPUs),
			strconv.FormatFloat(c.OutputTokensPerSec, 'f', 1, 64), f4(c.USDPer1MOutput),
			strconv.FormatFloat(c.InputTokensPerSec, 'f', 0, 64), f4(c.USDPer1MInput)})
	}
	return header, out
}

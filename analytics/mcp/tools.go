package mcp

import (
	"context"
	"net/url"
	"strings"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/digest"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// The arguments' descriptions: one text per parameter, shared by the tools that
// take it (the CLI's flags and the API's parameters have the same names).
const (
	dGPU = "GPU as people type it: a canonical name (H100-SXM-80GB), a family (h100: every variant), " +
		"or loosely (\"H100 SXM\", a100-80gb); list_gpus lists the catalog"
	dPricing = "pricing kind: on_demand, spot, reserved_1y, reserved_3y, commitment_<months>m " +
		"(written loosely too: On-Demand; reserved: every reserved term)"
	dRegion = "region as the provider names it (us-east-1, europe-west4; case and punctuation are forgiven)"
	dTier   = "provider tier: hyperscaler, specialist or marketplace"
	dScope  = "price scope compared: instance (default: the whole machine) or gpu_only " +
		"(an accelerator priced apart from the VM it needs, compared with the like only)"
	dInterconnect = "keep offers whose interconnect between nodes is infiniband, roce, efa, ethernet, " +
		"nvlink-only or unknown, or rdma (any of infiniband, roce, efa)"
	dAt = "end of the window: a date (2026-11-02) or RFC 3339 time; default now. " +
		"A recorded example's rows are of 2026-11-01: ask with at=2026-11-02"
	dUntil = "end of the window as a span back from now (2w, 90d), a date or RFC 3339 time; instead of at"
	dLimit = "at most this many rows (1 to 50000)"
)

// dProvider lists the known providers.
var dProvider = "provider, or several separated by commas: " + strings.Join(schemas.DefaultProviders().Names(), ", ")

type offersArgs struct {
	GPU            string `json:"gpu,omitempty"`
	Provider       string `json:"provider,omitempty"`
	Pricing        string `json:"pricing,omitempty"`
	Region         string `json:"region,omitempty"`
	Tier           string `json:"tier,omitempty"`
	Interconnect   string `json:"interconnect,omitempty"`
	Limit          int    `json:"limit,omitempty"`
	Stale          string `json:"stale,omitempty"`
	AllSeries      bool   `json:"all-series,omitempty"`
	IncludeDerived bool   `json:"include-derived,omitempty"`
}

type seriesArgs struct {
	Provider string `json:"provider"`
	SKU      string `json:"sku"`
	Pricing  string `json:"pricing"`
	Region   string `json:"region,omitempty"`
	Zone     string `json:"zone,omitempty"`
	Since    string `json:"since,omitempty"`
	At       string `json:"at,omitempty"`
	Until    string `json:"until,omitempty"`
	Bar      string `json:"bar,omitempty"`
	Limit    int    `json:"limit,omitempty"`
}

type volatilityArgs struct {
	GPU      string  `json:"gpu,omitempty"`
	Provider string  `json:"provider,omitempty"`
	Pricing  string  `json:"pricing,omitempty"`
	Region   string  `json:"region,omitempty"`
	Tier     string  `json:"tier,omitempty"`
	Window   string  `json:"window,omitempty"`
	Bar      string  `json:"bar,omitempty"`
	At       string  `json:"at,omitempty"`
	Until    string  `json:"until,omitempty"`
	By       string  `json:"by,omitempty"`
	Below    float64 `json:"below,omitempty"`
}

type spreadsArgs struct {
	GPU     string `json:"gpu,omitempty"`
	Pricing string `json:"pricing,omitempty"`
	Scope   string `json:"scope,omitempty"`
	Since   string `json:"since,omitempty"`
	At      string `json:"at,omitempty"`
	Until   string `json:"until,omitempty"`
}

type indexArgs struct {
	GPU     string `json:"gpu,omitempty"`
	Pricing string `json:"pricing,omitempty"`
	Scope   string `json:"scope,omitempty"`
	Since   string `json:"since,omitempty"`
	At      string `json:"at,omitempty"`
	Until   string `json:"until,omitempty"`
}

type tokensArgs struct {
	Params       float64 `json:"params"`
	GPU          string  `json:"gpu,omitempty"`
	Provider     string  `json:"provider,omitempty"`
	Pricing      string  `json:"pricing,omitempty"`
	Region       string  `json:"region,omitempty"`
	Tier         string  `json:"tier,omitempty"`
	Scope        string  `json:"scope,omitempty"`
	Interconnect string  `json:"interconnect,omitempty"`
	MFU          float64 `json:"mfu,omitempty"`
	Tokens       float64 `json:"tokens,omitempty"`
	Precision    string  `json:"precision,omitempty"`
	GPUs         int     `json:"gpus,omitempty"`
	Nodes        int     `json:"nodes,omitempty"`
	Limit        int     `json:"limit,omitempty"`
	RiskAdjusted bool    `json:"risk-adjusted,omitempty"`
	Checkpoint   string  `json:"checkpoint,omitempty"`
	Restart      string  `json:"restart,omitempty"`
}

type historyArgs struct {
	GPU      string `json:"gpu"`
	Pricing  string `json:"pricing,omitempty"`
	Region   string `json:"region,omitempty"`
	Provider string `json:"provider,omitempty"`
	Scope    string `json:"scope,omitempty"`
	Since    string `json:"since,omitempty"`
	At       string `json:"at,omitempty"`
	Until    string `json:"until,omitempty"`
	Cheapest int    `json:"cheapest,omitempty"`
}

type termsArgs struct {
	GPU      string `json:"gpu"`
	Region   string `json:"region,omitempty"`
	Provider string `json:"provider,omitempty"`
	Scope    string `json:"scope,omitempty"`
	At       string `json:"at,omitempty"`
	Until    string `json:"until,omitempty"`
}

type breakEvenArgs struct {
	GPU         string  `json:"gpu"`
	Region      string  `json:"region,omitempty"`
	Provider    string  `json:"provider,omitempty"`
	Scope       string  `json:"scope,omitempty"`
	At          string  `json:"at,omitempty"`
	Until       string  `json:"until,omitempty"`
	Term        string  `json:"term,omitempty"`
	Utilisation string  `json:"utilisation,omitempty"`
	Quote       float64 `json:"quote,omitempty"`
}

type inferenceArgs struct {
	Params       float64 `json:"params"`
	GPU          string  `json:"gpu,omitempty"`
	Provider     string  `json:"provider,omitempty"`
	Pricing      string  `json:"pricing,omitempty"`
	Region       string  `json:"region,omitempty"`
	Tier         string  `json:"tier,omitempty"`
	Scope        string  `json:"scope,omitempty"`
	Interconnect string  `json:"interconnect,omitempty"`
	Precision    string  `json:"precision,omitempty"`
	Batch        int     `json:"batch,omitempty"`
	Context      int     `json:"context,omitempty"`
	Layers       int     `json:"layers,omitempty"`
	KVHeads      int     `json:"kv-heads,omitempty"`
	HeadDim      int     `json:"head-dim,omitempty"`
	DecodeEff    float64 `json:"decode-efficiency,omitempty"`
	PrefillEff   float64 `json:"prefill-efficiency,omitempty"`
	Limit        int     `json:"limit,omitempty"`
}

type riskArgs struct {
	GPU      string `json:"gpu,omitempty"`
	Provider string `json:"provider,omitempty"`
	SKU      string `json:"sku,omitempty"`
	Region   string `json:"region,omitempty"`
	Since    string `json:"since,omitempty"`
	Until    string `json:"until,omitempty"`
	Changes  bool   `json:"changes,omitempty"`
}

type availabilityArgs struct {
	GPU        string `json:"gpu,omitempty"`
	Provider   string `json:"provider,omitempty"`
	SKU        string `json:"sku,omitempty"`
	Region     string `json:"region,omitempty"`
	Since      string `json:"since,omitempty"`
	Until      string `json:"until,omitempty"`
	By         string `json:"by,omitempty"`
	Need       int    `json:"need,omitempty"`
	Step       string `json:"step,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`
	Restart    string `json:"restart,omitempty"`
}

type digestArgs struct {
	GPU     string `json:"gpu"`
	Pricing string `json:"pricing,omitempty"`
	Since   string `json:"since,omitempty"`
	At      string `json:"at,omitempty"`
}

type gpusArgs struct {
	GPU string `json:"gpu,omitempty"`
}

// descriptions are the arguments' descriptions by name; an argument of a tool that
// has none here is an error when the tools are built (TestEveryArgumentDescribed).
var descriptions = map[string]string{
	"gpu": dGPU, "provider": dProvider, "pricing": dPricing, "region": dRegion, "tier": dTier, "scope": dScope,
	"interconnect": dInterconnect, "at": dAt, "until": dUntil, "limit": dLimit,
	"stale":           "a series last seen this long before its provider's newest price is withdrawn (default 3d)",
	"all-series":      "list withdrawn offers too (series no longer seen)",
	"include-derived": "keep derived prices and \"from\" floors (left out by default: no offer sells at them)",
	"sku":             "the provider's SKU (instance type) of the series, as find_offers gives it",
	"zone":            "the series' zone, when its provider prices per zone",
	"since":           "length of the window ending at: 7d, 2w, 36h, or a start date (2026-10-01)",
	"window":          "length of the window ending at: 7d, 2w, 36h",
	"bar":             "bar width: 1h (default) or 1d",
	"by": "volatility: series (default), offering (GPU × provider × pricing) or zone; availability: offer " +
		"(default) or gpu (each provider's GPU, in stock while any of its offers is)",
	"below":              "also report the share of time each series spent below this $/GPU-hour",
	"params":             "the model's parameter count, e.g. 7e9 for 7B",
	"mfu":                "model FLOPs utilisation as a fraction in (0, 1]; default: the midpoint of the offering's band",
	"tokens":             "also price a run of this many training tokens (e.g. 1.4e12)",
	"precision":          "numeric precision: bf16 or fp8 (training); fp16, bf16, fp8 or int4 (inference weights)",
	"gpus":               "the job's GPU count (decides whether it crosses nodes)",
	"nodes":              "the job's node count",
	"cheapest":           "list this many of the cheapest offers seen (0 to 1000, default 5)",
	"term":               "the commitment: 1y, 3y or <months>m (default 1y)",
	"utilisation":        "share of the term's hours the GPUs are used: 60% or 0.6 (default 100%)",
	"quote":              "a quoted $/GPU-hour for the term, placed among the offers",
	"batch":              "concurrent sequences served (default 1)",
	"context":            "tokens of context per sequence (sizes the KV cache with layers, kv-heads, head-dim)",
	"layers":             "the model's layers (with kv-heads and head-dim: the KV cache)",
	"kv-heads":           "the model's key/value heads",
	"head-dim":           "the model's head dimension",
	"decode-efficiency":  "share of memory bandwidth decoding reaches (0 to 1; default the band's midpoint)",
	"prefill-efficiency": "share of peak FLOPs prefill reaches (0 to 1; default the band's midpoint)",
	"changes":            "only the moves between interruption bands (not each offer's first band)",
	"risk-adjusted": "also price the job's spot interruptions in: each offer's $ per 1B tokens times its band's " +
		"expected cost factor, cheapest first on it (offers without a band: unknown, listed last)",
	"checkpoint": "with risk-adjusted (tokens) or need (availability): time between the job's checkpoints " +
		"(default 30m)",
	"restart": "with risk-adjusted (tokens) or need (availability): time from an interruption to work " +
		"resuming (default 10m)",
	"step": "also the timeline of each provider's GPU: its offers' stock summed every step (1h, 6h; at least " +
		"10m)",
	"need": "the GPUs needed now: also list the offers whose stock can supply that many, with their prices " +
		"and risk-adjusted prices, cheapest first",
}

// Offer is a row of find_offers: the observation as `prices --format json` writes
// it, with its price scope and origin always written out.
type Offer struct {
	schemas.Observation
	// Scope is "instance" (the whole machine) or "gpu_only" (the accelerator
	// alone: the VM it needs costs more).
	Scope string `json:"scope" jsonschema:"instance: the whole machine; gpu_only: the accelerator alone (VM extra)"`
	// Origin is "live" (collected from the provider) or "recorded" (a recorded
	// example: not today's price).
	Origin string `json:"origin" jsonschema:"live: collected from the provider; recorded: an example, not today's price"`
}

// offers marks each row's scope and origin.
func offers(rows []schemas.Observation) []Offer {
	out := make([]Offer, 0, len(rows))
	for _, o := range rows {
		out = append(out, Offer{Observation: o, Scope: schemas.ScopeOf(o.PriceScope), Origin: o.Origin()})
	}
	return out
}

func same[T any](t T) T { return t }

// tools are the server's tools over src, in the order they are listed; opts.PublicURL
// roots the digest's links.
func tools(src query.Source, opts Options) []tool {
	return []tool{
		define[offersArgs]("find_offers", "Find GPU offers, cheapest first",
			"The latest price of every offer still on sale matching the filters: grouped by pricing kind "+
				"(on_demand, spot, reserved…) unless one is asked for, cheapest $/GPU-hour first within each. "+
				"Each row says its scope (instance or gpu_only) and origin (live or recorded). "+
				"Same as `gpuprice prices`.",
			url.Values{"limit": {"20"}}, query.ParsePrices, src.Prices, offers),
		define[seriesArgs]("series", "One price series over time",
			"The observations and bars of one series (provider, sku, region, zone, pricing kind: take them from "+
				"find_offers) over a window. Same as `gpuprice series`.",
			url.Values{"limit": {"500"}}, query.ParseSeries, src.Series, same[query.Series]),
		define[volatilityArgs]("volatility", "How much prices swing",
			"Log-return volatility (std, annualised), coefficient of variation, range and maximum drawdown of each "+
				"series (or offering, or zone) over a window of hourly or daily bars, most volatile first; "+
				"null where a series has too few bars. Same as `gpuprice volatility`.",
			nil, query.ParseVolatility, src.Volatility, same[query.Volatility]),
		define[spreadsArgs]("spreads", "Price spreads between providers",
			"Per day and GPU, the cheapest, median and dearest listed $/GPU-hour across providers and the spread "+
				"between them, with a summary per GPU. Same as `gpuprice spreads`.",
			nil, query.ParseSpreads, src.Spreads, same[query.Spreads]),
		define[indexArgs]("price_index", "Daily GPU price index",
			"A daily index of listed $/GPU-hour per GPU and pricing kind, chained from matched samples "+
				"(the same offers on consecutive days). Same as `gpuprice index`.",
			nil, query.ParseIndex, src.Index, same[[]analytics.IndexPoint]),
		define[tokensArgs]("training_token_cost", "$ per 1B training tokens",
			"Each offering's latest $/GPU-hour turned into the cost of 1B training tokens of a model of params "+
				"parameters (6 × params FLOPs per token at the offering's MFU band), cheapest first. "+
				"Same as `gpuprice tokens`.",
			url.Values{"limit": {"20"}}, query.ParseTokens, src.Tokens, same[query.Tokens]),
		define[historyArgs]("negotiation_history", "Price history for a negotiation",
			"What one GPU cost over a window (default 180d, on-demand): percentiles overall and per provider, "+
				"the trend, and the cheapest offers seen with when: what to bring to a negotiation. "+
				"Same as `gpuprice history`.",
			nil, query.ParseHistory, src.History, same[analytics.History]),
		define[termsArgs]("terms", "Reserved and committed terms of a GPU",
			"The market of one GPU by term: on-demand, spot, one- and three-year reservations and commitments, "+
				"with the median discount of each term against on-demand, like for like. Same as `gpuprice terms`.",
			nil, query.ParseTerms, src.Terms, same[query.Terms]),
		define[breakEvenArgs]("breakeven", "Break-even utilisation of a term",
			"At which utilisation a reservation or commitment of one GPU beats on-demand, per offer and for a "+
				"quoted price, and what it saves or loses over the term. Same as `gpuprice breakeven`.",
			nil, query.ParseBreakEven, src.BreakEven, same[query.BreakEvens]),
		define[inferenceArgs]("inference_cost", "$ per 1M generated tokens",
			"Each offering's latest $/GPU-hour turned into the cost of serving a model: whether it fits, "+
				"tokens per second and $ per 1M tokens from memory bandwidth and FLOPs bands, cheapest first. "+
				"Same as `gpuprice inference`.",
			url.Values{"limit": {"20"}}, query.ParseInference, src.Inference, same[query.Inference]),
		define[riskArgs]("risk", "Interruption risk of spot offers",
			"The stored interruption bands of spot offers (AWS Spot Advisor's frequency of interruption) as a history "+
				"per provider, SKU and region: each offer's first band and every move up or down after it, with the "+
				"interruption rate per hour the band is read as. Same as `gpuprice risk`.",
			nil, query.ParseRisk, src.Risk, same[query.RiskHistory]),
		define[availabilityArgs]("availability", "Stock and capacity of offers over time",
			"How available each offer (or, by gpu, each provider's GPU) was over a window (default the last 7 days) "+
				"from the stock and marketplace-depth signals stored: the share of the observed time in stock, the "+
				"outages and the longest, the newest stock. With need: the offers that can supply that many GPUs now "+
				"(\"where can I get 64 H100s\"), with their prices and risk-adjusted prices, cheapest first. "+
				"Same as `gpuprice availability`.",
			nil, query.ParseAvailability, src.Availability, same[query.Availability]),
		define[digestArgs]("digest", "The weekly digest of followed GPUs",
			"What moved in the week ending at (default now) for the GPUs given (gpu: one or several separated by "+
				"commas): per pricing kind the median and cheapest offer of each tier and the week-over-week change "+
				"of the matched-sample chained index, the tier spreads, the largest spot moves from the price in "+
				"force when the week began, the sources whose runs failed and the interruption-band changes; each "+
				"section names the command that prints its numbers. Same as `gpuprice digest --format json`.",
			nil, digest.ParseQuery, func(ctx context.Context, q digest.Query) (query.Result[*digest.Digest], error) {
				return digest.Answer(ctx, src, q, digest.Options{PublicURL: opts.PublicURL})
			}, same[*digest.Digest]),
		define[gpusArgs]("list_gpus", "The GPU catalog",
			"The GPUs gpuprice knows (canonical names, family, form factor, memory, peak FLOPs), or those a name "+
				"matches. Same as `gpuprice gpus`.",
			nil, query.ParseGPUs, src.GPUs, same[[]schemas.GPU]),
	}
}

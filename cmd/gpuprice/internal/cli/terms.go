package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
)

func init() {
	addCommand((*app).termsCmd)
	addCommand((*app).breakevenCmd)
	addCommand((*app).inferenceCmd)
}

// leftOut says on stderr, as sentences (not log lines), what a table leaves out and why.
func leftOut(w io.Writer, skipped map[string]int, what string) {
	for _, reason := range slices.Sorted(maps.Keys(skipped)) {
		fmt.Fprintf(w, "%d %s left out: %s.\n", skipped[reason], what, reason)
	}
}

const scopeHelp = "price scope compared: instance (whole machines, the default) or gpu_only " +
	"(GPU-only prices compared with each other only)"

func (a *app) termsCmd() *cobra.Command {
	var gpu, region, provider, scope, at, until, format string
	cmd := &cobra.Command{
		Use:   "terms",
		Short: "The term curve of a GPU: on-demand, spot and every commitment in $/GPU-hour against term",
		Long: `terms lays every offer of one GPU in force on the day of --at on one curve of
$/GPU-hour (upfront amortised over the term) against the term: on-demand, spot, each
reservation and commitment, for the market and per provider. The discount is the
like-for-like one (analytics.CommitmentDiscount: the same provider's on-demand
price of the same SKU, region and zone); vs_on_demand_median_pct compares medians.`,
		Example: `  gpuprice terms --gpu H100-SXM-80GB --at 2026-11-02`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := flagValues("gpu", gpu, "region", region, "provider", provider, "scope", scope, "at", at, "until", until)
			q, err := query.ParseTerms(v, query.NoCaps)
			if err != nil {
				return query.FlagError(err)
			}
			return a.withReports(cmd, func(src query.Source) error {
				res, err := src.Terms(cmd.Context(), q)
				if err != nil {
					return err
				}
				a.noteMatches(res.Matched)
				header, rows := res.Data.Table()
				return output(a.stdout, format, header, rows, res.Data)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&gpu, "gpu", "", "GPU, one (required): canonical (H100-SXM-80GB) or as typed")
	fl.StringVar(&region, "region", "", "provider region")
	fl.StringVar(&provider, "provider", "", "provider(s), comma-separated")
	fl.StringVar(&scope, "scope", "instance", scopeHelp)
	fl.StringVar(&at, "at", "", "the day whose offers in force are laid out, RFC 3339 or a date (default: now)")
	untilFlag(fl, &until)
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	return cmd
}

func (a *app) breakevenCmd() *cobra.Command {
	var gpu, region, provider, scope, at, until, term, util, format, weight string
	var quote float64
	cmd := &cobra.Command{
		Use:   "breakeven",
		Short: "Break-even utilisation of every commitment of a term against on-demand and spot, and the cost at yours",
		Long: `breakeven takes every reservation and commitment of --term in force on the day of --at
and says above which utilisation u* = committed ÷ on-demand it costs less than paying
by the hour used, against today's on-demand median (as the report's target price),
against the same SKU on demand (the like-for-like twin) and against the spot median;
and what it saves or loses per GPU over the term at --utilisation:
  saving = on-demand × hours × utilisation − committed × hours.
--quote places a quoted price the same way.`,
		Example: `  gpuprice breakeven --gpu H100-SXM-80GB --term 1y --utilisation 60% --at 2026-11-02
  gpuprice breakeven --gpu H100-SXM-80GB --term 1y --utilisation 60% --quote 2.10`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := flagValues("gpu", gpu, "region", region, "provider", provider, "scope", scope, "at", at, "until", until,
				"term", term, "utilisation", util, "weight", weight)
			if quote != 0 {
				v.Set("quote", strconv.FormatFloat(quote, 'g', -1, 64))
			}
			q, err := query.ParseBreakEven(v, query.NoCaps)
			if err != nil {
				return query.FlagError(err)
			}
			return a.withReports(cmd, func(src query.Source) error {
				res, err := src.BreakEven(cmd.Context(), q)
				if err != nil {
					return err
				}
				a.noteMatches(res.Matched)
				header, rows := res.Data.Table()
				if err := output(a.stdout, format, header, rows, res.Data); err != nil {
					return err
				}
				if format == "table" || format == "markdown" {
					fmt.Fprintln(a.stdout)
					for _, s := range res.Data.Sentences() {
						fmt.Fprintln(a.stdout, s)
					}
				}
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&gpu, "gpu", "", "GPU, one (required): canonical (H100-SXM-80GB) or as typed")
	fl.StringVar(&region, "region", "", "provider region")
	fl.StringVar(&provider, "provider", "", "provider(s), comma-separated")
	fl.StringVar(&scope, "scope", "instance", scopeHelp)
	fl.StringVar(&at, "at", "", "the day whose offers in force are compared, RFC 3339 or a date (default: now)")
	untilFlag(fl, &until)
	fl.StringVar(&term, "term", "1y", "term: 1y, 3y or a number of months (6m)")
	fl.StringVar(&util, "utilisation", "100%", "share of the term's hours the GPUs are used: 60% or 0.6")
	fl.Float64Var(&quote, "quote", 0, "a quoted $/GPU-hour for the term, placed as an offer")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	weightFlag(fl, &weight)
	return cmd
}

func (a *app) inferenceCmd() *cobra.Command {
	var (
		ff                                       filterFlags
		params, decodeEff, prefillEff            float64
		precision, scope, format                 string
		batch, context, layers, kvHeads, headDim int
		limit                                    int
		explain                                  bool
	)
	cmd := &cobra.Command{
		Use:   "inference",
		Short: "$ per 1M output tokens of serving a model on every offer, cheapest first",
		Long: `inference prices serving a model of --params parameters at --precision on each offer:

  decode (memory bound): output tokens/s = batch × GPUs × bandwidth × efficiency
                                            ÷ (weights + batch × context × KV bytes per token)
  prefill (compute bound): input tokens/s = GPUs × dense peak × efficiency ÷ (2 × params)
  $ per 1M tokens = $/GPU-hour × GPUs × 1e6 ÷ (tokens/s × 3600)

with the GPU's bandwidth and dense TFLOPS from the catalog and efficiency bands
measured in public benchmarks (--explain prints them and the cheapest offer's
arithmetic). A model that does not fit one GPU's memory is split by tensor
parallelism over the fewest GPUs of the instance that hold it (a power of two);
one that does not fit the instance is left out. The KV cache counts only with
--context, --layers, --kv-heads and --head-dim (Llama 2 70B: 80, 8, 128).`,
		Example: `  gpuprice inference --params 70e9 --precision fp8 --gpu H100-SXM-80GB
  gpuprice inference --params 70B --precision fp16 --batch 16 --context 4096 --layers 80 --kv-heads 8 --head-dim 128`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !(params > 0) {
				return usagef("--params is required: the model's parameter count, e.g. 70B or 70e9")
			}
			g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
			v := ff.values("params", g(params), "precision", precision, "scope", scope)
			for name, n := range map[string]int{"batch": batch, "context": context, "layers": layers, "kv-heads": kvHeads,
				"head-dim": headDim, "limit": limit} {
				if n != 0 {
					v.Set(name, strconv.Itoa(n))
				}
			}
			if decodeEff != 0 {
				v.Set("decode-efficiency", g(decodeEff))
			}
			if prefillEff != 0 {
				v.Set("prefill-efficiency", g(prefillEff))
			}
			q, err := query.ParseInference(v, query.NoCaps)
			if err != nil {
				return query.FlagError(err)
			}
			return a.withReports(cmd, func(src query.Source) error {
				res, err := src.Inference(cmd.Context(), q)
				if err != nil {
					return err
				}
				a.noteMatches(res.Matched)
				leftOut(a.stderr, res.Data.Skipped, "offers")
				if explain && format == "table" {
					fmt.Fprintln(a.stdout, analytics.ExplainEfficiency())
					if rows := res.Data.Rows; len(rows) > 0 {
						r := rows[0]
						fmt.Fprintf(a.stdout, "cheapest: %s %s %s %s (%s)\n%s\n", r.Provider, r.SKU, r.Region, r.Pricing, r.GPU,
							r.Cost.Explain())
					}
				}
				header, rows := res.Data.Table()
				return output(a.stdout, format, header, rows, res.Data)
			})
		},
	}
	ff.add(cmd)
	ff.addInterconnect(cmd)
	fl := cmd.Flags()
	fl.Var(countFlag(&params), "params", "model parameters, e.g. 70B or 70e9 (required)")
	fl.StringVar(&precision, "precision", analytics.FP16, "weights: fp16, bf16, fp8 or int4")
	fl.IntVar(&batch, "batch", 1, "sequences decoded together")
	fl.IntVar(&context, "context", 0, "tokens of each sequence's KV cache")
	fl.IntVar(&layers, "layers", 0, "the model's layers (for the KV cache)")
	fl.IntVar(&kvHeads, "kv-heads", 0, "the model's KV heads (for the KV cache)")
	fl.IntVar(&headDim, "head-dim", 0, "the model's head dimension (for the KV cache)")
	fl.Float64Var(&decodeEff, "decode-efficiency", 0,
		"share of peak bandwidth decode reaches (default: the band's midpoint)")
	fl.Float64Var(&prefillEff, "prefill-efficiency", 0,
		"share of dense peak prefill reaches (default: the band's midpoint)")
	fl.IntVar(&limit, "limit", 0, "show at most this many offers (0: all)")
	fl.BoolVar(&explain, "explain", false,
		"print the efficiency bands with their sources and the cheapest offer's arithmetic")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	fl.StringVar(&scope, "scope", "instance", scopeHelp)
	return cmd
}

package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"

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

// offersOn adds the flags of the commands about one GPU's offers in force on a day
// (terms, breakeven): --gpu, --region, --provider, --scope, --at (said as at says)
// and --until.
func (p *params) offersOn(at string) {
	p.String("gpu", "", "GPU, one (required): canonical (H100-SXM-80GB) or as typed")
	p.String("region", "", "provider region")
	p.String("provider", "", "provider(s), comma-separated")
	p.scope(scopeHelp)
	p.String("at", "", at)
	p.until()
}

func (a *app) termsCmd() *cobra.Command {
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
	}
	p := newParams(cmd)
	p.offersOn("the day whose offers in force are laid out, RFC 3339 or a date (default: now)")
	format := formatFlag(p.fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return readTable(a, cmd, p.values(), *format, query.ParseTerms, query.Source.Terms, query.Terms.Table)
	}
	return cmd
}

func (a *app) breakevenCmd() *cobra.Command {
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
	}
	p := newParams(cmd)
	p.offersOn("the day whose offers in force are compared, RFC 3339 or a date (default: now)")
	p.String("term", "1y", "term: 1y, 3y or a number of months (6m)")
	p.String("utilisation", "100%", "share of the term's hours the GPUs are used: 60% or 0.6")
	p.Float("quote", 0, "a quoted $/GPU-hour for the term, placed as an offer")
	format := formatFlag(p.fl)
	p.weight()
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return read(a, cmd, p.values(), query.ParseBreakEven, query.Source.BreakEven,
			func(_ query.BreakEvenQuery, res query.Result[query.BreakEvens]) error {
				header, rows := res.Data.Table()
				if err := output(a.stdout, *format, header, rows, res.Data); err != nil {
					return err
				}
				if *format == "table" || *format == "markdown" {
					fmt.Fprintln(a.stdout)
					for _, s := range res.Data.Sentences() {
						fmt.Fprintln(a.stdout, s)
					}
				}
				return nil
			})
	}
	return cmd
}

func (a *app) inferenceCmd() *cobra.Command {
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
	}
	p := newParams(cmd)
	p.filters()
	p.interconnect()
	params := p.modelParams("model parameters, e.g. 70B or 70e9 (required)")
	p.String("precision", analytics.FP16, "weights: fp16, bf16, fp8 or int4")
	p.Int("batch", 1, "sequences decoded together")
	p.Int("context", 0, "tokens of each sequence's KV cache")
	p.Int("layers", 0, "the model's layers (for the KV cache)")
	p.Int("kv-heads", 0, "the model's KV heads (for the KV cache)")
	p.Int("head-dim", 0, "the model's head dimension (for the KV cache)")
	p.Float("decode-efficiency", 0, "share of peak bandwidth decode reaches (default: the band's midpoint)")
	p.Float("prefill-efficiency", 0, "share of dense peak prefill reaches (default: the band's midpoint)")
	p.Int("limit", 0, "show at most this many offers (0: all)")
	explain := p.fl.Bool("explain", false,
		"print the efficiency bands with their sources and the cheapest offer's arithmetic")
	format := formatFlag(p.fl)
	p.scope(scopeHelp)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if !(*params > 0) {
			return usagef("--params is required: the model's parameter count, e.g. 70B or 70e9")
		}
		return read(a, cmd, p.values(), query.ParseInference, query.Source.Inference,
			func(_ query.InferenceQuery, res query.Result[query.Inference]) error {
				leftOut(a.stderr, res.Data.Skipped, "offers")
				if *explain && *format == "table" {
					fmt.Fprintln(a.stdout, analytics.ExplainEfficiency())
					if rows := res.Data.Rows; len(rows) > 0 {
						r := rows[0]
						fmt.Fprintf(a.stdout, "cheapest: %s %s %s %s (%s)\n%s\n", r.Provider, r.SKU, r.Region, r.Pricing, r.GPU,
							r.Cost.Explain())
					}
				}
				header, rows := res.Data.Table()
				return output(a.stdout, *format, header, rows, res.Data)
			})
	}
	return cmd
}

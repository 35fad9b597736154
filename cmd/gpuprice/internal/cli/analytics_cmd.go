package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/store"
)

func init() {
	addCommand((*app).rollupCmd)
	addCommand((*app).volatilityCmd)
	addCommand((*app).tokensCmd)
	addCommand((*app).spreadsCmd)
	addCommand((*app).historyCmd)
	addCommand((*app).indexCmd)
}

// parseAt reads --at (RFC 3339 or a date), the end of a window; empty means now.
func parseAt(s string) (time.Time, error) {
	t, err := query.ParseAt(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--at %q: use RFC 3339 (2025-03-01T12:00:00Z) or a date (2025-03-01)", s)
	}
	return t, nil
}

func (a *app) rollups(st store.Store) (store.Rollups, error) {
	r, ok := st.(store.Rollups)
	if !ok {
		return nil, fmt.Errorf("store %T keeps no bars", st)
	}
	return r, nil
}

// output writes rows as a table, csv or markdown, or v as JSON: every table
// command's one writer (query.Write; a column has one name in every format,
// upper-cased in a table). empty, when given, is what an empty table says.
func output(w io.Writer, format string, header []string, rows [][]string, v any, empty ...string) error {
	return query.Write(w, format, header, rows, v, empty...)
}

func (a *app) rollupCmd() *cobra.Command {
	var since, until string
	cmd := &cobra.Command{
		Use:   "rollup",
		Short: "Recompute the hourly and daily bars from the stored observations (backfill)",
		Long: `rollup recomputes the hourly and daily bars the analytics read, from the
deduplicated observations, for the UTC days from --since to --until (default:
everything). Re-running it is harmless: bars are replaced, never added twice.`,
		Example: "  gpuprice rollup\n  gpuprice rollup --since 3d\n  gpuprice rollup --since 2026-11-01 --until 2026-11-08",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var from, to time.Time
			if until != "" {
				var err error
				if to, err = query.ParseUntil(until); err != nil {
					return usagef("--until %q: %v", until, err)
				}
			}
			if since != "" {
				end := to
				if end.IsZero() {
					end = time.Now().UTC()
				}
				var err error
				if from, err = query.ParseSince(since, end); err != nil {
					return usagef("--since %q: %v", since, err)
				}
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			r, err := a.rollups(st)
			if err != nil {
				return err
			}
			start := time.Now()
			if err := r.Rollup(cmd.Context(), from, to); err != nil {
				return err
			}
			what := "all days"
			if !from.IsZero() {
				what = "days since " + from.Truncate(store.Daily).Format(time.DateOnly)
			}
			if !to.IsZero() {
				what += " until " + to.Format(time.RFC3339)
			}
			fmt.Fprintf(a.stdout, "rolled up %s in %v\n", what, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	sinceUntilFlags(cmd.Flags(), &since, &until, "the UTC days")
	return cmd
}

func (a *app) volatilityCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "volatility",
		Short: "How much prices swing: log-return volatility, range, drawdown per series or offering",
		Example: `  gpuprice volatility --pricing spot --window 7d
  gpuprice volatility --provider aws --pricing spot --by zone --below 3.5 --format markdown`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.filters()
	p.window("window", "7d")
	p.String("bar", "1h", "bar width: 1h or 1d")
	p.String("by", "series", "series, offering (GPU × provider × pricing) or zone (per AWS-style zone)")
	p.Float("below", 0, "report the share of time below this $/GPU-hour")
	format := formatFlag(p.fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return readTable(a, cmd, p.values(), *format, query.ParseVolatility, query.Source.Volatility,
			query.Volatility.Table)
	}
	return cmd
}

func (a *app) tokensCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tokens",
		Short: "Effective $ per 1B training tokens of every offering, cheapest first",
		Long: `tokens turns each offering's latest $/GPU-hour into the cost of training tokens:

  $ per 1B tokens = price_usd_gpu_hour × 1e9 × 6 × params / (peak_dense_flops × MFU × 3600)

The MFU is --mfu, else the midpoint of the published band of the offering's class:
what physically limits MFU (NVLink nodes joined by InfiniBand/RoCE/EFA, a single
NVLink node, PCIe cards without NVLink, marketplace GeForce cards), picked by the
GPU's form factor and the job's shape (--gpus, --nodes; default one node): the
provider's interconnect between nodes counts only when the job crosses nodes (more
than one node, or more GPUs than the offer's instance has). --explain prints the
bands with their public sources and which band the cheapest offer got and why (see
docs/analytics.md). Derived prices, "from"
floors and GPU-only prices are left out. Offerings
whose GPU has no band (or no FP8 with --precision fp8) are left out and counted.`,
		Example: `  gpuprice tokens --params 7e9 --gpu H100-SXM-80GB --pricing on_demand
  gpuprice tokens --params 70e9 --tokens 1.4e12 --precision fp8 --explain`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.filters()
	p.interconnect()
	params := p.modelParams("model parameters, e.g. 7B, 7e9 or 1.5T (required)")
	mfu := p.Float("mfu", 0, "model FLOP utilisation, e.g. 0.5 (default: the published band's midpoint)")
	precision := p.String("precision", analytics.BF16, "bf16 or fp8 (dense peak of the catalog)")
	tokens := p.Float("tokens", 0, "training tokens of the whole run, e.g. 1e11 (adds GPU-hours and cost)")
	explain := p.fl.Bool("explain", false, "print the formula with the cheapest offering's numbers")
	p.Int("limit", 0, "show at most this many offerings (0: all)")
	p.Int("gpus", 0, "GPUs of the training job (more than an instance has: the job crosses nodes)")
	p.Int("nodes", 0, "nodes of the training job (default one: the interconnect between nodes is not used)")
	riskAdj := p.Bool("risk-adjusted",
		"add the $ per 1B tokens once interruptions are counted (the offer's band; docs/risk.md), cheapest first on it")
	// --checkpoint and --restart are parameters with --risk-adjusted, or when given.
	for _, s := range []struct {
		name, usage string
		d           time.Duration
	}{{"checkpoint", "with --risk-adjusted: time between checkpoints", 30 * time.Minute},
		{"restart", "with --risk-adjusted: time from an interruption to work resuming", 10 * time.Minute}} {
		d := s.d
		p.fl.Var(spanFlag(&d), s.name, s.usage)
		p.send(s.name, func() (string, bool) { return query.FormatSpan(d), *riskAdj || p.fl.Changed(s.name) })
	}
	format := formatFlag(p.fl)
	p.scope(scopeHelpGCP)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if !(*params > 0) {
			return usagef("--params is required: the model's parameter count, e.g. 7B or 7e9")
		}
		if *mfu != 0 && !(*mfu > 0 && *mfu <= 1) {
			return usagef("--mfu %v: a fraction in (0, 1], e.g. 0.45", *mfu)
		}
		if *tokens < 0 {
			return usagef("--tokens %v: must not be negative", *tokens)
		}
		if pr := strings.ToLower(*precision); pr != analytics.BF16 && pr != analytics.FP8 {
			return usagef("--precision %q: use bf16 or fp8", *precision)
		}
		return read(a, cmd, p.values(), query.ParseTokens, query.Source.Tokens,
			func(q query.TokensQuery, res query.Result[query.Tokens]) error {
				leftOut(a.stderr, res.Data.Skipped, "offerings")
				if *explain && *format == "table" {
					fmt.Fprintln(a.stdout, analytics.ExplainBands())
				}
				if rows := res.Data.Rows; *explain && len(rows) > 0 && *format == "table" {
					r := rows[0]
					fmt.Fprintf(a.stdout, "cheapest: %s %s %s %s (%s, %s; MFU %s)\n%s\n", r.Provider,
						textsafe.Terminal(r.SKU), textsafe.Terminal(r.Region),
						r.Pricing, r.GPU, q.Precision, r.MFUSource, r.Cost.Explain())
				}
				header, rows := res.Data.Table()
				return output(a.stdout, *format, header, rows, res.Data)
			})
	}
	return cmd
}

func (a *app) spreadsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "spreads",
		Short:   "Hyperscaler vs specialist vs marketplace medians per GPU, pricing kind and day",
		Example: `  gpuprice spreads --gpu H100-SXM-80GB --pricing on_demand --since 90d`,
		Args:    cobra.NoArgs,
	}
	p := newParams(cmd)
	p.String("gpu", "", "GPU: canonical (H100-SXM-80GB), a family (h100) or as typed (\"H100 SXM\"); default all")
	p.String("pricing", "", "pricing kind (default: all)")
	p.window("since", "90d")
	format := formatFlag(p.fl)
	p.scope(scopeHelpGCP)
	p.weight()
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return read(a, cmd, p.values(), query.ParseSpreads, query.Source.Spreads,
			func(_ query.SpreadsQuery, res query.Result[query.Spreads]) error {
				header, rows := res.Data.Table()
				if err := output(a.stdout, *format, header, rows, res.Data); err != nil {
					return err
				}
				if *format == "table" || *format == "markdown" {
					for _, s := range res.Data.Summary {
						carried := ""
						if s.CarriedDays > 0 {
							carried = fmt.Sprintf("; %d of the days were not observed, their prices carried from the last sighting (%s)",
								s.CarriedDays, s.LastSeen)
						}
						fmt.Fprintf(a.stdout,
							"\n%s %s: ratio %.4f on %s → %.4f on %s (%+.2f premium points; min %.4f, max %.4f over %d days%s)\n",
							s.GPU, s.Pricing, s.FirstRatio, s.FirstDay, s.LastRatio, s.LastDay, s.PremiumMoved, s.MinRatio, s.MaxRatio,
							s.Days, carried)
					}
				}
				return nil
			})
	}
	return cmd
}

func (a *app) historyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "What to bring to a negotiation: percentiles, minimum, latest, trend, cheapest offers, reserved discount",
		Example: `  gpuprice history --gpu H100-SXM-80GB --since 180d
  gpuprice history --gpu A100-SXM-80GB --pricing spot --region us-east-1 --format markdown`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	gpu := p.String("gpu", "", "one GPU: canonical (H100-SXM-80GB) or as typed (\"h100 sxm\") (required)")
	p.String("pricing", schemas.OnDemand, "pricing kind")
	p.String("region", "", "provider region")
	p.String("provider", "", "only these providers, comma-separated (aws,lambda) (default: all)")
	p.window("since", "180d")
	p.Count("cheapest", 5, "how many of the cheapest offers to list")
	format := formatFlag(p.fl)
	p.weight()
	p.scope(scopeHelpGCP)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *gpu == "" {
			return usagef("--gpu is required (see `gpuprice gpus`)")
		}
		return read(a, cmd, p.values(), query.ParseHistory, query.Source.History,
			func(_ query.HistoryQuery, res query.Result[analytics.History]) error {
				return a.writeHistory(*format, res.Data)
			})
	}
	return cmd
}

// writeHistory writes history's answer: in a table or Markdown, under a title and
// followed by the composition of the market and the cheapest offers.
func (a *app) writeHistory(format string, h analytics.History) error {
	if format == "table" || format == "markdown" {
		fmt.Fprintf(a.stdout, "%s %s, %s to %s ($/GPU-hour)\n\n", h.GPU, h.Pricing, h.From.Format(time.DateOnly),
			h.To.Add(-time.Second).Format(time.DateOnly))
	}
	header, rows := query.HistoryTable(h)
	if format == "csv" { // one table: the statistics and the cheapest offers
		header, rows = query.HistoryRows(h)
	}
	if err := output(a.stdout, format, header, rows, h); err != nil {
		return err
	}
	if (format == "table" || format == "markdown") && h.Overall.Days > 0 {
		fmt.Fprintln(a.stdout, "\n"+query.Composition(h.Overall))
	}
	if (format == "table" || format == "markdown") && len(h.Cheapest) > 0 {
		fmt.Fprintln(a.stdout, "\ncheapest offers now:")
		header, rows := query.CheapestTable(h)
		return output(a.stdout, format, header, rows, nil)
	}
	return nil
}

func (a *app) indexCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Daily reference price per GPU and pricing kind (trimmed median; hyperscalers apart)",
		Long: "index computes, per day, " + analytics.IndexMethod + "; beside it, " + analytics.ChainedMethod +
			". --explain DAY (with a canonical --gpu and --pricing) lists that day's members and the series left out with the " +
			"reason. See docs/analytics.md.",
		Example: `  gpuprice index --gpu H100-SXM-80GB --since 30d
  gpuprice index --gpu H100-SXM-80GB --pricing on_demand --explain 2026-11-30`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	gpu := p.String("gpu", "", "GPU: canonical, a family (h100) or as typed (default: all)")
	pricing := p.String("pricing", "", "pricing kind (default: all)")
	p.window("since", "30d")
	format := formatFlag(p.fl)
	p.scope(scopeHelpGCP)
	p.weight()
	explainDay := p.fl.String("explain", "",
		"a day (YYYY-MM-DD): its members and exclusions with reasons (needs --gpu and --pricing)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *explainDay != "" {
			return a.explainIndex(cmd, *gpu, *pricing, *explainDay, *format)
		}
		return readTable(a, cmd, p.values(), *format, query.ParseIndex, query.Source.Index, query.IndexTable)
	}
	return cmd
}

// explainIndex prints one day's index members and the series left out, with why.
func (a *app) explainIndex(cmd *cobra.Command, gpu, pricing, day, format string) error {
	if gpu == "" || !schemas.ValidPricing(pricing) {
		return usagef("index --explain: give a canonical --gpu (e.g. H100-SXM-80GB) and a --pricing kind")
	}
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return usagef("index --explain %q: a day, YYYY-MM-DD", day)
	}
	st, err := a.openExistingStore(cmd.Context())
	if err != nil {
		return err
	}
	defer st.Close()
	ro, err := a.rollups(st)
	if err != nil {
		return err
	}
	members, err := query.IndexDay(cmd.Context(), ro, gpu, pricing, d)
	if err != nil {
		return err
	}
	header, rows := query.IndexDayTable(members)
	if format == "table" {
		fmt.Fprintf(a.stdout, "%s %s on %s (%s; %s). Suspect prices are never stored: see `gpuprice quarantine`.\n",
			gpu, pricing, day, analytics.IndexVersion, analytics.ChainedVersion)
	}
	return output(a.stdout, format, header, rows, members)
}

package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	var (
		ff                             filterFlags
		window, bar, at, until, format string
		by                             string
		below                          float64
	)
	cmd := &cobra.Command{
		Use:   "volatility",
		Short: "How much prices swing: log-return volatility, range, drawdown per series or offering",
		Example: `  gpuprice volatility --pricing spot --window 7d
  gpuprice volatility --provider aws --pricing spot --by zone --below 3.5 --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := ff.values("window", window, "bar", bar, "at", at, "until", until, "by", by)
			if below != 0 {
				v.Set("below", strconv.FormatFloat(below, 'g', -1, 64))
			}
			q, err := query.ParseVolatility(v, query.NoCaps)
			if err != nil {
				return query.FlagError(err)
			}
			return a.withReports(cmd, func(src query.Source) error {
				res, err := src.Volatility(cmd.Context(), q)
				if err != nil {
					return err
				}
				a.noteMatches(res.Matched)
				header, rows := res.Data.Table()
				return output(a.stdout, format, header, rows, res.Data)
			})
		},
	}
	ff.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&window, "window", "7d", "length of the window ending --at")
	fl.StringVar(&bar, "bar", "1h", "bar width: 1h or 1d")
	fl.StringVar(&at, "at", "", "end of the window, RFC 3339 or a date (default: now)")
	untilFlag(fl, &until)
	fl.StringVar(&by, "by", "series", "series, offering (GPU × provider × pricing) or zone (per AWS-style zone)")
	fl.Float64Var(&below, "below", 0, "report the share of time below this $/GPU-hour")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	return cmd
}

func (a *app) tokensCmd() *cobra.Command {
	var (
		ff                  filterFlags
		params, mfu, tokens float64
		precision, format   string
		scope               string
		explain, riskAdj    bool
		limit, gpus, nodes  int
		checkpoint, restart = 30 * time.Minute, 10 * time.Minute
	)
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
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !(params > 0) {
				return usagef("--params is required: the model's parameter count, e.g. 7B or 7e9")
			}
			if mfu != 0 && !(mfu > 0 && mfu <= 1) {
				return usagef("--mfu %v: a fraction in (0, 1], e.g. 0.45", mfu)
			}
			if tokens < 0 {
				return usagef("--tokens %v: must not be negative", tokens)
			}
			if p := strings.ToLower(precision); p != analytics.BF16 && p != analytics.FP8 {
				return usagef("--precision %q: use bf16 or fp8", precision)
			}
			g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
			v := ff.values("params", g(params), "precision", precision, "scope", scope)
			if mfu != 0 {
				v.Set("mfu", g(mfu))
			}
			if tokens != 0 {
				v.Set("tokens", g(tokens))
			}
			if limit != 0 {
				v.Set("limit", strconv.Itoa(limit))
			}
			if gpus != 0 {
				v.Set("gpus", strconv.Itoa(gpus))
			}
			if nodes != 0 {
				v.Set("nodes", strconv.Itoa(nodes))
			}
			if riskAdj {
				v.Set("risk-adjusted", "true")
			}
			for _, s := range []struct {
				name string
				d    time.Duration
			}{{"checkpoint", checkpoint}, {"restart", restart}} {
				if riskAdj || cmd.Flags().Changed(s.name) {
					v.Set(s.name, query.FormatSpan(s.d))
				}
			}
			q, err := query.ParseTokens(v, query.NoCaps)
			if err != nil {
				return query.FlagError(err)
			}
			return a.withReports(cmd, func(src query.Source) error {
				res, err := src.Tokens(cmd.Context(), q)
				if err != nil {
					return err
				}
				a.noteMatches(res.Matched)
				leftOut(a.stderr, res.Data.Skipped, "offerings")
				if explain && format == "table" {
					fmt.Fprintln(a.stdout, analytics.ExplainBands())
				}
				if rows := res.Data.Rows; explain && len(rows) > 0 && format == "table" {
					r := rows[0]
					fmt.Fprintf(a.stdout, "cheapest: %s %s %s %s (%s, %s; MFU %s)\n%s\n", r.Provider,
						textsafe.Terminal(r.SKU), textsafe.Terminal(r.Region),
						r.Pricing, r.GPU, q.Precision, r.MFUSource, r.Cost.Explain())
				}
				header, rows := res.Data.Table()
				return output(a.stdout, format, header, rows, res.Data)
			})
		},
	}
	ff.add(cmd)
	ff.addInterconnect(cmd)
	fl := cmd.Flags()
	fl.Var(countFlag(&params), "params", "model parameters, e.g. 7B, 7e9 or 1.5T (required)")
	fl.Float64Var(&mfu, "mfu", 0, "model FLOP utilisation, e.g. 0.5 (default: the published band's midpoint)")
	fl.StringVar(&precision, "precision", analytics.BF16, "bf16 or fp8 (dense peak of the catalog)")
	fl.Float64Var(&tokens, "tokens", 0, "training tokens of the whole run, e.g. 1e11 (adds GPU-hours and cost)")
	fl.BoolVar(&explain, "explain", false, "print the formula with the cheapest offering's numbers")
	fl.IntVar(&limit, "limit", 0, "show at most this many offerings (0: all)")
	fl.IntVar(&gpus, "gpus", 0, "GPUs of the training job (more than an instance has: the job crosses nodes)")
	fl.IntVar(&nodes, "nodes", 0, "nodes of the training job (default one: the interconnect between nodes is not used)")
	fl.BoolVar(&riskAdj, "risk-adjusted", false,
		"add the $ per 1B tokens once interruptions are counted (the offer's band; docs/risk.md), cheapest first on it")
	fl.Var(spanFlag(&checkpoint), "checkpoint", "with --risk-adjusted: time between checkpoints")
	fl.Var(spanFlag(&restart), "restart", "with --risk-adjusted: time from an interruption to work resuming")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	fl.StringVar(&scope, "scope", "instance",
		"price scope compared: instance (whole machines, the default) or gpu_only (GPU-only prices, e.g. GCP accelerator "+
			"SKUs, compared with each other only)")
	return cmd
}

// weightFlag is the --weight flag of every command that computes a percentile,
// median, band or verdict over the market at a time (analytics.MarketMethod).
func weightFlag(fl *pflag.FlagSet, weight *string) {
	fl.StringVar(weight, "weight", "offer", "how each day's market counts: offer (every offer in force once) or provider "+
		"(every provider once, its offers' median, so one provider's many regions cannot outvote the rest)")
}

func (a *app) spreadsCmd() *cobra.Command {
	var gpu, pricing, since, at, until, format, scope, weight string
	cmd := &cobra.Command{
		Use:     "spreads",
		Short:   "Hyperscaler vs specialist vs marketplace medians per GPU, pricing kind and day",
		Example: `  gpuprice spreads --gpu H100-SXM-80GB --pricing on_demand --since 90d`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := query.ParseSpreads(flagValues("gpu", gpu, "pricing", pricing, "since", since, "at", at, "until", until,
				"scope", scope,
				"weight", weight), query.NoCaps)
			if err != nil {
				return query.FlagError(err)
			}
			return a.withReports(cmd, func(src query.Source) error {
				res, err := src.Spreads(cmd.Context(), q)
				if err != nil {
					return err
				}
				a.noteMatches(res.Matched)
				header, rows := res.Data.Table()
				if err := output(a.stdout, format, header, rows, res.Data); err != nil {
					return err
				}
				if format == "table" || format == "markdown" {
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
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&gpu, "gpu", "",
		"GPU: canonical (H100-SXM-80GB), a family (h100) or as typed (\"H100 SXM\"); default all")
	fl.StringVar(&pricing, "pricing", "", "pricing kind (default: all)")
	fl.StringVar(&since, "since", "90d", "length of the window ending --at")
	fl.StringVar(&at, "at", "", "end of the window, RFC 3339 or a date (default: now)")
	untilFlag(fl, &until)
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	fl.StringVar(&scope, "scope", "instance",
		"price scope compared: instance (whole machines, the default) or gpu_only (GPU-only prices, e.g. GCP accelerator "+
			"SKUs, compared with each other only)")
	weightFlag(fl, &weight)
	return cmd
}

func (a *app) historyCmd() *cobra.Command {
	var gpu, pricing, region, provider, since, at, until, format, scope, weight string
	var cheapest int
	cmd := &cobra.Command{
		Use:   "history",
		Short: "What to bring to a negotiation: percentiles, minimum, latest, trend, cheapest offers, reserved discount",
		Example: `  gpuprice history --gpu H100-SXM-80GB --since 180d
  gpuprice history --gpu A100-SXM-80GB --pricing spot --region us-east-1 --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if gpu == "" {
				return usagef("--gpu is required (see `gpuprice gpus`)")
			}
			v := flagValues("gpu", gpu, "pricing", pricing, "region", region, "provider", provider, "since", since, "at", at,
				"until", until, "scope", scope,
				"weight", weight)
			v.Set("cheapest", strconv.Itoa(cheapest))
			q, err := query.ParseHistory(v, query.NoCaps)
			if err != nil {
				return query.FlagError(err)
			}
			return a.withReports(cmd, func(src query.Source) error {
				res, err := src.History(cmd.Context(), q)
				if err != nil {
					return err
				}
				a.noteMatches(res.Matched)
				h := res.Data
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
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&gpu, "gpu", "", "one GPU: canonical (H100-SXM-80GB) or as typed (\"h100 sxm\") (required)")
	fl.StringVar(&pricing, "pricing", schemas.OnDemand, "pricing kind")
	fl.StringVar(&region, "region", "", "provider region")
	fl.StringVar(&provider, "provider", "", "only these providers, comma-separated (aws,lambda) (default: all)")
	fl.StringVar(&since, "since", "180d", "length of the window ending --at")
	fl.StringVar(&at, "at", "", "end of the window, RFC 3339 or a date (default: now)")
	untilFlag(fl, &until)
	fl.IntVar(&cheapest, "cheapest", 5, "how many of the cheapest offers to list")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	weightFlag(fl, &weight)
	fl.StringVar(&scope, "scope", "instance",
		"price scope compared: instance (whole machines, the default) or gpu_only (GPU-only prices, e.g. GCP accelerator "+
			"SKUs, compared with each other only)")
	return cmd
}

func (a *app) indexCmd() *cobra.Command {
	var gpu, pricing, since, at, until, format, explainDay, scope, weight string
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Daily reference price per GPU and pricing kind (trimmed median; hyperscalers apart)",
		Long: "index computes, per day, " + analytics.IndexMethod + "; beside it, " + analytics.ChainedMethod +
			". --explain DAY (with a canonical --gpu and --pricing) lists that day's members and the series left out with the " +
			"reason. See docs/analytics.md.",
		Example: `  gpuprice index --gpu H100-SXM-80GB --since 30d
  gpuprice index --gpu H100-SXM-80GB --pricing on_demand --explain 2026-11-30`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if explainDay != "" {
				return a.explainIndex(cmd, gpu, pricing, explainDay, format)
			}
			q, err := query.ParseIndex(flagValues("gpu", gpu, "pricing", pricing, "since", since, "at", at, "until", until,
				"scope", scope,
				"weight", weight), query.NoCaps)
			if err != nil {
				return query.FlagError(err)
			}
			return a.withReports(cmd, func(src query.Source) error {
				res, err := src.Index(cmd.Context(), q)
				if err != nil {
					return err
				}
				a.noteMatches(res.Matched)
				header, rows := query.IndexTable(res.Data)
				return output(a.stdout, format, header, rows, res.Data)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&gpu, "gpu", "", "GPU: canonical, a family (h100) or as typed (default: all)")
	fl.StringVar(&pricing, "pricing", "", "pricing kind (default: all)")
	fl.StringVar(&since, "since", "30d", "length of the window ending --at")
	fl.StringVar(&at, "at", "", "end of the window, RFC 3339 or a date (default: now)")
	untilFlag(fl, &until)
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	fl.StringVar(&scope, "scope", "instance",
		"price scope compared: instance (whole machines, the default) or gpu_only (GPU-only prices, e.g. GCP accelerator "+
			"SKUs, compared with each other only)")
	weightFlag(fl, &weight)
	fl.StringVar(&explainDay, "explain", "",
		"a day (YYYY-MM-DD): its members and exclusions with reasons (needs --gpu and --pricing)")
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
	bars, err := ro.Bars(cmd.Context(), store.BarQuery{Filter: store.Filter{GPU: gpu, Pricing: pricing,
		Since: d.Add(-store.Daily), Until: d.Add(store.Daily)}, Width: store.Daily, CarryIn: true})
	if err != nil {
		return err
	}
	members := analytics.ExplainIndexDay(bars, d)
	header := []string{"group", "status", "matched", "provider", "series", "price_usd_gpu_hour"}
	var rows [][]string
	for _, m := range members {
		rows = append(rows, []string{m.Group, m.Status, strconv.FormatBool(m.Matched), m.Provider, m.Series,
			query.Num(m.Price)})
	}
	if format == "table" {
		fmt.Fprintf(a.stdout, "%s %s on %s (%s; %s). Suspect prices are never stored: see `gpuprice quarantine`.\n",
			gpu, pricing, day, analytics.IndexVersion, analytics.ChainedVersion)
	}
	if members == nil {
		members = []analytics.IndexMember{}
	}
	return output(a.stdout, format, header, rows, members)
}

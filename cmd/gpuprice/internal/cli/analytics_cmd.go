package cli

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
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

// parseSpan reads a length of time: "90d", "12h", "30m" or any time.ParseDuration
// text; it must be positive.
func parseSpan(flag, s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return 0, fmt.Errorf("--%s %q: not a number of days", flag, s)
		}
		d = time.Duration(v * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("--%s %q: use e.g. 7d, 12h or 30m", flag, s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("--%s %q: must be positive", flag, s)
	}
	return d, nil
}

// parseAt reads --at (RFC 3339 or a date), the end of a window; empty means now.
func parseAt(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("--at %q: use RFC 3339 (2025-03-01T12:00:00Z) or a date (2025-03-01)", s)
}

func (a *app) rollups(st store.Store) (store.Rollups, error) {
	r, ok := st.(store.Rollups)
	if !ok {
		return nil, fmt.Errorf("store %T keeps no bars", st)
	}
	return r, nil
}

// output writes rows as a table, csv or markdown, or v as JSON.
func output(w io.Writer, format string, header []string, rows [][]string, v any) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		if err := cw.WriteAll(rows); err != nil {
			return err
		}
		return cw.Error()
	case "markdown":
		esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
		fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
		fmt.Fprintln(w, "|"+strings.Repeat(" --- |", len(header)))
		for _, r := range rows {
			cells := make([]string, len(r))
			for i, c := range r {
				cells[i] = esc(c)
			}
			fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
		}
		return nil
	case "table":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t"))
		}
		if len(rows) == 0 {
			fmt.Fprintln(tw, "(nothing in the window: run `gpuprice collect` and `gpuprice rollup`, or loosen the filters)")
		}
		return tw.Flush()
	}
	return fmt.Errorf("--format %q: use table, json, csv or markdown", format)
}

func f4(v float64) string  { return strconv.FormatFloat(v, 'f', 4, 64) }
func pct(v float64) string { return strconv.FormatFloat(v*100, 'f', 2, 64) }

func (a *app) rollupCmd() *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "rollup",
		Short: "Recompute the hourly and daily bars from the stored observations (backfill)",
		Long: `rollup recomputes the hourly and daily bars the analytics read, from the
deduplicated observations, for the UTC days since --since (default: everything).
Re-running it is harmless: bars are replaced, never added twice.`,
		Example: "  gpuprice rollup\n  gpuprice rollup --since 3d",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var from time.Time
			if since != "" {
				d, err := parseSpan("since", since)
				if err != nil {
					return err
				}
				from = time.Now().UTC().Add(-d)
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
			if err := r.Rollup(cmd.Context(), from, time.Time{}); err != nil {
				return err
			}
			what := "all days"
			if !from.IsZero() {
				what = "days since " + from.Truncate(store.Daily).Format(time.DateOnly)
			}
			fmt.Fprintf(a.stdout, "rolled up %s in %v\n", what, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only the UTC days that meet the last span, e.g. 3d (default: all)")
	return cmd
}

func (a *app) volatilityCmd() *cobra.Command {
	var (
		ff                      filterFlags
		window, bar, at, format string
		by                      string
		below                   float64
	)
	cmd := &cobra.Command{
		Use:   "volatility",
		Short: "How much prices swing: log-return volatility, range, drawdown per series or offering",
		Example: `  gpuprice volatility --pricing spot --window 7d
  gpuprice volatility --provider aws --pricing spot --by zone --below 3.5 --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := ff.filter()
			if err != nil {
				return err
			}
			win, err := parseSpan("window", window)
			if err != nil {
				return err
			}
			width, err := barWidth(bar)
			if err != nil {
				return err
			}
			end, err := parseAt(at)
			if err != nil {
				return err
			}
			g := analytics.Grouping(by)
			if g != analytics.BySeries && g != analytics.ByOffering && g != analytics.ByZone {
				return fmt.Errorf("--by %q: use series, offering or zone", by)
			}
			f.Since, f.Until = end.Add(-win), end
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			r, err := a.rollups(st)
			if err != nil {
				return err
			}
			bars, err := r.Bars(cmd.Context(), store.BarQuery{Filter: f, Width: width})
			if err != nil {
				return err
			}
			vs := analytics.Volatilities(bars, width, end, below)
			share := func(v float64) string {
				if v < 0 {
					return "-"
				}
				return pct(v)
			}
			if g == analytics.BySeries {
				sort.SliceStable(vs, func(i, j int) bool { return vs[i].Annualised > vs[j].Annualised })
				header := []string{"gpu", "provider", "pricing", "sku", "region", "zone", "bars", "std_log_return",
					"annualised_pct", "cv_pct", "range_pct", "max_drawdown_pct", "changes", "below_pct", "close"}
				var rows [][]string
				for _, v := range vs {
					rows = append(rows, []string{v.GPU, v.Provider, v.Pricing, v.SKU, v.Region, v.Zone,
						strconv.Itoa(v.Bars), strconv.FormatFloat(v.StdLogReturn, 'f', 6, 64), pct(v.Annualised),
						pct(v.CV), pct(v.Range), pct(v.MaxDrawdown), strconv.Itoa(v.Changes), share(v.ShareBelow), f4(v.Close)})
				}
				if vs == nil {
					vs = []analytics.SeriesVolatility{}
				}
				return output(a.stdout, format, header, rows, vs)
			}
			gs := analytics.Group(vs, g)
			header := []string{"gpu", "provider", "pricing", "region", "zone", "series", "std_log_return",
				"annualised_pct", "cv_pct", "range_pct", "max_drawdown_pct", "changes", "below_pct", "median_close"}
			var rows [][]string
			for _, v := range gs {
				rows = append(rows, []string{v.GPU, v.Provider, v.Pricing, v.Region, v.Zone, strconv.Itoa(v.Series),
					strconv.FormatFloat(v.StdLogReturn, 'f', 6, 64), pct(v.Annualised), pct(v.CV), pct(v.Range),
					pct(v.MaxDrawdown), strconv.Itoa(v.Changes), share(v.ShareBelow), f4(v.MedianClose)})
			}
			return output(a.stdout, format, header, rows, gs)
		},
	}
	ff.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&window, "window", "7d", "length of the window ending --at")
	fl.StringVar(&bar, "bar", "1h", "bar width: 1h or 1d")
	fl.StringVar(&at, "at", "", "end of the window, RFC 3339 or a date (default: now)")
	fl.StringVar(&by, "by", "series", "series, offering (GPU × provider × pricing) or zone (per AWS-style zone)")
	fl.Float64Var(&below, "below", 0, "report the share of time below this $/GPU-hour")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	return cmd
}

func barWidth(s string) (time.Duration, error) {
	switch s {
	case "1h", "hour":
		return store.Hourly, nil
	case "1d", "24h", "day":
		return store.Daily, nil
	}
	return 0, fmt.Errorf("--bar %q: use 1h or 1d", s)
}

func (a *app) tokensCmd() *cobra.Command {
	var (
		ff                  filterFlags
		params, mfu, tokens float64
		precision, format   string
		explain             bool
		limit               int
	)
	cmd := &cobra.Command{
		Use:   "tokens",
		Short: "Effective $ per 1B training tokens of every offering, cheapest first",
		Long: `tokens turns each offering's latest $/GPU-hour into the cost of training tokens:

  $ per 1B tokens = price_usd_gpu_hour × 1e9 × 6 × params / (peak_dense_flops × MFU × 3600)

The MFU is --mfu, else the midpoint of the published band for the GPU, the
provider and the offering's interconnect (see docs/analytics.md). Offerings
whose GPU has no band (or no FP8 with --precision fp8) are left out and counted.`,
		Example: `  gpuprice tokens --params 7e9 --gpu H100-SXM-80GB --pricing on_demand
  gpuprice tokens --params 70e9 --tokens 1.4e12 --precision fp8 --explain`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := ff.filter()
			if err != nil {
				return err
			}
			if !(params > 0) {
				return errors.New("--params: give the model's parameter count, e.g. 7e9")
			}
			if mfu != 0 && !(mfu > 0 && mfu <= 1) {
				return fmt.Errorf("--mfu %v: a fraction in (0, 1], e.g. 0.45", mfu)
			}
			if tokens < 0 {
				return fmt.Errorf("--tokens %v: must not be negative", tokens)
			}
			if p := strings.ToLower(precision); p != analytics.BF16 && p != analytics.FP8 {
				return fmt.Errorf("--precision %q: use bf16 or fp8", precision)
			}
			cat, err := schemas.LoadCatalog()
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			latest, err := st.Latest(cmd.Context(), f)
			if err != nil {
				return err
			}
			latest = analytics.CurrentOnly(latest, analytics.StaleAfter) // offers still listed, not withdrawn ones
			type row struct {
				Provider     string              `json:"provider"`
				SKU          string              `json:"sku"`
				Region       string              `json:"region"`
				Zone         string              `json:"zone"`
				Pricing      string              `json:"pricing"`
				GPU          string              `json:"gpu"`
				Interconnect string              `json:"interconnect"`
				MFUSource    string              `json:"mfu_source"`
				Cost         analytics.TokenCost `json:"cost"`
			}
			var rows []row
			skipped := map[string]int{}
			for _, o := range latest {
				g, ok := cat.Lookup(o.GPU)
				if !ok {
					skipped["GPU not in the catalog"]++
					continue
				}
				peak, err := analytics.PeakTFLOPS(g, precision)
				if err != nil {
					skipped[err.Error()]++
					continue
				}
				m, src := mfu, "--mfu"
				if m == 0 {
					band, err := analytics.MFUFor(o.GPU, o.Provider, o.Interconnect)
					if err != nil {
						skipped["no published MFU band (pass --mfu)"]++
						continue
					}
					m, src = band.Mid(), band.String()+" midpoint; "+band.Source
				}
				c, err := analytics.Tokens(o.PriceUSDGPUHour, params, peak, m, tokens)
				if err != nil {
					return err
				}
				rows = append(rows, row{o.Provider, o.SKU, o.Region, o.Zone, o.Pricing, o.GPU, o.Interconnect, src, c})
			}
			sort.SliceStable(rows, func(i, j int) bool { return rows[i].Cost.USDPer1BTokens < rows[j].Cost.USDPer1BTokens })
			if limit > 0 && len(rows) > limit {
				rows = rows[:limit]
			}
			for reason, n := range skipped {
				a.log.Warn("offerings left out", "reason", reason, "count", n)
			}
			if explain && len(rows) > 0 && format == "table" {
				r := rows[0]
				fmt.Fprintf(a.stdout, "cheapest: %s %s %s %s (%s, %s; MFU %s)\n%s\n", r.Provider, r.SKU, r.Region,
					r.Pricing, r.GPU, precision, r.MFUSource, r.Cost.Explain())
			}
			header := []string{"gpu", "provider", "pricing", "sku", "region", "zone", "usd_gpu_hour", "mfu",
				"tokens_per_gpu_hour", "usd_per_1b_tokens"}
			if tokens > 0 { // the whole run's figures only when --tokens says how long it is
				header = append(header, "gpu_hours", "run_usd")
			}
			var out [][]string
			for _, r := range rows {
				line := []string{r.GPU, r.Provider, r.Pricing, r.SKU, r.Region, r.Zone, f4(r.Cost.PriceUSDGPUHour),
					strconv.FormatFloat(r.Cost.MFU, 'f', 3, 64), strconv.FormatFloat(r.Cost.TokensPerGPUHour, 'f', 0, 64),
					f4(r.Cost.USDPer1BTokens)}
				if tokens > 0 {
					line = append(line, strconv.FormatFloat(r.Cost.GPUHours, 'f', 1, 64), strconv.FormatFloat(r.Cost.RunUSD, 'f', 2, 64))
				}
				out = append(out, line)
			}
			if rows == nil {
				rows = []row{}
			}
			return output(a.stdout, format, header, out, rows)
		},
	}
	ff.add(cmd)
	fl := cmd.Flags()
	fl.Float64Var(&params, "params", 0, "model parameters, e.g. 7e9 (required)")
	fl.Float64Var(&mfu, "mfu", 0, "model FLOP utilisation, e.g. 0.5 (default: the published band's midpoint)")
	fl.StringVar(&precision, "precision", analytics.BF16, "bf16 or fp8 (dense peak of the catalog)")
	fl.Float64Var(&tokens, "tokens", 0, "training tokens of the whole run, e.g. 1e11 (adds GPU-hours and cost)")
	fl.BoolVar(&explain, "explain", false, "print the formula with the cheapest offering's numbers")
	fl.IntVar(&limit, "limit", 0, "show at most this many offerings (0: all)")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	return cmd
}

// dayPrices reads the daily bars of f (with the bar in force before the window)
// and lays them on the days of [end − span, end). A series its provider no longer
// lists stops the day after its last sighting (analytics.PriceEnd), as `prices`
// and `tokens` leave it out.
func (a *app) dayPrices(cmd *cobra.Command, st store.Store, f store.Filter, span time.Duration, end time.Time) ([]analytics.DayPrice, time.Time, time.Time, error) {
	r, err := a.rollups(st)
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	to := end.Truncate(store.Daily).Add(store.Daily) // through the day of end
	from := to.Add(-span).Truncate(store.Daily)
	f.Since, f.Until = from, to
	bars, err := r.Bars(cmd.Context(), store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true})
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	return analytics.DailyPrices(bars, from, to), from, to, nil
}

// loadDayPrices parses --since and --at, opens the store and reads the day prices of f
// over the window (see dayPrices).
func (a *app) loadDayPrices(cmd *cobra.Command, f store.Filter, since, at string) ([]analytics.DayPrice, time.Time, time.Time, error) {
	span, err := parseSpan("since", since)
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	end, err := parseAt(at)
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	st, err := a.openStore(cmd.Context())
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	defer st.Close()
	return a.dayPrices(cmd, st, f, span, end)
}

func (a *app) spreadsCmd() *cobra.Command {
	var gpu, pricing, since, at, format string
	cmd := &cobra.Command{
		Use:     "spreads",
		Short:   "Hyperscaler vs specialist vs marketplace medians per GPU, pricing kind and day",
		Example: `  gpuprice spreads --gpu H100-SXM-80GB --pricing on_demand --since 90d`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ff := filterFlags{gpu: gpu, pricing: pricing}
			f, err := ff.filter()
			if err != nil {
				return err
			}
			prices, _, _, err := a.loadDayPrices(cmd, f, since, at)
			if err != nil {
				return err
			}
			days := analytics.Spreads(prices)
			sum := analytics.SummariseSpreads(days)
			header := []string{"gpu", "pricing", "day", "hyperscaler", "specialist", "marketplace", "ratio", "premium_pct", "n_h", "n_s", "n_m"}
			var rows [][]string
			for _, d := range days {
				rows = append(rows, []string{d.GPU, d.Pricing, d.Day.Format(time.DateOnly), f4(d.Hyperscaler), f4(d.Specialist),
					f4(d.Marketplace), f4(d.Ratio), strconv.FormatFloat(d.PremiumPct, 'f', 2, 64),
					strconv.Itoa(d.NHyperscaler), strconv.Itoa(d.NSpecialist), strconv.Itoa(d.NMarketplace)})
			}
			if days == nil {
				days = []analytics.SpreadDay{}
			}
			if err := output(a.stdout, format, header, rows, struct {
				Days    []analytics.SpreadDay     `json:"days"`
				Summary []analytics.SpreadSummary `json:"summary"`
			}{days, sum}); err != nil {
				return err
			}
			if format == "table" || format == "markdown" {
				for _, s := range sum {
					fmt.Fprintf(a.stdout, "\n%s %s: ratio %.4f on %s → %.4f on %s (%+.2f premium points; min %.4f, max %.4f over %d days)\n",
						s.GPU, s.Pricing, s.FirstRatio, s.FirstDay, s.LastRatio, s.LastDay, s.PremiumMoved, s.MinRatio, s.MaxRatio, s.Days)
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&gpu, "gpu", "", "canonical GPU (default: all)")
	fl.StringVar(&pricing, "pricing", "", "pricing kind (default: all)")
	fl.StringVar(&since, "since", "90d", "length of the window ending --at")
	fl.StringVar(&at, "at", "", "end of the window, RFC 3339 or a date (default: now)")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	return cmd
}

func (a *app) historyCmd() *cobra.Command {
	var gpu, pricing, region, since, at, format string
	var cheapest int
	cmd := &cobra.Command{
		Use:   "history",
		Short: "What to bring to a negotiation: percentiles, minimum, latest, trend, cheapest offers, reserved discount",
		Example: `  gpuprice history --gpu H100-SXM-80GB --since 180d
  gpuprice history --gpu A100-SXM-80GB --pricing spot --region us-east-1 --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if gpu == "" {
				return errors.New("--gpu is required (see `gpuprice gpus`)")
			}
			if !schemas.ValidPricing(pricing) {
				return fmt.Errorf("--pricing %q: not a pricing kind", pricing)
			}
			// Every pricing kind: the others give the reserved discount.
			prices, from, to, err := a.loadDayPrices(cmd, store.Filter{GPU: gpu, Region: region}, since, at)
			if err != nil {
				return err
			}
			h := analytics.HistoryOf(gpu, pricing, prices, from, to, cheapest)
			header := []string{"provider", "series", "samples", "p10", "p25", "p50", "p75", "p90", "min", "latest",
				"latest_median", "trend_per_30d", "trend_pct_per_30d", "reserved_discount_pct"}
			var rows [][]string
			for _, s := range append([]analytics.HistoryStats{h.Overall}, h.Providers...) {
				rows = append(rows, []string{s.Provider, strconv.Itoa(s.Series), strconv.Itoa(s.Samples), f4(s.P10), f4(s.P25),
					f4(s.P50), f4(s.P75), f4(s.P90), f4(s.Min), f4(s.Latest), f4(s.LatestMedian), f4(s.TrendPer30d),
					strconv.FormatFloat(s.TrendPctPer30d, 'f', 2, 64), strconv.FormatFloat(s.ReservedDiscountPct, 'f', 2, 64)})
			}
			if format == "table" || format == "markdown" {
				fmt.Fprintf(a.stdout, "%s %s, %s to %s ($/GPU-hour)\n\n", gpu, pricing, from.Format(time.DateOnly), to.Add(-time.Second).Format(time.DateOnly))
			}
			if err := output(a.stdout, format, header, rows, h); err != nil {
				return err
			}
			if (format == "table" || format == "markdown") && len(h.Cheapest) > 0 {
				fmt.Fprintln(a.stdout, "\ncheapest offers now:")
				var crow [][]string
				for _, o := range h.Cheapest {
					seen := "-"
					if !o.LastSeen.IsZero() {
						seen = o.LastSeen.Format(time.RFC3339)
					}
					crow = append(crow, []string{f4(o.Price), o.Provider, o.Tier, o.SKU, o.Region, o.Zone, o.Since.Format(time.DateOnly), seen})
				}
				return output(a.stdout, format, []string{"usd_gpu_hour", "provider", "tier", "sku", "region", "zone", "since", "last_seen"}, crow, nil)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&gpu, "gpu", "", "canonical GPU (required)")
	fl.StringVar(&pricing, "pricing", schemas.OnDemand, "pricing kind")
	fl.StringVar(&region, "region", "", "provider region, verbatim")
	fl.StringVar(&since, "since", "180d", "length of the window ending --at")
	fl.StringVar(&at, "at", "", "end of the window, RFC 3339 or a date (default: now)")
	fl.IntVar(&cheapest, "cheapest", 5, "how many of the cheapest offers to list")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	return cmd
}

func (a *app) indexCmd() *cobra.Command {
	var gpu, pricing, since, at, format string
	cmd := &cobra.Command{
		Use:     "index",
		Short:   "Daily reference price per GPU and pricing kind (trimmed median; hyperscalers apart)",
		Long:    "index computes, per day, " + analytics.IndexMethod + ". See docs/analytics.md.",
		Example: `  gpuprice index --gpu H100-SXM-80GB --since 30d`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ff := filterFlags{gpu: gpu, pricing: pricing}
			f, err := ff.filter()
			if err != nil {
				return err
			}
			prices, _, _, err := a.loadDayPrices(cmd, f, since, at)
			if err != nil {
				return err
			}
			idx := analytics.Index(prices)
			header := []string{"gpu", "pricing", "group", "day", "usd_gpu_hour", "offers", "dropped", "method"}
			var rows [][]string
			for _, p := range idx {
				rows = append(rows, []string{p.GPU, p.Pricing, p.Group, p.Day.Format(time.DateOnly), f4(p.Price),
					strconv.Itoa(p.Offers), strconv.Itoa(p.Dropped), p.Method})
			}
			if idx == nil {
				idx = []analytics.IndexPoint{}
			}
			return output(a.stdout, format, header, rows, idx)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&gpu, "gpu", "", "canonical GPU (default: all)")
	fl.StringVar(&pricing, "pricing", "", "pricing kind (default: all)")
	fl.StringVar(&since, "since", "30d", "length of the window ending --at")
	fl.StringVar(&at, "at", "", "end of the window, RFC 3339 or a date (default: now)")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	return cmd
}

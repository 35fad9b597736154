package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

func init() {
	addCommand((*app).fxCmd)
	addCommand((*app).seriesCmd)
}

// untilFlag adds --until, the end of the window as --at gives it, also as a span back
// from now (2w: two weeks ago), parsed as --since is (query.ParseUntil).
func untilFlag(fl *pflag.FlagSet, until *string) {
	fl.StringVar(until, "until", "", untilHelp)
}

// sinceUntilFlags adds --since and --until bounding what a record command lists.
func sinceUntilFlags(fl *pflag.FlagSet, since, until *string, what string) {
	fl.StringVar(since, "since", "", sinceHelp(what))
	fl.StringVar(until, "until", "", untilListHelp(what))
}

// sinceUntil adds --since and --until, parameters bounding what a record command lists.
func (p *params) sinceUntil(what string) {
	p.String("since", "", sinceHelp(what))
	p.String("until", "", untilListHelp(what))
}

func sinceHelp(what string) string {
	return "only " + what + " at or after this: a span back from --until or now (2w, 90d, 36h), a date or an RFC 3339 time"
}

func untilListHelp(what string) string {
	return "only " + what + " before this: a span back from now (2w, 36h), a date or an RFC 3339 time"
}

func checkFormat(format string, allowed ...string) error {
	for _, f := range allowed {
		if format == f {
			return nil
		}
	}
	return usagef("--format %q: use %s", format, strings.Join(allowed, ", "))
}

func (a *app) runsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Show collection run records, newest first",
		Example: `  gpuprice runs --source azure
  gpuprice runs --since 2d --format markdown
  gpuprice runs --since 2026-11-01 --until 2026-11-02 --limit 0 --format csv`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.String("source", "", "only this source")
	p.Count("limit", 20, "at most this many (0: all)")
	p.sinceUntil("runs that started")
	format := formatFlag(p.fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return readTable(a, cmd, p.values(), *format, query.ParseRuns, query.Source.Runs, query.RunsTable,
			"(no run recorded in this window: `gpuprice collect` records one per source)")
	}
	return cmd
}

func (a *app) quarantineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quarantine",
		Short: "Show rows that failed validation, with the reason, newest first",
		Example: `  gpuprice quarantine
  gpuprice quarantine --since 1d --format json
  gpuprice quarantine --since 2026-11-01 --until 2026-11-08 --limit 0 --format csv > held.csv`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.Count("limit", 50, "at most this many (0: all)")
	p.sinceUntil("rows quarantined")
	format := formatFlag(p.fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		// An empty quarantine is good news: every row read passed the gates.
		return readTable(a, cmd, p.values(), *format, query.ParseQuarantine, query.Source.Quarantine,
			query.QuarantineTable, "(nothing quarantined in this window: every row read passed validation; "+
				"rows a provider says are not offered are counted in `gpuprice runs`, not kept here)")
	}
	cmd.AddCommand(a.quarantineReleaseCmd())
	return cmd
}

func (a *app) quarantineReleaseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "release ID...",
		Short: "Store suspect rows a person confirmed (ids from `gpuprice quarantine`)",
		Long: `release stores rows the suspect gate held (reason "suspect: …": a price under a
quarter or over four times the median of its current peers, see ingest.suspect in
the configuration) once a person has confirmed the price is real. Each row is
normalised again with every other gate, marked attrs.released_from_quarantine = ID,
written with run id release-ID and a run record of source quarantine-release; the
bars of its day are rebuilt. Rows quarantined for any other reason cannot be
released: fix the source or the configuration and collect again.`,
		Example: `  gpuprice quarantine | grep suspect
  gpuprice quarantine release 3f2a9c01be77`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, ids []string) error {
			r, err := a.openRunner(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer r.Store.Close()
			rows, err := r.Store.Quarantine(cmd.Context(), 0)
			if err != nil {
				return err
			}
			byID := map[string]schemas.Quarantined{}
			for _, q := range rows {
				byID[q.ID()] = q
			}
			for _, id := range ids {
				q, ok := byID[strings.TrimSpace(id)]
				if !ok {
					return fmt.Errorf("quarantine release: no quarantined row has id %q (see `gpuprice quarantine --limit 0`)", id)
				}
				o, err := r.ReleaseSuspect(cmd.Context(), q)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "released %s: %s %s %s %s $%s/GPU-h\n", id, o.Provider, o.SKU, o.Region, o.Pricing,
					query.Num(o.PriceUSDGPUHour))
			}
			return nil
		},
	}
}

func (a *app) fxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "fx",
		Example: `  gpuprice fx --currency EUR
  gpuprice fx --days 7 --format markdown`,
		Short: "Show the stored FX reference rates (USD per unit) used to convert prices",
		Long: `fx lists the ECB daily reference rates gpuprice stored (refreshed by every
collect unless sources.fx.enabled is false), as US dollars per unit of each currency.
Every converted observation keeps the rate it used in fx_rate.`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.String("currency", "", "only this ISO 4217 currency, e.g. EUR")
	p.Count("days", 0, "only the last N days (0: all)")
	format := formatFlag(p.fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return readTable(a, cmd, p.values(), *format, query.ParseFX, query.Source.FX, query.FXTable)
	}
	return cmd
}

func (a *app) sourcesCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use: "sources",
		Example: `  gpuprice sources
  gpuprice sources --format json`,
		Short: "List every source: pricing kinds, method, credentials, schedule, last run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, query.Formats...); err != nil {
				return err
			}
			rows := a.sourceDefs()
			err := a.withReports(cmd, func(src query.Source) error {
				res, err := src.Sources(cmd.Context(), query.SourcesQuery{})
				if err == nil {
					rows = res.Data
				}
				return err
			})
			if err != nil && !errors.Is(err, errNoStore) { // no store yet: no run to show
				a.log.Warn("store not readable: last runs not shown", "error", err.Error())
			}
			header, cells := query.SourcesTable(rows)
			return output(a.stdout, format, header, cells, rows, "")
		},
	}
	cmd.Flags().StringVar(&format, "format", "table",
		"table, json, csv or markdown (json adds endpoints and descriptions)")
	return cmd
}

func (a *app) gpusCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gpus",
		Short: "List the GPU catalog (dense TFLOPS, memory, bandwidth, TDP, sources)",
		Long: `gpus lists the canonical GPUs that --gpu filters take, with dense (never
with-sparsity) BF16 and FP8 TFLOPS and the source of every figure. --gpu NAME lists
the GPUs a name as typed matches (h100: every H100 variant).
--explain NAME shows how a provider's GPU name is placed on the catalog; with
--provider P (and --sku, --memory as the source reads them) it applies P's SKU rules
and assumptions exactly as collection does, and says what collection stores.`,
		Example: `  gpuprice gpus
  gpuprice gpus --gpu h100
  gpuprice gpus --explain "NVIDIA H100 80GB HBM3"
  gpuprice gpus --explain H100 --provider ovhcloud --sku h100-380 --memory 80`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	format := formatFlag(p.fl)
	p.String("gpu", "", "only the GPUs this name matches (h100, \"H100 SXM\", a100-80gb)")
	// --explain and what it reads are no parameters: the catalog's answer is printed.
	explain := p.fl.String("explain", "", "show how this provider GPU name is canonicalised")
	provider := p.fl.String("provider", "", "with --explain: the provider whose rules apply (aws, ovhcloud, runpod…)")
	sku := p.fl.String("sku", "", "with --explain: the SKU the source reads (p5.48xlarge, h100-380…)")
	memGB := p.fl.Float64("memory", 0, "with --explain: the memory of one GPU the source reads, in GB")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		cat, err := schemas.DefaultCatalog()
		if err != nil {
			return err
		}
		if *explain != "" {
			return a.explainGPU(cat, schemas.Hint{Provider: *provider, Name: *explain, SKU: *sku, MemoryGB: *memGB})
		}
		if err := checkFormat(*format, query.Formats...); err != nil {
			return err
		}
		q, err := query.ParseGPUs(p.values(), query.NoCaps)
		if err != nil {
			return query.FlagError(err)
		}
		r := &query.Reader{Catalog: cat} // the catalog needs no store
		res, err := r.GPUs(cmd.Context(), q)
		if err != nil {
			return query.FlagError(err)
		}
		a.noteMatches(res.Matched)
		header, cells := query.GPUsTable(res.Data)
		return output(a.stdout, *format, header, cells, res.Data, "(no GPU matches)")
	}
	return cmd
}

// explainGPU says how collection places a provider's GPU name: the answer with its
// reason, what the provider's rows carry and where an unplaced name goes, and the
// placed GPU's dense figure and MFU class.
func (a *app) explainGPU(cat *schemas.Catalog, h schemas.Hint) error {
	id, why := cat.Explain(h)
	fmt.Fprintf(a.stdout, "%s → %s (%s)\n", h.Name, id, why)
	if h.Provider != "" {
		p := a.cfg.ProviderCatalog().Lookup(h.Provider)
		fmt.Fprintf(a.stdout,
			"collection (%s, tier %s): each row keeps the name verbatim in gpu_name, with sku %q and %s GB per GPU;\n"+
				"  ingest places it with %s's SKU rules and assumptions, as above; a name it cannot place is stored as gpu "+
				"\"unknown\"\n"+
				"  (left out of GPU filters, spreads and the index) and counted in the run's unknown_gpus.\n"+
				"  multi-GPU rows without their own interconnect get %s's: %s.\n",
			h.Provider, p.Tier, h.SKU, fnum(h.MemoryGB), h.Provider, h.Provider, p.Interconnect)
	}
	if g, ok := cat.Lookup(id); ok {
		if peak := g.PeakDenseTFLOPS(); peak > 0 {
			fmt.Fprintf(a.stdout, "%s: %s GB %s, %s, dense %s TFLOPS (sources %s)\n", g.ID, fnum(g.MemoryGB), g.MemoryType,
				g.FormFactor, fnum(peak), strings.Join(g.Sources, " "))
		} else {
			fmt.Fprintf(a.stdout, "%s: %s GB %s, %s, no dense figure is known: %s (sources %s); tokens leaves it out\n", g.ID,
				fnum(g.MemoryGB), g.MemoryType, g.FormFactor, g.NoDenseFigure, strings.Join(g.Sources, " "))
		}
	}
	return nil
}

func (a *app) seriesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "series",
		Short: "One series over a window: its observations and its hourly or daily bars",
		Long: `series shows one series (provider, sku, region, zone, pricing kind; see prices)
over the window of --since ending --at: the table lists its bars, --format json
adds every observation (collected and imported).`,
		Example: `  gpuprice series --provider lambda --sku gpu_8x_h100_sxm_80gb --pricing on_demand --since 30d --bar 1d`,
		Args:    cobra.NoArgs,
	}
	p := newParams(cmd)
	p.String("provider", "", "provider (required)")
	p.String("sku", "", "SKU (required)")
	p.String("region", "", "region, verbatim")
	p.String("zone", "", "zone, verbatim")
	p.String("pricing", "", "pricing kind (required)")
	p.window("since", "30d")
	p.String("bar", "1h", "bar width: 1h or 1d")
	p.Int("limit", 0, "at most this many observations (0: all)")
	p.weight()
	format := formatFlag(p.fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return read(a, cmd, p.values(), query.ParseSeries, query.Source.Series,
			func(_ query.SeriesQuery, res query.Result[query.Series]) error {
				header, rows := res.Data.Table()
				if res.Empty != "" && *format != "table" {
					fmt.Fprintf(a.stderr, "gpuprice: %s\n", res.Empty)
				}
				return output(a.stdout, *format, header, rows, res.Data, "("+res.Empty+")")
			})
	}
	return cmd
}

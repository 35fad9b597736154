package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// CSVHeader is the column list of `prices --format csv`, which `import csv` reads back.
var CSVHeader = query.CSVHeader

func fnum(v float64) string { return query.Num(v) }

func (a *app) pricesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prices",
		Short: "The latest price of every series, cheapest per GPU-hour first",
		Long: `prices lists the latest price of every series (provider, sku, region, zone,
pricing kind) still on offer, grouped by pricing kind (on-demand, spot, reserved, commitments) unless
--pricing names one, cheapest per GPU-hour first within each. A series counts as on offer
when it was observed within --stale of its provider's newest observation, so offers a
marketplace no longer lists drop out after the next collection; --all-series lists
every series ever seen. Derived prices (OCI preemptible at 50 % of on-demand) and
"from $X" floors are left out unless --include-derived is given; the SCOPE column
says whether a price covers the whole instance or the GPU alone (docs/analytics.md).

--gpu takes names as people type them: a canonical id (H100-SXM-80GB), a family
(h100: every H100 variant) or a model with form factor or memory ("H100 SXM",
a100-80gb); what a name matched is said on stderr, and a name that matches nothing
is an error with the nearest names. --provider, --pricing and --region likewise.`,
		Example: `  gpuprice prices --gpu H100-SXM-80GB --pricing on_demand
  gpuprice prices --gpu h100 --pricing spot
  gpuprice prices --provider vast --pricing spot --format csv > vast.csv
  gpuprice prices --provider lambda --explain   # published figure → $/GPU-hour, step by step`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.filters()
	p.interconnect()
	format := formatFlag(p.fl)
	p.Int("limit", 0, "show at most this many rows (0: all)")
	stale := analytics.StaleAfter
	p.fl.Var(spanFlag(&stale), "stale",
		"drop series not seen within this long of their provider's newest observation (7d, 36h, 2w)")
	p.send("stale", func() (string, bool) { return query.FormatSpan(stale), true })
	p.Bool("all-series", "list every series ever seen, withdrawn offers included")
	p.Bool("include-derived", "also list derived prices and \"from\" floors (marked in the BASIS column)")
	explain := p.fl.Bool("explain", false,
		"show how each published figure became $/GPU-hour (currency, FX rate and date, unit, GPU count, scope, basis)")
	riskAdjusted := p.fl.Bool("risk-adjusted", false,
		"add the expected $ per GPU-hour of work once interruptions are counted (docs/risk.md)")
	checkpoint, restart := 30*time.Minute, 10*time.Minute
	p.fl.Var(spanFlag(&checkpoint), "checkpoint", "with --risk-adjusted: time between checkpoints")
	p.fl.Var(spanFlag(&restart), "restart", "with --risk-adjusted: time from an interruption to work resuming")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		var src query.Source // --risk-adjusted reads the signals of the same source
		ask := func(s query.Source, ctx context.Context, q query.PricesQuery) (query.Result[[]schemas.Observation], error) {
			src = s
			return s.Prices(ctx, q)
		}
		return read(a, cmd, p.values(), query.ParsePrices, ask,
			func(_ query.PricesQuery, res query.Result[[]schemas.Observation]) error {
				a.noteRecorded(res.Data)
				if res.Empty != "" {
					if *format == "table" {
						return query.Write(a.stdout, "table", query.PricesColumns, nil, nil, "(no prices: "+res.Empty+")")
					}
					fmt.Fprintf(a.stderr, "gpuprice: no prices: %s\n", res.Empty)
				}
				if *riskAdjusted {
					return a.writeRiskAdjusted(cmd, src, *format, res.Data, checkpoint, restart, *explain)
				}
				if *explain {
					return writeExplained(a.stdout, *format, res.Data)
				}
				return writeObservations(a.stdout, *format, res.Data)
			})
	}
	return cmd
}

// writeRiskAdjusted writes rows with their expected cost per GPU-hour of work
// (query.RiskAdjust); --explain adds each computation.
func (a *app) writeRiskAdjusted(cmd *cobra.Command, src query.Source, format string, rows []schemas.Observation,
	checkpoint, restart time.Duration, explain bool) error {
	ss, ok := src.(query.SignalSource)
	if !ok {
		return fmt.Errorf("--risk-adjusted: this source of prices reads no signals")
	}
	job := analytics.SpotJob{CheckpointMin: checkpoint.Minutes(), RestartMin: restart.Minutes()}
	adj, err := query.RiskAdjust(cmd.Context(), ss, rows, job, explain)
	if err != nil {
		return err
	}
	header, table := query.RiskAdjustedTable(adj)
	if err := output(a.stdout, format, header, table, adj); err != nil || !explain || format != "table" {
		return err
	}
	for _, r := range adj {
		if r.Risk.Explained != "" {
			fmt.Fprintf(a.stdout, "\n%s %s %s %s:\n%s", r.Provider, r.SKU, r.Region, r.Pricing, r.Risk.Explained)
		}
	}
	return nil
}

// explained is a row of `prices --explain --format json`: the observation and the
// steps from its published figure to its $/GPU-hour.
type explained struct {
	schemas.Observation
	Explain schemas.PriceSteps `json:"explain"`
}

// writeExplained writes rows with how each price was derived: JSON objects with an
// "explain" member, or for a table, the table followed by each row's steps.
func writeExplained(w io.Writer, format string, rows []schemas.Observation) error {
	switch format {
	case "json":
		out := make([]explained, 0, len(rows))
		for _, o := range rows {
			out = append(out, explained{o, schemas.ExplainPrice(o)})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "table":
		if err := writeObservations(w, format, rows); err != nil {
			return err
		}
		for _, o := range rows {
			fmt.Fprintf(w, "\n%s %s %s %s %s:\n", o.Provider, o.SKU, o.Region, o.Zone, o.Pricing)
			for _, s := range schemas.ExplainPrice(o).Steps {
				fmt.Fprintln(w, "  "+s)
			}
		}
		return nil
	}
	return usagef("--explain: use --format table or json")
}

func writeObservations(w io.Writer, format string, rows []schemas.Observation) error {
	return query.WriteObservations(w, format, rows)
}

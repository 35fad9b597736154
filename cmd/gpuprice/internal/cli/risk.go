package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/scrapers/aws"
)

func init() { addCommand((*app).riskCmd) }

// signalFilters adds the filters of the commands that read signals (risk,
// availability): --provider, --sku (said as sku says), --region and --gpu.
func (p *params) signalFilters(sku string) {
	p.String("provider", "", "provider")
	p.String("sku", "", sku)
	p.String("region", "", "provider region")
	p.String("gpu", "", "GPUs as typed, separated by commas (H100,a100 40gb; a family selects each variant)")
}

func (a *app) riskCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "risk",
		Short: "Interruption band history: each offer's first band and every move since (docs/risk.md)",
		Long: `risk lists the stored interruption signals as a history per (provider, sku, region):
the first band of each and every move up or down after it, with the interruption
rate λ per hour the band is read as (docs/risk.md, "Band to rate"). Within --since,
a move is a move from the band in force when the window began, and without
--changes that band is listed first. The same answer is GET /api/v1/risk.`,
		Example: `  gpuprice risk import-spot-advisor spot-advisor-data.json --at 2025-06-28
  gpuprice risk import-spot-advisor-history ~/spotinfo
  gpuprice risk --sku p5.48xlarge --changes
  gpuprice risk --gpu h100 --changes --since 30d`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.signalFilters("SKU (an instance type: p5.48xlarge)")
	p.String("since", "", "from this time (a date, RFC 3339, or a duration back: 90d)")
	p.String("until", "", "before this time (as --since)")
	p.Bool("changes", "only the moves between bands")
	format := formatFlag(p.fl)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return readTable(a, cmd, p.values(), *format, query.ParseRisk, query.Source.Risk, query.RiskHistory.Table,
			"no interruption band stored matches")
	}
	cmd.AddCommand(a.riskImportCmd(), a.riskImportHistoryCmd())
	return cmd
}

func (a *app) riskImportCmd() *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "import-spot-advisor FILE",
		Short: "Store the interruption bands of a saved AWS Spot Advisor file (spot-advisor-data.json) as of --at",
		Long: `import-spot-advisor reads a copy of https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json
and stores the band of every GPU instance type and region (Linux) as of --at, the
date the copy was taken (the file carries none). Importing dated copies builds the
band history that ` + "`gpuprice risk`" + ` shows.`,
		Example: `  gpuprice risk import-spot-advisor spot-advisor-data.json --at 2025-06-28`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if at == "" {
				return usagef("--at is required: the date the copy was taken")
			}
			when, err := parseWhen(at, time.Now().UTC())
			if err != nil {
				return usagef("--at: %v", err)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			res, err := aws.ParseSpotAdvisor(f, when)
			if err != nil {
				return err
			}
			for i := range res.Signals {
				res.Signals[i].SourceURL = "file:" + args[0]
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			imp, err := ingest.ImportSignals(cmd.Context(), st, "import:"+aws.SourceSpotAdvisor, res.Signals, res.Rejects,
				time.Now())
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "stored %d interruption bands as of %s (run %s, %s)\n", imp.Run.RowsStored,
				when.Format(time.RFC3339), imp.Run.RunID, imp.Run.Status)
			return err
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "the date the copy was taken (required): 2025-06-28 or RFC 3339")
	return cmd
}

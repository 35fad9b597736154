package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/report"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// CSVHeader is the column list of `prices --format csv`, which `import csv` reads back.
var CSVHeader = report.CSVHeader

func fnum(v float64) string { return report.Num(v) }

type filterFlags struct {
	gpu, provider, pricing, region, tier string
}

func (f *filterFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.gpu, "gpu", "", "canonical GPU, e.g. H100-SXM-80GB (see `gpuprice gpus`)")
	fl.StringVar(&f.provider, "provider", "", "provider, e.g. aws, lambda, vast")
	fl.StringVar(&f.pricing, "pricing", "", "pricing kind: on_demand, spot, reserved_1y, reserved_3y, commitment_<n>m")
	fl.StringVar(&f.region, "region", "", "provider region, verbatim (e.g. eastus, us-east-1)")
	fl.StringVar(&f.tier, "tier", "", "hyperscaler, specialist or marketplace")
}

func (f *filterFlags) filter() (store.Filter, error) {
	if f.pricing != "" && !schemas.ValidPricing(f.pricing) {
		return store.Filter{}, fmt.Errorf("--pricing %q: not a pricing kind (on_demand, spot, reserved_1y, reserved_3y, commitment_<n>m)", f.pricing)
	}
	if f.tier != "" && !schemas.ValidTier(f.tier) {
		return store.Filter{}, fmt.Errorf("--tier %q: not hyperscaler, specialist or marketplace", f.tier)
	}
	return store.Filter{GPU: f.gpu, Provider: f.provider, Pricing: f.pricing, Region: f.region, Tier: f.tier}, nil
}

func (a *app) pricesCmd() *cobra.Command {
	var ff filterFlags
	var format string
	var limit int
	var stale time.Duration
	var allSeries bool
	cmd := &cobra.Command{
		Use:   "prices",
		Short: "The latest price of every series, cheapest per GPU-hour first",
		Long: `prices lists the latest price of every series (provider, sku, region, zone,
pricing kind) still on offer, cheapest per GPU-hour first. A series counts as on offer
when it was observed within --stale of its provider's newest observation, so offers a
marketplace no longer lists drop out after the next collection; --all-series lists
every series ever seen.`,
		Example: `  gpuprice prices --gpu H100-SXM-80GB --pricing on_demand
  gpuprice prices --provider vast --pricing spot --format csv > vast.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := ff.filter()
			if err != nil {
				return err
			}
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			rows, err := st.Latest(cmd.Context(), f)
			if err != nil {
				return err
			}
			if !allSeries {
				rows = analytics.CurrentOnly(rows, stale)
			}
			if limit > 0 && len(rows) > limit {
				rows = rows[:limit]
			}
			return writeObservations(a.stdout, format, rows)
		},
	}
	ff.add(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "table, json or csv")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many rows (0: all)")
	cmd.Flags().DurationVar(&stale, "stale", analytics.StaleAfter, "drop series not seen within this long of their provider's newest observation")
	cmd.Flags().BoolVar(&allSeries, "all-series", false, "list every series ever seen, withdrawn offers included")
	return cmd
}

func writeObservations(w io.Writer, format string, rows []schemas.Observation) error {
	return report.WriteObservations(w, format, rows)
}

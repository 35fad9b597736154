package cli

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/opencost"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// exportOpenCostCmd is `export opencost`: OpenCost's custom pricing CSV of the GPU
// instance types on offer.
func (a *app) exportOpenCostCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "opencost [filters] [--out FILE]",
		Short: "Write OpenCost's custom pricing CSV for GPU nodes from the latest market prices",
		Long: `export opencost writes the CSV that OpenCost's CSV provider reads (USE_CSV_PROVIDER=true,
CSV_PATH=FILE; the format of its configs/pricing_schema.csv): one node row per region and
GPU instance type on offer, keyed by the node label node.kubernetes.io/instance-type
(InstanceIDField metadata.labels.node.kubernetes.io/instance-type) and the region, priced
at the whole instance's $ per hour, and one row per instance type without a region, which
OpenCost uses for a node in a region that has none. Where several series share a region
and instance type (zones, providers) the row is their median. The prices are those of
` + "`gpuprice prices`" + ` with the same filters (listed, whole-instance prices still on offer);
--pricing defaults to on_demand.`,
		Example: `  gpuprice export opencost --provider aws --out /etc/opencost/pricing.csv
  gpuprice export opencost --provider gcp --pricing spot --gpu h100`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	p.filters()
	out := p.fl.String("out", "", "write to this file (default: standard output)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		v := p.values()
		if v.Get("pricing") == "" {
			v.Set("pricing", "on_demand")
		}
		return read(a, cmd, v, query.ParsePrices, query.Source.Prices,
			func(_ query.PricesQuery, res query.Result[[]schemas.Observation]) error {
				a.noteRecorded(res.Data)
				rows := opencost.Rows(res.Data)
				if len(rows) == 0 {
					why := res.Empty
					if why == "" {
						why = "no whole-instance price among them"
					}
					return fmt.Errorf("no GPU node to price: %s", why)
				}
				var b bytes.Buffer
				if err := opencost.Write(&b, rows); err != nil {
					return err
				}
				if *out == "" {
					_, err := a.stdout.Write(b.Bytes())
					return err
				}
				if err := writeFileAtomic(*out, b.Bytes()); err != nil {
					return fmt.Errorf("--out: %w", err)
				}
				a.log.Info("exported", "rows", len(rows), "format", "opencost", "out", *out)
				return nil
			})
	}
	return cmd
}

package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/schemas"
)

func (a *app) gpusCmd() *cobra.Command {
	var format, explain string
	cmd := &cobra.Command{
		Use:   "gpus",
		Short: "List the GPU catalog (dense TFLOPS, memory, bandwidth, TDP, sources)",
		Long: `gpus lists the canonical GPUs that --gpu filters take, with dense (never
with-sparsity) BF16 and FP8 TFLOPS and the source of every figure.
--explain NAME shows how a provider's GPU name is placed on the catalog.`,
		Example: `  gpuprice gpus
  gpuprice gpus --explain "NVIDIA H100 80GB HBM3"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := schemas.LoadCatalog()
			if err != nil {
				return err
			}
			if explain != "" {
				id, why := cat.Explain(schemas.Hint{Name: explain})
				fmt.Fprintf(a.stdout, "%s → %s (%s)\n", explain, id, why)
				return nil
			}
			switch format {
			case "json":
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(cat.All())
			case "table":
				w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "GPU\tMEMORY\tTB/S\tBF16 DENSE\tFP8 DENSE\tTDP W\tSOURCES")
				for _, g := range cat.All() {
					bf16 := fnum(g.DenseBF16TFLOPS)
					if g.DenseBF16TFLOPS == 0 && g.DenseFP16TFLOPS > 0 {
						bf16 = fnum(g.DenseFP16TFLOPS) + " (FP16)"
					}
					fmt.Fprintf(w, "%s\t%s GB %s\t%s\t%s\t%s\t%s\t%s\n", g.ID, fnum(g.MemoryGB), g.MemoryType, fnum(g.BandwidthTBs),
						bf16, fnum(g.DenseFP8TFLOPS), fnum(g.TDPWatts), strings.Join(g.Sources, " "))
				}
				return w.Flush()
			default:
				return fmt.Errorf("--format %q: use table or json", format)
			}
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	cmd.Flags().StringVar(&explain, "explain", "", "show how this provider GPU name is canonicalised")
	return cmd
}

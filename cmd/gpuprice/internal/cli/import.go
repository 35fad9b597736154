package cli

import "github.com/spf13/cobra"

func (a *app) importCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Load observations from files",
	}
	for _, sub := range importCommands {
		cmd.AddCommand(sub(a))
	}
	return cmd
}

// importCommands are the `import` subcommands; files add theirs from init().
var importCommands = []func(*app) *cobra.Command{(*app).importCSVCmd}

func (a *app) importCSVCmd() *cobra.Command {
	return &cobra.Command{
		Use: "csv FILE",
		Example: `  gpuprice prices --provider vast --format csv > vast.csv && gpuprice import csv vast.csv
  gpuprice import csv prices.parquet   # Parquet too`,
		Short: "Import a CSV with the header `prices --format csv` writes",
		Long: `Import reads observations from a CSV whose header is the one ` + "`gpuprice prices --format csv`" + `
writes (at least observed_at, provider, sku, pricing, gpu_count and a price column).
Rows go through the same normalisation and gates as collected rows; unreadable or
implausible rows are quarantined with the reason. Imported rows carry
source_kind=import and the file they came from; importing the same file twice adds
nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.importFile(cmd.Context(), args[0], "import:csv")
		},
	}
}

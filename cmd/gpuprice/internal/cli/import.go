package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
)

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
		Use:   "csv FILE",
		Short: "Import a CSV with the header `prices --format csv` writes",
		Long: `Import reads observations from a CSV whose header is the one ` + "`gpuprice prices --format csv`" + `
writes (at least observed_at, provider, sku, pricing, gpu_count and a price column).
Rows go through the same normalisation and gates as collected rows; unreadable or
implausible rows are quarantined with the reason. Imported rows carry
source_kind=import and the file they came from; importing the same file twice adds
nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			path, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			if _, err := os.Stat(path); err != nil {
				return err
			}
			cat, err := schemas.LoadCatalog()
			if err != nil {
				return err
			}
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			spool, err := a.spool()
			if err != nil {
				return err
			}
			if _, err := spool.Replay(ctx, st); err != nil {
				a.log.Warn("spool replay incomplete", "error", err.Error())
			}
			col, err := a.collector(st, a.loadFX(ctx, st), spool)
			if err != nil {
				return err
			}
			col.SourceKind = schemas.SourceImport
			src := &ingest.CSVSource{
				Open:   func() (io.ReadCloser, error) { return os.Open(path) },
				Origin: "file://" + filepath.ToSlash(path),
				Known:  func(g string) bool { _, ok := cat.Lookup(g); return ok },
			}
			res := col.Collect(ctx, ingest.NewRunID(time.Now()), []ingest.Job{{Name: "import:csv", Source: src}})
			a.rollupAfter(ctx, st, res)
			a.printResults(res)
			if res[0].Status == schemas.RunFailed {
				return fmt.Errorf("import failed: %s", res[0].Error)
			}
			return nil
		},
	}
}

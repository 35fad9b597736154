package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/parquetio"
	"github.com/gpuprice/gpuprice/schemas"
)

func init() { importCommands = append(importCommands, (*app).importParquetCmd) }

func (a *app) importParquetCmd() *cobra.Command {
	return &cobra.Command{
		Use: "parquet FILE",
		Example: `  gpuprice export --provider aws --format parquet --out aws.parquet
  gpuprice import parquet aws.parquet --store clickhouse://localhost:9000/gpuprice`,
		Short: "Import a Parquet file with the columns `export --format parquet` writes",
		Long: `Import reads observations from a Parquet file whose columns are named like the CSV
of ` + "`gpuprice prices --format csv`" + ` (at least observed_at, provider, sku, pricing,
gpu_count and a price column; ` + "`export --format parquet`" + `, DuckDB's COPY … TO
'file.parquet' and pandas write such files). Timestamps, dates, decimals, integers,
doubles and strings are read; other columns are ignored. Rows go through the same
normalisation and gates as collected rows; imported rows carry source_kind=import and
the file they came from; importing the same file twice adds nothing.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.importFile(cmd.Context(), args[0], "import:parquet")
		},
	}
}

// importFile imports a CSV or Parquet file (told apart by its first bytes) through
// ingest.CSVSource under the job name given.
func (a *app) importFile(ctx context.Context, file, job string) error {
	path, err := filepath.Abs(file)
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
	runner, err := a.openRunner(ctx, true)
	if err != nil {
		return err
	}
	defer runner.Store.Close()
	if a.cfg.Ingest.BatchBytes == 0 {
		// An import's batches are bounded by rows alone (the store's WriteBatchSize):
		// the byte bound is for collections, where many sources batch at once. DuckDB's
		// 8 MiB would cut an import into 15,000-row writes, each logged row by row in
		// its WAL and checkpointed every few writes, where its 122,880-row batch is
		// written to the file as a compressed row group (BENCHMARKS.md).
		runner.Batch.Bytes = -1
	}
	src := &ingest.CSVSource{
		Open:   func() (io.ReadCloser, error) { return parquetio.OpenCSV(path) },
		Origin: "file://" + filepath.ToSlash(path),
		Known:  func(g string) bool { _, ok := cat.Lookup(g); return ok },
	}
	res := runner.Collect(ctx, []ingest.Job{{Name: job, Source: src}}, ingest.Options{FX: ingest.FXLazy,
		SourceKind: schemas.SourceImport})
	a.printResults(res)
	if err := verdict(res); err != nil {
		return err
	}
	if res[0].Status == schemas.RunFailed {
		return fmt.Errorf("import failed: %s", res[0].Error)
	}
	return nil
}

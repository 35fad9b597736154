package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/gcpcalc"
	"github.com/gpuprice/gpuprice/schemas"
)

func init() { importCommands = append(importCommands, (*app).importGCPCalcCmd) }

func (a *app) importGCPCalcCmd() *cobra.Command {
	var hist historyFlags
	cmd := &cobra.Command{
		Use:   "gcp-pricing-calculator PATH",
		Short: "Import GCP's GPU machine prices from the git history of the google-cloud-pricing-cost-calculator",
		Long: `Import walks the git history of a local clone of the public
google-cloud-pricing-cost-calculator (Apache License 2.0), whose pricing.yml is
regenerated about weekly from Google's Cloud Billing Catalog: every commit that
changed it is a snapshot of GCP's prices at the commit time. Each machine type with
GPUs built in (A2, A3, G2, G4 …) gives, per region, an on_demand row (hour) and a
spot row (hour_spot) per instance-hour in USD. Rows carry source_kind=import and
source_url gcp-pricing-calculator:<commit>:pricing.yml, at the commit time, and go
through the same gates as collected rows. Importing twice adds nothing.

--since/--until bound the commit times, --every keeps the first snapshot of each
period (counted from 1970-01-01 UTC), --regions keeps a few regions, --manifest
writes the snapshots imported as CSV (deploy/build-history.sh). Versions the clone
does not hold (a partial clone) are skipped and counted. It needs the git command.`,
		Example: `  git clone https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator ~/gcp-calculator
  gpuprice import gcp-pricing-calculator ~/gcp-calculator --since 2025-01-01 --regions us-central1,europe-west4`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := hist.parse(); err != nil {
				return err
			}
			repo, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			runner, err := a.openRunner(ctx, false)
			if err != nil {
				return err
			}
			defer runner.Store.Close()
			var read gcpcalc.Result
			res, err := runner.Import(ctx, "import:gcp-pricing-calculator",
				ingest.Options{FX: ingest.FXLazy, SourceKind: schemas.SourceImport},
				func(ctx context.Context, run *ingest.Run) error {
					im := &gcpcalc.Importer{Repo: repo, Run: run, Since: hist.from, Until: hist.to, Every: hist.every,
						Regions: hist.regions, Progress: func(done, total int, s gcpcalc.Snapshot, rows int) {
							hist.snapshot(a.stderr, done, total, s.Commit, s.Time, gcpcalc.Path, "gcp", "", rows)
						}}
					var err error
					read, err = im.Import(ctx)
					hist.finish()
					if err == nil && read.Snapshots == 0 {
						run.Note("no version of pricing.yml in the history (or none in --since/--until)")
					}
					if read.Unreadable > 0 {
						run.Note(fmt.Sprintf("%d versions of pricing.yml are not in the clone (skipped)", read.Unreadable))
					}
					return err
				})
			a.log.Info("gcp pricing calculator read", "snapshots", read.Snapshots, "imported", read.Imported,
				"unreadable", read.Unreadable, "machine_types", read.Stats.MachineTypes, "without_gpu", read.Stats.NoGPU,
				"other_regions", read.Stats.OtherRegion)
			a.printResults([]ingest.Result{res})
			if merr := hist.writeManifest(); merr != nil && err == nil {
				err = merr
			}
			return err
		},
	}
	hist.add(cmd)
	return cmd
}

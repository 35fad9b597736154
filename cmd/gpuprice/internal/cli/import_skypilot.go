package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/resumable"
	"github.com/gpuprice/gpuprice/ingest/skypilot"
	"github.com/gpuprice/gpuprice/schemas"
)

func init() { importCommands = append(importCommands, (*app).importSkypilotCmd) }

func (a *app) importSkypilotCmd() *cobra.Command {
	var clouds, versions []string
	var hist historyFlags
	var restart bool
	cmd := &cobra.Command{
		Use:   "skypilot-catalog PATH",
		Short: "Import the price history in the git history of a SkyPilot catalog clone",
		Long: `Import walks the git history of a local clone of the public SkyPilot catalog
(git clone https://github.com/skypilot-org/skypilot-catalog): every commit that
changed a catalogs/v<N>/<cloud>/vms.csv is a snapshot of that cloud's prices at the
commit time. Each GPU instance type gives an on_demand row (Price) and a spot row
(SpotPrice) per instance-hour in USD; GPU names are canonicalised; rows without GPUs
are skipped. Rows carry source_kind=import and source_url
skypilot-catalog:<commit>:<path>, and go through the same gates as collected rows.

Resumable: after each snapshot is stored, the last imported commit of its file is
kept in <data dir>/import/skypilot-<hash of PATH>.json, and the next import (after a
git pull, or after an interruption) starts after it. Importing twice adds nothing.
Part of the history: --since/--until bound the commit times, --every keeps per
file the first snapshot of each period (3d: one every three days, counted from
1970-01-01 UTC, so the same commits each time) and --regions keeps a few regions;
--manifest writes the snapshots imported (commit, commit time, path, rows kept) as
CSV, the provenance of what was stored; examples/history is built so
(deploy/build-history.sh). It needs the git command.`,
		Example: `  git clone https://github.com/skypilot-org/skypilot-catalog ~/skypilot-catalog
  gpuprice import skypilot-catalog ~/skypilot-catalog --versions v7
  gpuprice import skypilot-catalog ~/skypilot-catalog --clouds aws,gcp,lambda --since 2025-01-01 --every 3d`,
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
			dir, err := a.cfg.DataDirPath()
			if err != nil {
				return err
			}
			sum := sha256.Sum256([]byte(repo))
			cp := resumable.Checkpoint{Path: filepath.Join(dir, "import", "skypilot-"+hex.EncodeToString(sum[:6])+".json")}
			runner, err := a.openRunner(ctx, false)
			if err != nil {
				return err
			}
			defer runner.Store.Close()
			var read skypilot.Result
			res, err := runner.Import(ctx, "import:skypilot-catalog", ingest.Options{FX: ingest.FXLazy,
				SourceKind: schemas.SourceImport},
				func(ctx context.Context, run *ingest.Run) error {
					im := &skypilot.Importer{Repo: repo, Run: run, Checkpoint: cp, Clouds: clouds, Versions: versions,
						Restart: restart,
						Since:   hist.from, Until: hist.to, Every: hist.every, Regions: hist.regions,
						Progress: func(done, total int, s skypilot.Snapshot, rows int) {
							hist.snapshot(a.stderr, done, total, s.Commit, s.Time, s.Path, s.Cloud, s.Version, rows)
						}}
					var err error
					read, err = im.Import(ctx)
					hist.finish()
					if err == nil && read.Imported == 0 && read.Snapshots > 0 {
						run.Note(fmt.Sprintf("nothing new: all %d snapshots were imported before", read.Snapshots))
					}
					if err == nil && read.Snapshots == 0 {
						run.Note("no catalogs/v*/<cloud>/vms.csv in the history (or none matching --clouds/--versions)")
					}
					return err
				})
			a.log.Info("skypilot catalog read", "snapshots", read.Snapshots, "imported", read.Imported, "skipped", read.Skipped,
				"lines", read.Stats.Lines, "without_gpu", read.Stats.NoGPU, "empty_prices", read.Stats.NoPrice,
				"other_regions", read.Stats.OtherRegion)
			a.printResults([]ingest.Result{res})
			if merr := hist.writeManifest(); merr != nil && err == nil {
				err = merr
			}
			return err
		},
	}
	cmd.Flags().StringSliceVar(&clouds, "clouds", nil,
		"only these cloud directories (aws, gcp, azure, lambda, runpod, …; default all)")
	cmd.Flags().StringSliceVar(&versions, "versions", nil, "only these catalog versions (v6, v7, …; default all)")
	hist.add(cmd)
	cmd.Flags().BoolVar(&restart, "restart", false, "ignore the checkpoint and read the whole history again")
	return cmd
}

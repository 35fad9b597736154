package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/resumable"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/aws"
)

func init() { addCommand((*app).backfillCmd) }

func (a *app) backfillCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backfill",
		Short: "Load price history a provider still keeps (EC2 spot: 90 days)",
	}
	cmd.AddCommand(a.backfillAWSSpotCmd())
	return cmd
}

func (a *app) backfillAWSSpotCmd() *cobra.Command {
	var since, until string
	var regions, types []string
	var restart bool
	var pageSize int32
	cmd := &cobra.Command{
		Use:   "aws-spot [--since 90d] [--regions r1,r2] [--instance-types t1,t2]",
		Short: "EC2 spot price history of every GPU instance type in every enabled region",
		Long: `Backfill reads EC2 DescribeSpotPriceHistory (Linux/UNIX, per availability zone) for
every GPU instance type of the AWS source's family table, or --instance-types, in
every region enabled for the account (DescribeRegions), or the regions of
sources.aws.options.regions, or --regions, from --since ago (at most 90d, what EC2
keeps) to --until (default now; a span back from now, a date or a time). Rows are
normalised, gated and quarantined like collected ones and keep source_kind api; the
run is recorded as backfill:aws-spot.

It needs AWS credentials from the standard chain with ec2:DescribeSpotPriceHistory
(and ec2:DescribeRegions unless regions are given). sources.aws.options.ec2_endpoint
replaces the EC2 endpoint.

Resumable: after each page is stored, the next page's token is kept per region in
<data dir>/backfill/aws-spot.json; an interrupted backfill run again with the same
--since and --instance-types goes on where it stopped, over the same time window.
The store keeps each observation once, so overlaps add nothing. --restart starts a
new window. A progress bar is drawn on a terminal, plain lines otherwise.`,
		Example: `  gpuprice backfill aws-spot --since 90d
  gpuprice backfill aws-spot --since 30d --regions us-east-1,us-west-2 --instance-types p5.48xlarge
  gpuprice backfill aws-spot --since 90d --until 60d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			d, err := parseAgo(since)
			if err != nil {
				return usagef("--since: %w", err)
			}
			if d > aws.MaxSince {
				return usagef("--since %s: EC2 keeps %d days of spot price history", since, int(aws.MaxSince.Hours()/24))
			}
			var ago time.Duration
			if until != "" {
				end, err := query.ParseUntil(until)
				if err != nil {
					return usagef("--until %q: %v", until, err)
				}
				if ago = time.Since(end).Truncate(time.Second); ago < 0 || ago >= d {
					return usagef("--until %s: not between --since %s ago and now", until, since)
				}
			}
			var opts aws.Options
			if err := (scrapers.Config{Name: "aws", Options: a.cfg.Sources[aws.Name].Options}).DecodeOptions(&opts); err != nil {
				return fmt.Errorf("config: sources.aws: %w", err)
			}
			if err := (aws.Options{Regions: regions}).Validate(); err != nil {
				return usagef("--regions: %w", err)
			}
			dir, err := a.cfg.DataDirPath()
			if err != nil {
				return err
			}
			bf := &aws.SpotBackfill{Since: d, Until: ago, Regions: regions, InstanceTypes: types, Options: opts,
				PageSize: pageSize, Restart: restart,
				Checkpoint: resumable.Checkpoint{Path: filepath.Join(dir, "backfill", "aws-spot.json")},
				Timeout:    a.cfg.HTTP.Timeout, Logger: a.log}
			if err := bf.Prepare(ctx); err != nil {
				return err
			}
			runner, err := a.openRunner(ctx, false)
			if err != nil {
				return err
			}
			defer runner.Store.Close()
			bar := newProgress(a.stderr, len(bf.Regions), "regions")
			bf.Progress = func(regionDone bool, msg string) {
				if regionDone {
					bar.Add(1, msg)
				} else {
					bar.Describe(msg)
				}
			}
			res, err := runner.Import(ctx, "backfill:aws-spot", ingest.Options{FX: ingest.FXLazy},
				func(ctx context.Context, run *ingest.Run) error { return bf.Run(ctx, run) })
			bar.Finish()
			a.printResults([]ingest.Result{res})
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&since, "since", "90d", "how far back: a duration up to 90d (90d, 36h, 2w)")
	fl.StringVar(&until, "until", "",
		"end of the window: a span back from now (60d, 2w), a date or an RFC 3339 time (default: now)")
	fl.StringSliceVar(&regions, "regions", nil,
		"regions (default: sources.aws.options.regions, else every region enabled for the account)")
	fl.StringSliceVar(&types, "instance-types", nil,
		"instance types (default: every GPU instance type the AWS source knows)")
	fl.BoolVar(&restart, "restart", false, "ignore the checkpoint and start a new window")
	fl.Int32Var(&pageSize, "page-size", 1000, "records per DescribeSpotPriceHistory page (at most 1000)")
	return cmd
}

// progress shows how far a long command is: a bar when w is a terminal, else one
// line per step.
type progress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	total int
	done  int
	unit  string
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newProgress(w io.Writer, total int, unit string) *progress {
	p := &progress{w: w, total: total, unit: unit}
	if isTerminal(w) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(unit),
			progressbar.OptionShowCount(),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionFullWidth(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

// Describe reports progress within the current step.
func (p *progress) Describe(s string) {
	if p.bar != nil {
		p.bar.Describe(s)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d %s] %s\n", p.done, p.total, p.unit, s)
}

// Add completes n steps.
func (p *progress) Add(n int, s string) {
	p.done += n
	if p.bar != nil {
		p.bar.Describe(s)
		_ = p.bar.Add(n)
		return
	}
	fmt.Fprintf(p.w, "[%d/%d %s] %s\n", p.done, p.total, p.unit, s)
}

// Finish ends the bar.
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

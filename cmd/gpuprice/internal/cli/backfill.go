package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/resumable"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/aws"
	"github.com/gpuprice/gpuprice/store"
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

// spotCheckpoint is the progress of an AWS spot backfill: its time window and, per
// region, the NextToken of the next page.
type spotCheckpoint struct {
	Key     string                  `json:"key"` // the query (since, instance types) it belongs to
	Start   time.Time               `json:"start"`
	End     time.Time               `json:"end"`
	Regions map[string]*regionState `json:"regions"`
}

type regionState struct {
	NextToken string `json:"next_token,omitempty"`
	Pages     int    `json:"pages"`
	Rows      int    `json:"rows"`
	Done      bool   `json:"done"`
}

func (a *app) backfillAWSSpotCmd() *cobra.Command {
	var since string
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
keeps) to now. Rows are normalised, gated and quarantined like collected ones and
keep source_kind api; the run is recorded as backfill:aws-spot.

It needs AWS credentials from the standard chain with ec2:DescribeSpotPriceHistory
(and ec2:DescribeRegions unless regions are given). sources.aws.options.ec2_endpoint
replaces the EC2 endpoint.

Resumable: after each page is stored, the next page's token is kept per region in
<data dir>/backfill/aws-spot.json; an interrupted backfill run again with the same
--since and --instance-types goes on where it stopped, over the same time window.
The store keeps each observation once, so overlaps add nothing. --restart starts a
new window. A progress bar is drawn on a terminal, plain lines otherwise.`,
		Example: `  gpuprice backfill aws-spot --since 90d
  gpuprice backfill aws-spot --since 30d --regions us-east-1,us-west-2 --instance-types p5.48xlarge`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			d, err := parseAgo(since)
			if err != nil {
				return fmt.Errorf("--since: %w", err)
			}
			if d > aws.MaxSince {
				return fmt.Errorf("--since %s: EC2 keeps %d days of spot price history", since, int(aws.MaxSince.Hours()/24))
			}
			var opts aws.Options
			if err := (scrapers.Config{Name: "aws", Options: a.cfg.Sources[aws.Name].Options}).DecodeOptions(&opts); err != nil {
				return fmt.Errorf("config: sources.aws: %w", err)
			}
			if err := (aws.Options{Regions: regions}).Validate(); err != nil {
				return fmt.Errorf("--regions: %w", err)
			}
			ac, err := aws.LoadConfig(ctx, a.cfg.HTTP.Timeout)
			if err != nil {
				return err
			}
			if !aws.HasCredentials(ctx, ac) {
				return errors.New("backfill aws-spot: no AWS credentials in the standard chain (environment, shared config, SSO, instance role); it needs ec2:DescribeSpotPriceHistory")
			}
			if len(regions) == 0 {
				regions = opts.Regions
			}
			if len(regions) == 0 {
				regions, err = aws.EnabledRegions(ctx, ac, opts.EC2Endpoint)
				if err != nil {
					if ctx.Err() != nil {
						return err
					}
					a.log.Warn("enabled regions unknown, using the default regions", "error", err.Error())
					regions = slices.Clone(aws.DefaultRegions)
				}
			}
			slices.Sort(regions)
			regions = slices.Compact(regions)
			if len(types) == 0 {
				types = aws.GPUInstanceTypes()
			}
			slices.Sort(types)

			dir, err := a.cfg.DataDirPath()
			if err != nil {
				return err
			}
			cpFile := resumable.Checkpoint{Path: filepath.Join(dir, "backfill", "aws-spot.json")}
			key := since + "|" + strings.Join(types, ",")
			now := time.Now().UTC().Truncate(time.Second)
			var cp spotCheckpoint
			ok, err := cpFile.Load(&cp)
			if err != nil {
				return err
			}
			switch {
			case ok && !restart && cp.Key == key:
				a.log.Info("resuming backfill", "start", cp.Start, "end", cp.End, "checkpoint", cpFile.Path)
			case ok && !restart:
				a.log.Warn("checkpoint is of another --since or --instance-types: starting a new window", "checkpoint", cpFile.Path)
				fallthrough
			default:
				cp = spotCheckpoint{Key: key, Start: now.Add(-d), End: now}
			}
			if cp.Regions == nil {
				cp.Regions = map[string]*regionState{}
			}
			for _, r := range regions {
				if cp.Regions[r] == nil {
					cp.Regions[r] = &regionState{}
				}
			}

			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			norm, err := a.normalizer(ingest.StaticFX(a.cfg.FX)) // USD prices: no ECB refresh needed
			if err != nil {
				return err
			}
			run := &resumable.Run{Sink: st, Normalizer: norm, Source: "backfill:aws-spot", RunID: ingest.NewRunID(now)}
			bar := newProgress(a.stderr, len(regions), "regions")
			var errs []error
			for _, region := range regions {
				rs := cp.Regions[region]
				if rs.Done {
					bar.Add(1, fmt.Sprintf("%s: done before (%d pages, %d rows)", region, rs.Pages, rs.Rows))
					continue
				}
				q := aws.SpotHistoryQuery{Region: region, InstanceTypes: types, Start: cp.Start, End: cp.End,
					NextToken: rs.NextToken, Endpoint: opts.EC2Endpoint, PageSize: pageSize}
				err := aws.ReadSpotHistory(ctx, ac, q, now, func(p aws.SpotPage) error {
					for _, r := range p.Rejects {
						run.Reject(r.Raw, r.Reason)
					}
					for _, o := range p.Rows {
						run.Emit(o)
					}
					if err := run.Commit(ctx); err != nil {
						return err
					}
					rs.NextToken, rs.Done = p.NextToken, p.NextToken == ""
					rs.Pages++
					rs.Rows += len(p.Rows)
					if err := cpFile.Save(cp); err != nil {
						return err
					}
					bar.Describe(fmt.Sprintf("%s: page %d, %d rows", region, rs.Pages, rs.Rows))
					return nil
				})
				if err != nil {
					errs = append(errs, err)
					if ctx.Err() != nil || aws.IsAuthError(err) {
						break
					}
					bar.Add(1, fmt.Sprintf("%s: failed: %v", region, err))
					continue
				}
				bar.Add(1, fmt.Sprintf("%s: done (%d pages, %d rows)", region, rs.Pages, rs.Rows))
			}
			bar.Finish()
			importErr := errors.Join(errs...)
			if importErr == nil {
				if err := cpFile.Remove(); err != nil {
					a.log.Warn("checkpoint not removed", "error", err.Error())
				}
			}
			return a.finishRun(ctx, st, run, importErr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&since, "since", "90d", "how far back: a duration up to 90d (90d, 36h, 2w)")
	fl.StringSliceVar(&regions, "regions", nil, "regions (default: sources.aws.options.regions, else every region enabled for the account)")
	fl.StringSliceVar(&types, "instance-types", nil, "instance types (default: every GPU instance type the AWS source knows)")
	fl.BoolVar(&restart, "restart", false, "ignore the checkpoint and start a new window")
	fl.Int32Var(&pageSize, "page-size", 1000, "records per DescribeSpotPriceHistory page (at most 1000)")
	return cmd
}

// finishRun writes the run record and rebuilds the rollups over what the run stored
// (even when ctx was cancelled: what was committed is in the store), prints the
// record, and returns importErr.
func (a *app) finishRun(ctx context.Context, st store.Store, run *resumable.Run, importErr error) error {
	ctx = context.WithoutCancel(ctx)
	rec, err := run.Finish(ctx, importErr)
	if err != nil {
		a.log.Warn("run record not stored", "error", err.Error())
	}
	res := ingest.Result{Run: rec, Duration: rec.FinishedAt.Sub(rec.StartedAt)}
	res.Since, res.Until = run.Span()
	a.rollupAfter(ctx, st, []ingest.Result{res})
	a.printResults([]ingest.Result{res})
	if importErr != nil {
		return importErr
	}
	return nil
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

package aws

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gpuprice/gpuprice/scrapers"
)

// SpotBackfill is `gpuprice backfill aws-spot`: the EC2 spot price history of every
// GPU instance type (or InstanceTypes) in every region enabled for the account (or
// Regions), from Since ago to Until ago (0: now), read page by page into a stepwise run. After each
// page is committed the next page's token is kept per region in Checkpoint, so an
// interrupted backfill run again with the same Since and InstanceTypes goes on where
// it stopped, over the same time window; Restart starts a new window.
type SpotBackfill struct {
	Since         time.Duration // at most MaxSince
	Until         time.Duration // how long ago the window ends, less than Since; 0: now
	Regions       []string      // empty: Options.Regions, else every enabled region
	InstanceTypes []string      // empty: GPUInstanceTypes()
	Options       Options       // the AWS source's options (regions, ec2_endpoint)
	PageSize      int32         // records per page (default and maximum 1000)
	Restart       bool
	Checkpoint    Checkpoint
	Timeout       time.Duration // HTTP timeout of the SDK's client; 0: the SDK's
	Logger        *slog.Logger  // nil: no logging
	Now           func() time.Time

	// Progress, when set, is told of each page stored (regionDone false) and of each
	// region finished, failed or done before (regionDone true).
	Progress func(regionDone bool, msg string)

	ac      awssdk.Config
	key     string
	started time.Time
}

// SpotStep is where the backfill's rows go: a stepwise ingest.Run, whose Commit
// returns once the page is stored.
type SpotStep interface {
	scrapers.Emitter
	scrapers.Rejecter
	Commit(ctx context.Context) error
}

// Checkpoint keeps a backfill's progress between runs (ingest/resumable.Checkpoint:
// a JSON file replaced atomically); String names it in logs.
type Checkpoint interface {
	Load(v any) (bool, error) // false, v untouched, when there is none
	Save(v any) error
	Remove() error
	String() string
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

func (b *SpotBackfill) log() *slog.Logger {
	if b.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Logger
}

func (b *SpotBackfill) progress(done bool, msg string) {
	if b.Progress != nil {
		b.Progress(done, msg)
	}
}

// Prepare checks the request, loads the AWS configuration, checks there are
// credentials and settles the regions and instance types (b.Regions and
// b.InstanceTypes are then set, sorted). It makes no request but DescribeRegions
// when no region is given; enabled regions it cannot list are the defaults.
func (b *SpotBackfill) Prepare(ctx context.Context) error {
	if b.Since <= 0 || b.Since > MaxSince {
		return fmt.Errorf("since %s: EC2 keeps %d days of spot price history", b.Since, int(MaxSince.Hours()/24))
	}
	if err := (Options{Regions: b.Regions}).Validate(); err != nil {
		return fmt.Errorf("regions: %w", err)
	}
	ac, err := LoadConfig(ctx, b.Timeout)
	if err != nil {
		return err
	}
	if !HasCredentials(ctx, ac) {
		return errors.New(
			"backfill aws-spot: no AWS credentials in the standard chain (environment, shared config, SSO, instance role); it " +
				"needs ec2:DescribeSpotPriceHistory",
		)
	}
	b.ac = ac
	if len(b.Regions) == 0 {
		b.Regions = b.Options.Regions
	}
	if len(b.Regions) == 0 {
		b.Regions, err = EnabledRegions(ctx, ac, b.Options.EC2Endpoint)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			b.log().Warn("enabled regions unknown, using the default regions", "error", err.Error())
			b.Regions = slices.Clone(DefaultRegions)
		}
	}
	b.Regions = slices.Compact(slices.Sorted(slices.Values(b.Regions)))
	if len(b.InstanceTypes) == 0 {
		b.InstanceTypes = GPUInstanceTypes()
	}
	b.InstanceTypes = slices.Sorted(slices.Values(b.InstanceTypes))
	if b.Until < 0 || b.Until >= b.Since {
		return fmt.Errorf("until %s ago is not after since %s ago", b.Until, b.Since)
	}
	b.key = sinceKey(b.Since)
	if b.Until > 0 {
		b.key += "-" + sinceKey(b.Until)
	}
	b.key += "|" + strings.Join(b.InstanceTypes, ",")
	return nil
}

// sinceKey is the checkpoint's name of a window length, as --since spells it: in
// days or hours when it is whole ones.
func sinceKey(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

// Run reads every region's pages into step, committing each page and then saving
// the checkpoint, and removes the checkpoint once every region is done. It goes on
// with the next region after a region fails, except when ctx ends or AWS refuses the
// credentials; it returns the regions' errors joined. Prepare must have succeeded.
func (b *SpotBackfill) Run(ctx context.Context, step SpotStep) error {
	if b.key == "" {
		return errors.New("aws: SpotBackfill.Run before Prepare")
	}
	now := time.Now().UTC()
	if b.Now != nil {
		now = b.Now().UTC()
	}
	now = now.Truncate(time.Second)
	var cp spotCheckpoint
	ok, err := b.Checkpoint.Load(&cp)
	if err != nil {
		return err
	}
	switch {
	case ok && !b.Restart && cp.Key == b.key:
		b.log().Info("resuming backfill", "start", cp.Start, "end", cp.End, "checkpoint", b.Checkpoint.String())
	case ok && !b.Restart:
		b.log().
			Warn("checkpoint is of another --since or --instance-types: starting a new window", "checkpoint",
				b.Checkpoint.String())
		fallthrough
	default:
		cp = spotCheckpoint{Key: b.key, Start: now.Add(-b.Since), End: now.Add(-b.Until)}
	}
	if cp.Regions == nil {
		cp.Regions = map[string]*regionState{}
	}
	for _, r := range b.Regions {
		if cp.Regions[r] == nil {
			cp.Regions[r] = &regionState{}
		}
	}
	var errs []error
	for _, region := range b.Regions {
		rs := cp.Regions[region]
		if rs.Done {
			b.progress(true, fmt.Sprintf("%s: done before (%d pages, %d rows)", region, rs.Pages, rs.Rows))
			continue
		}
		q := SpotHistoryQuery{Region: region, InstanceTypes: b.InstanceTypes, Start: cp.Start, End: cp.End,
			NextToken: rs.NextToken, Endpoint: b.Options.EC2Endpoint, PageSize: b.PageSize}
		err := ReadSpotHistory(ctx, b.ac, q, now, func(p SpotPage) error {
			for _, r := range p.Rejects {
				step.Reject(r.Raw, r.Reason)
			}
			for _, o := range p.Rows {
				step.Emit(o)
			}
			if err := step.Commit(ctx); err != nil {
				return err
			}
			rs.NextToken, rs.Done = p.NextToken, p.NextToken == ""
			rs.Pages++
			rs.Rows += len(p.Rows)
			if err := b.Checkpoint.Save(cp); err != nil {
				return err
			}
			b.progress(false, fmt.Sprintf("%s: page %d, %d rows", region, rs.Pages, rs.Rows))
			return nil
		})
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil || IsAuthError(err) {
				break
			}
			b.progress(true, fmt.Sprintf("%s: failed: %v", region, err))
			continue
		}
		b.progress(true, fmt.Sprintf("%s: done (%d pages, %d rows)", region, rs.Pages, rs.Rows))
	}
	err = errors.Join(errs...)
	if err == nil {
		if rerr := b.Checkpoint.Remove(); rerr != nil {
			b.log().Warn("checkpoint not removed", "error", rerr.Error())
		}
	}
	return err
}

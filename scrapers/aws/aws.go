// Package aws collects EC2 GPU instance prices: on-demand, reserved (1 and 3 years,
// standard offering class) and spot, Linux, shared tenancy.
// The long story (modes, rules, limits) is in its README.md.
package aws

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Name is the registry name of this source; Provider the provider on its rows.
const (
	Name     = "aws"
	Provider = "aws"
)

// DefaultEndpoint is the public bulk price list's EC2 region index; each region's
// offer file URL in it is resolved against this URL.
const DefaultEndpoint = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/region_index.json"

// DefaultSpotFeed is the public spot price feed of the EC2 spot pricing page.
const DefaultSpotFeed = "https://website.spot.ec2.aws.a2z.com/spot.js"

// Modes.
const (
	ModeAuto   = "auto"
	ModeAPI    = "api"
	ModePublic = "public"
)

// Parts of a collection (the collect option).
const (
	PartOnDemand = "on_demand"
	PartReserved = "reserved"
	PartSpot     = "spot"
)

// DefaultRegions are the regions that sell the most GPU instance types.
var DefaultRegions = []string{
	"us-east-1", "us-east-2", "us-west-2", "ca-central-1", "sa-east-1",
	"eu-west-1", "eu-west-2", "eu-central-1", "eu-north-1",
	"ap-northeast-1", "ap-northeast-2", "ap-southeast-1", "ap-southeast-2", "ap-south-1",
}

// Limits of the since option.
const (
	DefaultSince = time.Hour
	MaxSince     = 90 * 24 * time.Hour
)

// DefaultBulkTimeout bounds one offer file download (the shared client's timeout is
// meant for API calls, not for a file of gigabytes).
const DefaultBulkTimeout = 20 * time.Minute

// sampleOptions documents sources.aws.options in the sample configuration.
//
//go:embed sample.yaml
var sampleOptions string

func init() {
	scrapers.Register(scrapers.Info{
		Name:     Name,
		Provider: Provider,
		Method:   schemas.SourceAPI,
		Pricing:  []string{schemas.OnDemand, schemas.Spot, schemas.Reserved1Y, schemas.Reserved3Y},
		Credentials: "AWS credentials from the standard chain (optional: env, shared config, SSO, instance role; " +
			"pricing:GetProducts, ec2:DescribeSpotPriceHistory, ec2:DescribeCapacityBlockOfferings); without them the public " +
			"price files",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description: "AWS EC2 GPU instances: Price List API or public offer files (on-demand, reserved), spot history " +
			"per zone or the public spot feed",
		Tier:          schemas.TierHyperscaler,
		Interconnect:  schemas.InterconnectEFA,
		Naming:        naming,
		SecretEnv:     []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"},
		SampleOptions: sampleOptions,
		Doc: scrapers.Doc{
			ProviderTitle: "AWS",
			Method: "Price List Query API + EC2 spot price history (aws-sdk-go-v2); without credentials the public " +
				"bulk offer files (streamed) and spot feed",
			OnDemand:    "✓",
			Spot:        "✓ per zone",
			Reserved:    "1y, 3y (no-upfront; all-upfront amortised)",
			Credentials: "AWS credential chain (optional)",
		},
	}, New)
}

// Options are the source's settings (sources.aws.options).
type Options struct {
	// Mode is auto (default), api or public.
	Mode string `json:"mode"`
	// Regions to collect; empty means DefaultRegions.
	Regions []string `json:"regions"`
	// Since is how far back spot history is read (Go duration, default 1h, at most
	// 90 days: EC2 keeps 90 days).
	Since string `json:"since"`
	// Collect limits the parts collected: on_demand, reserved, spot, capacity_blocks
	// (default all; capacity_blocks, which needs the EC2 API, is left out of mode
	// public's default and runs only where the APIs are used).
	Collect []string `json:"collect"`
	// PricingEndpoint and EC2Endpoint replace the SDK's endpoints (a VPC endpoint, a
	// recording); empty means the SDK's.
	PricingEndpoint string `json:"pricing_endpoint"`
	EC2Endpoint     string `json:"ec2_endpoint"`
	// SpotFeed is the public spot feed URL (default DefaultSpotFeed).
	SpotFeed string `json:"spot_feed"`
	// BulkTimeout bounds one offer file download (Go duration, default 20m).
	BulkTimeout string `json:"bulk_timeout"`
	// SpotAdvisor is the Spot Advisor file's URL (default SpotAdvisorURL), read with
	// the spot part for the interruption bands (docs/risk.md); "off" reads none.
	SpotAdvisor string `json:"spot_advisor"`
	// CapacityBlockTypes are the instance types whose Capacity Block offerings the
	// capacity_blocks part asks for: GPU instance types of the family table (default
	// DefaultCapacityBlockTypes).
	CapacityBlockTypes []string `json:"capacity_block_types"`
	// CapacityBlockHours is the block duration asked, in hours (default 24; 0 means the
	// default): whole days, by 1 day up to 14 days, by 7 days up to 182 days.
	CapacityBlockHours int `json:"capacity_block_hours"`
	// CapacityBlockWindow is how far ahead of the run a block may start (Go duration,
	// default 336h, at most 8 weeks): offerings starting from now and ending by now +
	// window + the duration.
	CapacityBlockWindow string `json:"capacity_block_window"`
	// CapacityBlockRegions are the regions asked for Capacity Blocks; empty means the
	// collected regions.
	CapacityBlockRegions []string `json:"capacity_block_regions"`
}

var regionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)

// Validate checks the options without network I/O.
func (o Options) Validate() error {
	switch o.Mode {
	case "", ModeAuto, ModeAPI, ModePublic:
	default:
		return fmt.Errorf("aws: options: mode %q is not auto, api or public", o.Mode)
	}
	for _, r := range o.Regions {
		if !regionRE.MatchString(r) {
			return fmt.Errorf("aws: options: region %q is not a region code such as us-east-1", r)
		}
	}
	if o.Since != "" {
		d, err := time.ParseDuration(o.Since)
		if err != nil {
			return fmt.Errorf("aws: options: since: %w", err)
		}
		if d <= 0 || d > MaxSince {
			return fmt.Errorf("aws: options: since %s is not in (0, %s]", d, MaxSince)
		}
	}
	seen := map[string]bool{}
	for _, p := range o.Collect {
		if p != PartOnDemand && p != PartReserved && p != PartSpot && p != PartCapacityBlocks {
			return fmt.Errorf("aws: options: collect %q is not on_demand, reserved, spot or capacity_blocks", p)
		}
		if seen[p] {
			return fmt.Errorf("aws: options: collect lists %q twice", p)
		}
		seen[p] = true
	}
	if o.Collect != nil && len(o.Collect) == 0 {
		return errors.New("aws: options: collect is empty")
	}
	spotAdvisor := o.SpotAdvisor
	if spotAdvisor == "off" {
		spotAdvisor = ""
	}
	for name, u := range map[string]string{"pricing_endpoint": o.PricingEndpoint, "ec2_endpoint": o.EC2Endpoint,
		"spot_feed": o.SpotFeed, "spot_advisor": spotAdvisor} {
		if u == "" {
			continue
		}
		p, err := url.Parse(u)
		if err != nil {
			return fmt.Errorf("aws: options: %s: %w", name, err)
		}
		if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("aws: options: %s %q is not an http(s) URL", name, u)
		}
	}
	if o.BulkTimeout != "" {
		d, err := time.ParseDuration(o.BulkTimeout)
		if err != nil {
			return fmt.Errorf("aws: options: bulk_timeout: %w", err)
		}
		if d <= 0 {
			return fmt.Errorf("aws: options: bulk_timeout %s is not positive", d)
		}
	}
	return o.validateCapacityBlocks()
}

// Source is the AWS source.
type Source struct {
	cfg         scrapers.Config
	opts        Options // defaults filled in
	custom      bool    // regions were configured
	since       time.Duration
	bulkTimeout time.Duration
	cbHours     int           // capacity_block_hours
	cbWindow    time.Duration // capacity_block_window
	// awsConfig loads the SDK configuration; tests replace it.
	awsConfig func(ctx context.Context) (awssdk.Config, error)
}

// New builds the source from its config.
func New(cfg scrapers.Config) (scrapers.Source, error) {
	var o Options
	if err := cfg.DecodeOptions(&o); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if p, err := url.Parse(cfg.EndpointOr(DefaultEndpoint)); err != nil || p.Host == "" {
		return nil, fmt.Errorf("aws: endpoint %q is not an absolute URL", cfg.EndpointOr(DefaultEndpoint))
	}
	s := &Source{cfg: cfg, custom: len(o.Regions) > 0, since: DefaultSince, bulkTimeout: DefaultBulkTimeout,
		cbHours: DefaultCapacityBlockHours, cbWindow: DefaultCapacityBlockWindow}
	if o.Mode == "" {
		o.Mode = ModeAuto
	}
	if len(o.Regions) == 0 {
		o.Regions = slices.Clone(DefaultRegions)
	}
	if len(o.Collect) == 0 {
		o.Collect = []string{PartOnDemand, PartReserved, PartSpot}
		if o.Mode != ModePublic {
			o.Collect = append(o.Collect, PartCapacityBlocks)
		}
	}
	if len(o.CapacityBlockTypes) == 0 {
		o.CapacityBlockTypes = slices.Clone(DefaultCapacityBlockTypes)
	}
	if len(o.CapacityBlockRegions) == 0 {
		o.CapacityBlockRegions = slices.Clone(o.Regions)
	}
	if o.CapacityBlockHours != 0 {
		s.cbHours = o.CapacityBlockHours
	}
	if o.CapacityBlockWindow != "" {
		s.cbWindow, _ = time.ParseDuration(o.CapacityBlockWindow)
	}
	if o.SpotFeed == "" {
		o.SpotFeed = DefaultSpotFeed
	}
	if o.Since != "" {
		s.since, _ = time.ParseDuration(o.Since)
	}
	if o.BulkTimeout != "" {
		s.bulkTimeout, _ = time.ParseDuration(o.BulkTimeout)
	}
	s.opts = o
	s.awsConfig = s.loadDefaultAWS
	return s, nil
}

// Expect is the coverage guard: the default regions sell dozens of GPU sizes each, so
// a healthy run yields hundreds of rows and always the flagship and the common sizes.
func (s *Source) Expect() scrapers.Expectation {
	if !s.part(PartOnDemand) && !s.part(PartReserved) && !s.part(PartSpot) {
		return scrapers.Expectation{} // capacity_blocks alone: signals, no rows
	}
	if s.custom {
		return scrapers.Expectation{MinRows: len(s.opts.Regions)}
	}
	return scrapers.Expectation{
		MinRows: 200,
		SKUs:    []string{"p5.48xlarge", "g5.xlarge", "g6.xlarge", "g4dn.xlarge"},
	}
}

func (s *Source) log() *slog.Logger {
	if s.cfg.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.cfg.Logger.With("source", s.cfg.Name)
}

func (s *Source) part(p string) bool { return slices.Contains(s.opts.Collect, p) }

// wants reports whether a row of this pricing kind belongs to the collected parts.
func (s *Source) wants(pricing string) bool {
	switch pricing {
	case schemas.OnDemand:
		return s.part(PartOnDemand)
	case schemas.Spot:
		return s.part(PartSpot)
	}
	return s.part(PartReserved)
}

// Collect runs the parts in the chosen mode; a part that fails is recorded and the
// others go on. The capacity_blocks part runs in API mode only and never fails the
// run (collectCapacityBlocks).
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	log := s.log()
	mode := s.opts.Mode
	var ac awssdk.Config
	if mode != ModePublic {
		var err error
		ac, err = s.awsConfig(ctx)
		switch {
		case err != nil && mode == ModeAPI:
			return fmt.Errorf("aws: loading AWS configuration: %w", err)
		case err != nil:
			log.Info("no AWS configuration, reading the public price files", "error", err.Error())
			mode = ModePublic
		case !hasCredentials(ctx, ac) && mode == ModeAPI:
			return errors.New("aws: mode api: no usable AWS credentials in the default chain")
		case !hasCredentials(ctx, ac):
			log.Info("no AWS credentials, reading the public price files")
			mode = ModePublic
		default:
			mode = ModeAPI
		}
		ac.HTTPClient = s.sdkHTTP(ac.HTTPClient)
	}
	var errs []error
	if s.part(PartOnDemand) || s.part(PartReserved) {
		var err error
		if mode == ModeAPI {
			err = s.collectPriceList(ctx, ac, e)
			if err != nil && s.opts.Mode == ModeAuto && isAuthError(err) {
				log.Warn("price list API refused the credentials, reading the public offer files", "error", err.Error())
				err = s.collectBulk(ctx, e)
			}
		} else {
			err = s.collectBulk(ctx, e)
		}
		errs = append(errs, err)
	}
	if s.part(PartSpot) {
		var err error
		if mode == ModeAPI {
			err = s.collectSpotHistory(ctx, ac, e)
			if err != nil && s.opts.Mode == ModeAuto && isAuthError(err) {
				log.Warn(
					"spot price history refused the credentials, reading the public spot feed",
					"error",
					err.Error(),
				)
				err = s.collectSpotFeed(ctx, e)
			}
		} else {
			err = s.collectSpotFeed(ctx, e)
		}
		errs = append(errs, err)
		s.collectSpotAdvisor(ctx, e)
	}
	if s.part(PartCapacityBlocks) {
		if mode == ModeAPI {
			s.collectCapacityBlocks(ctx, ac, e)
		} else {
			log.Debug("capacity block offerings need the EC2 API: not read in public mode")
		}
	}
	return errors.Join(errs...)
}

// collectSpotAdvisor reads the Spot Advisor file (public, no credentials) and sends
// its interruption bands of the collected regions as signals, its entries that
// cannot be read as rejects. A run that takes no signals does not fetch it; a file
// that cannot be fetched or read is a warning: the bands are not the prices, and
// the prices stand.
func (s *Source) collectSpotAdvisor(ctx context.Context, e scrapers.Emitter) {
	if s.opts.SpotAdvisor == "off" {
		return
	}
	if _, ok := e.(scrapers.SignalEmitter); !ok {
		return
	}
	res, err := FetchSpotAdvisor(ctx, s.cfg.Client, s.opts.SpotAdvisor, s.cfg.Now())
	if err != nil {
		s.log().Warn("spot advisor not read: interruption bands not stored this run", "error", err.Error())
		return
	}
	regions := map[string]bool{}
	for _, r := range s.opts.Regions {
		regions[r] = true
	}
	var keep []schemas.Signal
	for _, sig := range res.Signals {
		if len(regions) == 0 || regions[sig.Region] {
			keep = append(keep, sig)
		}
	}
	scrapers.EmitSignals(e, keep...)
	for _, r := range res.Rejects {
		if !scrapers.Reject(e, r.Raw, r.Reason) {
			s.log().Warn("spot advisor entry not read", "reason", r.Reason)
		}
	}
}

// collectBulk streams the offer file of every region named in the region index.
func (s *Source) collectBulk(ctx context.Context, e scrapers.Emitter) error {
	log := s.log()
	idxURL := s.cfg.EndpointOr(DefaultEndpoint)
	base, err := url.Parse(idxURL)
	if err != nil {
		return fmt.Errorf("aws: endpoint: %w", err)
	}
	resp, err := s.cfg.Client.Get(ctx, idxURL, nil)
	if err != nil {
		return fmt.Errorf("aws: region index: %w", err)
	}
	files, err := parseRegionIndex(bytesReader(resp.Body))
	if err != nil {
		return err
	}
	var errs []error
	for _, region := range s.opts.Regions {
		rel, ok := files[region]
		if !ok {
			errs = append(errs, fmt.Errorf("aws: region %s is not in the region index", region))
			continue
		}
		ref, err := url.Parse(rel)
		if err != nil {
			errs = append(errs, fmt.Errorf("aws: region %s: offer file URL: %w", region, err))
			continue
		}
		u := base.ResolveReference(ref).String()
		var st offerStats
		err = s.stream(ctx, u, func(body io.Reader) error {
			var err error
			st, err = streamOffer(body, region, s.cfg.Now(), func(o schemas.Observation) {
				if s.wants(o.Pricing) {
					o.SourceURL = u
					e.Emit(o)
				}
			})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("aws: region %s: %w", region, err))
			if ctx.Err() != nil {
				break
			}
			continue
		}
		log.Debug("offer file read", "region", region, "products", st.Products, "gpu_products", st.GPUProducts,
			"rows", st.Rows, "skipped", st.Skipped)
	}
	return errors.Join(errs...)
}

// stream GETs url and hands the body to read without reading it whole (fetch.Client
// caps bodies; offer files are gigabytes), through the shared client's Stream: its
// transport with the bulk timeout, its User-Agent, host limiter and retry policy (429,
// 5xx and transport errors are retried before the body is read, never after), and
// its Observer, which keeps the file as it is read when recording.
func (s *Source) stream(ctx context.Context, u string, read func(io.Reader) error) error {
	return s.cfg.Client.Stream(ctx, u, nil, s.bulkTimeout, read)
}

// collectSpotFeed reads the public spot feed.
func (s *Source) collectSpotFeed(ctx context.Context, e scrapers.Emitter) error {
	resp, err := s.cfg.Client.Get(ctx, s.opts.SpotFeed, nil)
	if err != nil {
		return fmt.Errorf("aws: spot feed: %w", err)
	}
	regions := map[string]bool{}
	for _, r := range s.opts.Regions {
		regions[r] = true
	}
	res, err := parseSpotFeed(resp.Body, regions, s.cfg.Now())
	if err != nil {
		return err
	}
	for _, o := range res.Rows {
		o.SourceURL = s.opts.SpotFeed
		e.Emit(o)
	}
	s.log().Debug("spot feed read", "rows", len(res.Rows), "skipped", res.Skipped)
	return nil
}

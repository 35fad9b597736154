package aws

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/gpuprice/gpuprice/schemas"
)

// This file is the part of the source that `gpuprice backfill aws-spot` calls: the
// spot price history of one region read page by page from a given NextToken, so a
// backfill of up to 90 days can stop after any page and resume after it.

// LoadConfig loads the standard AWS configuration (environment, shared files, SSO,
// web identity, container and instance roles) with an HTTP client of the given
// timeout (0: the SDK's default).
func LoadConfig(ctx context.Context, timeout time.Duration) (awssdk.Config, error) {
	hc := awshttp.NewBuildableClient()
	if timeout > 0 {
		hc = hc.WithTimeout(timeout)
	}
	ac, err := config.LoadDefaultConfig(ctx,
		config.WithRegion(PricingRegion),
		config.WithAppID("gpuprice"),
		config.WithHTTPClient(hc),
		config.WithLogger(SDKLogger(slog.Default())),
	)
	if err != nil {
		return ac, fmt.Errorf("aws: loading AWS configuration: %w", err)
	}
	return ac, nil
}

// HasCredentials reports whether the configuration yields usable credentials.
func HasCredentials(ctx context.Context, ac awssdk.Config) bool { return hasCredentials(ctx, ac) }

// GPUInstanceTypes lists the GPU instance types the spot history is asked for: every
// size of the family table that the EC2 API knows, sorted.
func GPUInstanceTypes() []string { return gpuInstanceTypes() }

// ec2Client builds an EC2 client of one region; endpoint "" means the SDK's.
func ec2Client(ac awssdk.Config, region, endpoint string) *ec2.Client {
	return ec2.NewFromConfig(ac, func(o *ec2.Options) {
		o.Region = region
		if endpoint != "" {
			o.BaseEndpoint = awssdk.String(endpoint)
		}
	})
}

// EnabledRegions returns the regions enabled for the account (EC2 DescribeRegions,
// which without AllRegions lists the regions that need no opt-in and those opted in),
// sorted. endpoint "" means the SDK's endpoint of PricingRegion.
func EnabledRegions(ctx context.Context, ac awssdk.Config, endpoint string) ([]string, error) {
	out, err := ec2Client(ac, PricingRegion, endpoint).DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
	if err != nil {
		return nil, fmt.Errorf("aws: DescribeRegions: %w", err)
	}
	var regions []string
	for _, r := range out.Regions {
		if st := awssdk.ToString(r.OptInStatus); st == "not-opted-in" {
			continue
		}
		if n := awssdk.ToString(r.RegionName); n != "" {
			regions = append(regions, n)
		}
	}
	slices.Sort(regions)
	return regions, nil
}

// IsAuthError reports whether err is AWS refusing the credentials or the permission.
func IsAuthError(err error) bool { return isAuthError(err) }

// SpotHistoryQuery is one region's spot price history read.
type SpotHistoryQuery struct {
	Region        string
	InstanceTypes []string // empty: GPUInstanceTypes()
	Start, End    time.Time
	// NextToken resumes after the page that returned it; "" starts at the first page.
	NextToken string
	// Endpoint replaces the SDK's EC2 endpoint (the ec2_endpoint option); "" means
	// the SDK's.
	Endpoint string
	// PageSize is MaxResults (default and maximum 1000).
	PageSize int32
}

// Rejected is a spot record that could not be read (no instance type or zone).
type Rejected struct {
	Raw    string
	Reason string
}

// SpotPage is one page of spot price history.
type SpotPage struct {
	Region    string
	Number    int // 1-based, counted from the query's NextToken
	Records   int // records in the page
	Rows      []schemas.Observation
	Rejects   []Rejected
	NextToken string // the token of the next page; "" after the last page
}

// SourceURL is the source_url of spot rows read through endpoint ("" means the
// SDK's endpoint of region).
func SourceURL(region, endpoint string) string {
	if endpoint != "" {
		return endpoint
	}
	return "https://ec2." + region + ".amazonaws.com"
}

// ReadSpotHistory reads q's pages in order from q.NextToken and hands each to page
// (with its rows parsed as Collect parses them, observed at observedAt). It stops at
// the first error of EC2 or of page and returns it; a page is handed over only once
// it was read whole, so a caller that checkpoints page.NextToken after page returns
// resumes exactly after the last page it handled.
func ReadSpotHistory(
	ctx context.Context,
	ac awssdk.Config,
	q SpotHistoryQuery,
	observedAt time.Time,
	page func(SpotPage) error,
) error {
	names := q.InstanceTypes
	if len(names) == 0 {
		names = gpuInstanceTypes()
	}
	types := make([]ec2types.InstanceType, len(names))
	for i, n := range names {
		types[i] = ec2types.InstanceType(n)
	}
	size := q.PageSize
	if size <= 0 || size > 1000 {
		size = 1000
	}
	client := ec2Client(ac, q.Region, q.Endpoint)
	src := SourceURL(q.Region, q.Endpoint)
	token := q.NextToken
	for n := 1; ; n++ {
		in := &ec2.DescribeSpotPriceHistoryInput{
			InstanceTypes:       types,
			ProductDescriptions: []string{spotProductDescription},
			StartTime:           awssdk.Time(q.Start),
			EndTime:             awssdk.Time(q.End),
			MaxResults:          awssdk.Int32(size),
		}
		if token != "" {
			in.NextToken = awssdk.String(token)
		}
		out, err := client.DescribeSpotPriceHistory(ctx, in)
		if err != nil {
			return fmt.Errorf("aws: DescribeSpotPriceHistory %s page %d: %w", q.Region, n, err)
		}
		rows, rejects := parseSpotHistory(out.SpotPriceHistory, q.Region, observedAt)
		p := SpotPage{Region: q.Region, Number: n, Records: len(out.SpotPriceHistory), Rows: rows,
			NextToken: awssdk.ToString(out.NextToken)}
		for i := range p.Rows {
			p.Rows[i].SourceURL = src
		}
		for _, r := range rejects {
			p.Rejects = append(p.Rejects, Rejected(r))
		}
		if p.NextToken == token {
			// EC2 repeating a token would loop forever; the SDK's paginator stops too.
			p.NextToken = ""
		}
		if err := page(p); err != nil {
			return err
		}
		if p.NextToken == "" {
			return nil
		}
		token = p.NextToken
	}
}

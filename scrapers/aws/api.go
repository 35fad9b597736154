package aws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"github.com/aws/smithy-go"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// PricingRegion is the region of the Price List Query API endpoint used.
const PricingRegion = "us-east-1"

// DefaultPricingEndpoint is the Price List Query API endpoint of PricingRegion.
const DefaultPricingEndpoint = "https://api.pricing.us-east-1.amazonaws.com"

// spotProductDescription is the spot product of plain Linux in a VPC.
const spotProductDescription = "Linux/UNIX"

// credentialsTimeout bounds the search of the credential chain (the instance metadata
// service is its slowest link off EC2).
const credentialsTimeout = 10 * time.Second

// loadDefaultAWS loads the standard AWS configuration (environment, shared files, SSO,
// web identity, container and instance roles). The SDK gets its own buildable HTTP
// client with the shared client's timeout: a plain *http.Client would make the SDK
// refuse AWS_CA_BUNDLE.
func (s *Source) loadDefaultAWS(ctx context.Context) (awssdk.Config, error) {
	hc := awshttp.NewBuildableClient()
	if s.cfg.Client != nil && s.cfg.Client.HTTP != nil && s.cfg.Client.HTTP.Timeout > 0 {
		hc = hc.WithTimeout(s.cfg.Client.HTTP.Timeout)
	}
	return config.LoadDefaultConfig(ctx,
		config.WithRegion(PricingRegion),
		config.WithAppID("gpuprice"),
		config.WithHTTPClient(hc),
		config.WithLogger(SDKLogger(s.cfg.Logger)),
	)
}

// sdkHTTP is the HTTP client of the SDK's calls (GetProducts,
// DescribeSpotPriceHistory): the shared client's transport when one is set (reparse's
// archive, which answers without network), else the SDK's own (base: it honours
// AWS_CA_BUNDLE, which a plain *http.Client would make the SDK refuse). Every response
// is reported to the shared client's Observer, with the request body, so that
// `collect --record` archives the API calls like any other response; the SDK's pages
// are small and read whole. The credential chain's own requests (instance metadata,
// SSO, STS) do not go through it: their answers are credentials.
func (s *Source) sdkHTTP(base awssdk.HTTPClient) awssdk.HTTPClient {
	fc := s.cfg.Client
	if fc == nil {
		return base
	}
	var d fetch.Doer = base
	if d == nil {
		d = awshttp.NewBuildableClient()
	}
	if fc.HTTP != nil && fc.HTTP.Transport != nil {
		d = &http.Client{Transport: fc.HTTP.Transport, Timeout: fc.HTTP.Timeout}
	}
	return fetch.Observed(d, fc.Observer, fc.MaxBody)
}

// hasCredentials reports whether the configuration yields usable credentials, by
// retrieving them.
func hasCredentials(ctx context.Context, ac awssdk.Config) bool {
	if ac.Credentials == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	c, err := ac.Credentials.Retrieve(ctx)
	return err == nil && c.HasKeys()
}

// authCodes are the error codes of a request refused for its credentials.
var authCodes = map[string]bool{
	"AccessDeniedException":       true,
	"AccessDenied":                true,
	"UnauthorizedOperation":       true,
	"AuthFailure":                 true,
	"UnrecognizedClientException": true,
	"InvalidClientTokenId":        true,
	"ExpiredToken":                true,
	"ExpiredTokenException":       true,
	"SignatureDoesNotMatch":       true,
}

// isAuthError reports whether err is AWS refusing the credentials or the permission.
func isAuthError(err error) bool { return apiErrorIn(err, authCodes) }

// apiErrorIn reports whether err is an AWS API error whose code is one of codes.
func apiErrorIn(err error, codes map[string]bool) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && codes[ae.ErrorCode()]
}

// priceListFilters are the GetProducts filters of one region: GPU instances
// (instanceFamily "GPU instance", which every GPU family carries, from p2 to p6 and g3
// to g6e, so new families come without a code change) of plain Linux, shared tenancy,
// on-demand capacity.
func priceListFilters(region string) []pricingtypes.Filter {
	f := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{
			Type:  pricingtypes.FilterTypeTermMatch,
			Field: awssdk.String(field),
			Value: awssdk.String(value),
		}
	}
	return []pricingtypes.Filter{
		f("regionCode", region),
		f("instanceFamily", "GPU instance"),
		f("operatingSystem", "Linux"),
		f("tenancy", "Shared"),
		f("preInstalledSw", "NA"),
		f("capacitystatus", "Used"),
	}
}

// collectPriceList reads on-demand and reserved prices of every region through the
// Price List Query API. A region that fails is recorded and the others go on; an
// authorization failure stops at once (the caller may fall back to the public files).
func (s *Source) collectPriceList(ctx context.Context, ac awssdk.Config, e scrapers.Emitter) error {
	log := s.log()
	endpoint := s.opts.PricingEndpoint
	client := pricing.NewFromConfig(ac, func(o *pricing.Options) {
		o.Region = PricingRegion
		if endpoint != "" {
			o.BaseEndpoint = awssdk.String(endpoint)
		}
	})
	if endpoint == "" {
		endpoint = DefaultPricingEndpoint
	}
	var errs []error
	for _, region := range s.opts.Regions {
		in := &pricing.GetProductsInput{
			ServiceCode:   awssdk.String("AmazonEC2"),
			FormatVersion: awssdk.String("aws_v1"),
			MaxResults:    awssdk.Int32(100),
			Filters:       priceListFilters(region),
		}
		p := pricing.NewGetProductsPaginator(client, in)
		for page := 1; p.HasMorePages(); page++ {
			out, err := p.NextPage(ctx)
			if err != nil {
				err = fmt.Errorf("aws: GetProducts %s page %d: %w", region, page, err)
				if isAuthError(err) || ctx.Err() != nil {
					return errors.Join(append(errs, err)...)
				}
				errs = append(errs, err)
				break
			}
			res := parsePriceList(out.PriceList, s.cfg.Now())
			for _, r := range res.Rejects {
				scrapers.Reject(e, r.Raw, r.Reason)
			}
			n := 0
			for _, o := range res.Rows {
				if s.wants(o.Pricing) {
					o.SourceURL = endpoint
					e.Emit(o)
					n++
				}
			}
			log.Debug("price list page read", "region", region, "page", page, "items", len(out.PriceList),
				"rows", n, "rejected", len(res.Rejects), "skipped", res.Skipped)
		}
	}
	return errors.Join(errs...)
}

// collectSpotHistory reads the spot price history of the GPU instance types in every
// region, from now − since, per availability zone. A region that fails is recorded
// and the others go on.
func (s *Source) collectSpotHistory(ctx context.Context, ac awssdk.Config, e scrapers.Emitter) error {
	log := s.log()
	var types []ec2types.InstanceType
	for _, t := range gpuInstanceTypes() {
		types = append(types, ec2types.InstanceType(t))
	}
	now := s.cfg.Now()
	start := now.Add(-s.since)
	var errs []error
	regions := s.opts.Regions
	if !s.custom {
		// Without a configured list: every region enabled for the account.
		if enabled, err := EnabledRegions(ctx, ac, s.opts.EC2Endpoint); err != nil {
			log.Warn("enabled regions not listed; using the default GPU regions", "error", err.Error())
		} else if len(enabled) > 0 {
			regions = enabled
		}
	}
	for _, region := range regions {
		client := ec2.NewFromConfig(ac, func(o *ec2.Options) {
			o.Region = region
			if s.opts.EC2Endpoint != "" {
				o.BaseEndpoint = awssdk.String(s.opts.EC2Endpoint)
			}
		})
		src := s.opts.EC2Endpoint
		if src == "" {
			src = "https://ec2." + region + ".amazonaws.com"
		}
		in := &ec2.DescribeSpotPriceHistoryInput{
			InstanceTypes:       types,
			ProductDescriptions: []string{spotProductDescription},
			StartTime:           awssdk.Time(start),
			EndTime:             awssdk.Time(now),
			MaxResults:          awssdk.Int32(1000),
		}
		p := ec2.NewDescribeSpotPriceHistoryPaginator(client, in)
		for page := 1; p.HasMorePages(); page++ {
			out, err := p.NextPage(ctx)
			if err != nil {
				err = fmt.Errorf("aws: DescribeSpotPriceHistory %s page %d: %w", region, page, err)
				if isAuthError(err) || ctx.Err() != nil {
					return errors.Join(append(errs, err)...)
				}
				errs = append(errs, err)
				break
			}
			rows, rejects := parseSpotHistory(out.SpotPriceHistory, region, now)
			for _, r := range rejects {
				scrapers.Reject(e, r.Raw, r.Reason)
			}
			for _, o := range rows {
				o.SourceURL = src
				e.Emit(o)
			}
			log.Debug("spot history page read", "region", region, "page", page, "records", len(out.SpotPriceHistory),
				"rows", len(rows), "rejected", len(rejects))
		}
	}
	return errors.Join(errs...)
}

// parseSpotHistory turns DescribeSpotPriceHistory records of one region into spot rows,
// one per availability zone and price change (effective_at is the record's timestamp).
// It is pure. A record without an instance type or zone is a reject; a price that is
// not a number is emitted as 0 with the text in Attrs["price_text"].
func parseSpotHistory(
	records []ec2types.SpotPrice,
	region string,
	observedAt time.Time,
) ([]schemas.Observation, []reject) {
	rows := []schemas.Observation{}
	var rejects []reject
	for _, r := range records {
		it := string(r.InstanceType)
		zone := awssdk.ToString(r.AvailabilityZone)
		if it == "" || zone == "" {
			raw, _ := json.Marshal(r)
			rejects = append(
				rejects,
				reject{Raw: string(raw), Reason: "aws: spot price record without instance type or availability zone"},
			)
			continue
		}
		spec := specOf(it)
		o := schemas.Observation{
			ObservedAt:   observedAt,
			EffectiveAt:  observedAt,
			Provider:     Provider,
			SKU:          it,
			Region:       region,
			Zone:         zone,
			Pricing:      schemas.Spot,
			Currency:     "USD",
			Unit:         schemas.UnitHour,
			GPUName:      spec.GPUName,
			GPUCount:     spec.GPUCount,
			GPUMemoryGB:  spec.MemoryGB,
			Interconnect: spec.Interconnect,
			SourceKind:   schemas.SourceAPI,
			Attrs:        map[string]string{"product_description": string(r.ProductDescription)},
		}
		if r.Timestamp != nil {
			o.EffectiveAt = r.Timestamp.UTC()
		}
		if !strings.HasPrefix(zone, region) {
			o.Attrs["zone_region_mismatch"] = "true"
		}
		text := awssdk.ToString(r.SpotPrice)
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			v = 0
			o.Attrs["price_text"] = text
		}
		o.PriceNative = v
		rows = append(rows, o)
	}
	return rows, rejects
}

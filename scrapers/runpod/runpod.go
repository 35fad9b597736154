// Package runpod collects RunPod's per-GPU hourly prices, Secure Cloud and Community
// Cloud kept apart, from its GraphQL API (https://api.runpod.io/graphql, query
// gpuTypes) or, without an API key, from its public pricing page
// (https://www.runpod.io/pricing).
// The long story (modes, rules, limits) is in its README.md.
package runpod

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Name is the registry name of this source.
const Name = "runpod"

// DefaultEndpoint is the GraphQL API (api mode).
const DefaultEndpoint = "https://api.runpod.io/graphql"

// DefaultPageURL is the public pricing page (page mode).
const DefaultPageURL = "https://www.runpod.io/pricing"

// EnvAPIKey is the environment variable holding the optional API key.
const EnvAPIKey = "RUNPOD_API_KEY"

// Modes.
const (
	ModeAuto = "auto"
	ModeAPI  = "api"
	ModePage = "page"
)

// GPUTypesQuery is the GraphQL query sent in api mode: per GPU type its prices per
// cloud (on-demand and spot), the Secure Cloud's savings-plan prices
// (oneWeekPrice … sixMonthPrice), the lowest prices and each cloud's stock.
const GPUTypesQuery = `query GpuTypes { gpuTypes { id displayName memoryInGb secureCloud communityCloud ` +
	`securePrice communityPrice secureSpotPrice communitySpotPrice ` +
	`oneWeekPrice oneMonthPrice threeMonthPrice sixMonthPrice ` +
	`lowestPrice(input: {gpuCount: 1}) { minimumBidPrice uninterruptablePrice } ` +
	`secureStock: lowestPrice(input: {gpuCount: 1, secureCloud: true}) { stockStatus maxUnreservedGpuCount } ` +
	`communityStock: lowestPrice(input: {gpuCount: 1, secureCloud: false}) { stockStatus maxUnreservedGpuCount } } }`

// sampleOptions documents sources.runpod.options in the sample configuration.
//
//go:embed sample.yaml
var sampleOptions string

func init() {
	scrapers.Register(scrapers.Info{
		Name:     Name,
		Provider: "runpod",
		Method:   schemas.SourceAPI,
		Pricing: []string{schemas.OnDemand, schemas.Spot, schemas.CommitmentPricing(1), schemas.CommitmentPricing(3),
			schemas.CommitmentPricing(6)},
		Credentials:     EnvAPIKey + " (optional; without it the pricing page is read)",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "*/10 * * * *",
		Description: "RunPod GraphQL gpuTypes (or the public pricing page without a key): Secure and Community Cloud, " +
			"on-demand and spot, and Secure Cloud savings plans (3 and 6 months, paid upfront), per GPU-hour",
		Tier:          schemas.TierMarketplace,
		Interconnect:  schemas.InterconnectEthernet,
		Naming:        naming,
		SecretEnv:     []string{EnvAPIKey},
		SampleOptions: sampleOptions,
		// Every gpuTypes answer carries a few round placeholder prices (the
		// placeholder rule): 2 of 32 priced rows of the recorded reference, 3 of 88
		// in a live answer. Up to a tenth is RunPod's normal answer; more degrades.
		QuarantineShare: 0.1,
		Signals:         StockSignals,
		Doc: scrapers.Doc{
			ProviderTitle: "RunPod",
			Method:        "GraphQL `gpuTypes`; without a key the pricing page",
			OnDemand:      "✓ secure and community",
			Spot:          "✓ secure and community",
			Reserved:      "3- and 6-month savings plans (secure, all upfront; API only)",
			Credentials:   "`RUNPOD_API_KEY` (optional)",
		},
	}, New)
}

// Options are the source's settings (sources.runpod.options).
type Options struct {
	// Mode is auto (default), api or page.
	Mode string `json:"mode"`
	// PageURL replaces DefaultPageURL in page mode (the endpoint is the API's).
	PageURL string `json:"page_url"`
}

// Validate checks the options without network I/O.
func (o Options) Validate() error {
	switch o.Mode {
	case "", ModeAuto, ModeAPI, ModePage:
	default:
		return fmt.Errorf("runpod: options: mode %q is not auto, api or page", o.Mode)
	}
	if o.PageURL != "" {
		u, err := url.Parse(o.PageURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("runpod: options: page_url %q is not an http(s) URL", o.PageURL)
		}
	}
	return nil
}

// Source is the RunPod source.
type Source struct {
	cfg     scrapers.Config
	mode    string // api or page, resolved
	apiKey  string
	pageURL string
}

// New builds the source from its config, resolving mode auto from the environment.
func New(cfg scrapers.Config) (scrapers.Source, error) {
	var o Options
	if err := cfg.DecodeOptions(&o); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.EndpointOr(DefaultEndpoint))
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("runpod: endpoint is not an absolute URL")
	}
	if u.User != nil || u.Query().Has("api_key") {
		// Not echoed: the URL holds a secret.
		return nil, fmt.Errorf("runpod: endpoint carries credentials; put the key in %s instead", EnvAPIKey)
	}
	s := &Source{cfg: cfg, apiKey: cfg.Secret(EnvAPIKey), pageURL: o.PageURL}
	if s.pageURL == "" {
		s.pageURL = DefaultPageURL
	}
	switch o.Mode {
	case ModeAPI, ModePage:
		s.mode = o.Mode
	default:
		s.mode = ModePage
		if s.apiKey != "" {
			s.mode = ModeAPI
		}
	}
	return s, nil
}

// String describes the source without its key.
func (s *Source) String() string {
	key := "no key"
	if s.apiKey != "" {
		key = "key from " + EnvAPIKey
	}
	return fmt.Sprintf("runpod(mode=%s, %s)", s.mode, key)
}

// Mode returns the resolved mode, api or page.
func (s *Source) Mode() string { return s.mode }

// MajorModels are the GPU models a healthy RunPod answer prices (every recorded
// gpuTypes answer and page prices all five, in one cloud or both).
var MajorModels = []string{"H100", "A100", "L40S", "RTX4090", "H200"}

// Expect is the coverage guard. The API lists some forty GPU types, four rows each, of
// which a live answer prices about a hundred (the recorded one 101) and the recorded
// reference excerpt, nine types, 30: at least 24 priced rows (six GPU types' worth).
// The page has about thirty cards, two rows each. No one SKU is required: RunPod's
// offers follow its stock (a cloud out of stock is not offered, and that is a
// routine answer), but an answer pricing fewer than three of MajorModels is not.
func (s *Source) Expect() scrapers.Expectation {
	minRows := 24
	if s.mode == ModePage {
		minRows = 20
	}
	return scrapers.Expectation{MinRows: minRows, Models: MajorModels, MinModels: 3}
}

// Collect reads the API or the page, by mode, and emits every row.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	var (
		res    result
		srcURL string
		err    error
	)
	if s.mode == ModePage {
		srcURL = s.pageURL
		res, err = s.collectPage(ctx)
	} else {
		srcURL = s.cfg.EndpointOr(DefaultEndpoint)
		res, err = s.collectAPI(ctx, srcURL)
	}
	if err != nil {
		return err
	}
	for _, o := range res.Rows {
		o.SourceURL = srcURL
		e.Emit(o)
	}
	for _, r := range res.Rejects {
		scrapers.Reject(e, r.Raw, r.Reason)
	}
	s.cfg.Logger.With("source", s.cfg.Name).
		Debug("prices read", "mode", s.mode, "rows", len(res.Rows), "rejected", len(res.Rejects), "skipped", res.Skipped)
	return nil
}

func (s *Source) collectAPI(ctx context.Context, endpoint string) (result, error) {
	body, err := json.Marshal(map[string]string{"operationName": "GpuTypes", "query": GPUTypesQuery})
	if err != nil {
		return result{}, fmt.Errorf("runpod: encoding query: %w", err)
	}
	hdr := http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json"},
	}
	if s.apiKey != "" {
		hdr.Set("Authorization", "Bearer "+s.apiKey)
	}
	// The query reads prices: sending it again does no harm, so it is retried.
	resp, err := s.cfg.Client.Do(fetch.Idempotent(ctx), http.MethodPost, endpoint, hdr, body)
	if err != nil {
		return result{}, fmt.Errorf("runpod: %w", err)
	}
	return parseGPUTypes(bytes.NewReader(resp.Body), s.cfg.Now())
}

func (s *Source) collectPage(ctx context.Context) (result, error) {
	f, err := pageutil.Crawl(ctx, s.cfg, s.pageURL)
	if err != nil {
		return result{}, fmt.Errorf("runpod: %w", err)
	}
	return parsePage(bytes.NewReader(f.Body), s.cfg.Now())
}

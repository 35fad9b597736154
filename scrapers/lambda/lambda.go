// Package lambda collects Lambda's on-demand GPU instance prices from its public
// pricing page (https://lambda.ai/service/gpu-cloud, the "Instances pricing" table)
// and, with an API key, each instance type's capacity from the Lambda Cloud API
// (GET /api/v1/instance-types: the regions with capacity available now) as stock
// signals.
// The long story (modes, rules, limits) is in its README.md.
package lambda

import (
	"context"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Name is the registry name of this source.
const Name = "lambda"

// DefaultEndpoint is the public pricing page.
const DefaultEndpoint = "https://lambda.ai/service/gpu-cloud"

// EnvAPIKey is the environment variable holding the optional Lambda Cloud API key:
// set, the source also reads each instance type's capacity (CapacityURL).
const EnvAPIKey = "LAMBDA_API_KEY"

// CapacityURL is the Lambda Cloud API's list of instance types, each with the
// regions that have capacity for it now
// (https://docs.lambda.ai/api/cloud#listInstanceTypes).
const CapacityURL = "https://cloud.lambda.ai/api/v1/instance-types"

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "lambda",
		Method:          schemas.SourceScrape,
		Pricing:         []string{schemas.OnDemand},
		Credentials:     EnvAPIKey + " (optional; with it each instance type's regions with capacity are read from the API)",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description:     "Lambda public pricing page: on-demand price per GPU-hour of every 8x/4x/2x/1x instance",
		Tier:            schemas.TierSpecialist,
		Interconnect:    schemas.InterconnectInfiniband,
		Naming:          naming,
		SecretEnv:       []string{EnvAPIKey},
		SampleOptions:   "# capacity_endpoint: " + CapacityURL + "   # the capacity API (with " + EnvAPIKey + ")\n",
		Doc: scrapers.Doc{
			ProviderTitle: "Lambda",
			Method:        "pricing page (HTML)",
			OnDemand:      "✓",
			Spot:          "—",
			Reserved:      "—",
			Credentials:   "none; `LAMBDA_API_KEY` (optional: capacity)",
		},
	}, New)
}

// page describes the source. Its coverage guard: the table lists about twenty instance
// types, H100 SXM in every size.
var page = pageutil.Page{
	Name:            Name,
	DefaultEndpoint: DefaultEndpoint,
	ParseDoc:        parseDoc,
	ErrLayout:       ErrLayout,
	Expectation: scrapers.Expectation{
		MinRows: 12,
		SKUs:    []string{"gpu_8x_h100_sxm_80gb", "gpu_1x_h100_sxm_80gb"},
	},
}

// Source is the Lambda source: the pricing page and, with a key, the capacity of
// each instance type.
type Source struct {
	page        scrapers.Source // the pricing page (pageutil.Page)
	cfg         scrapers.Config
	apiKey      string
	capacityURL string
}

// New builds the source from its config. Its one option, capacity_endpoint, is the
// capacity API's URL (default CapacityURL; https, or a loopback test server).
// The API key is read from cfg.Secret(EnvAPIKey).
func New(cfg scrapers.Config) (scrapers.Source, error) {
	p, capacityURL, err := page.NewWithCapacity(cfg, CapacityURL)
	if err != nil {
		return nil, err
	}
	return &Source{page: p, cfg: cfg, apiKey: cfg.Secret(EnvAPIKey), capacityURL: capacityURL}, nil
}

// String describes the source without its key.
func (s *Source) String() string {
	if s.apiKey == "" {
		return "lambda(pricing page)"
	}
	return "lambda(pricing page, capacity with the key from " + EnvAPIKey + ")"
}

// Expect is the pricing page's coverage guard (the capacity adds no rows).
func (s *Source) Expect() scrapers.Expectation { return page.Expect() }

// Collect reads the pricing page and emits its rows; then, when a key is set and e
// takes signals, the capacity of every instance type as stock signals. A failed or
// refused capacity call is logged as a warning and costs no price: the page's result
// is the run's.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	var rows []schemas.Observation
	err := s.page.Collect(ctx, pageutil.Tee(e, &rows))
	if len(rows) > 0 && s.apiKey != "" {
		if _, ok := e.(scrapers.SignalEmitter); ok {
			s.collectCapacity(ctx, e, rows)
		}
	}
	return err
}

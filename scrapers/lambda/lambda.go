// Package lambda collects Lambda's on-demand GPU instance prices from its public
// pricing page (https://lambda.ai/service/gpu-cloud, the "Instances pricing" table).
// The long story (modes, rules, limits) is in its README.md.
package lambda

import (
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Name is the registry name of this source.
const Name = "lambda"

// DefaultEndpoint is the public pricing page.
const DefaultEndpoint = "https://lambda.ai/service/gpu-cloud"

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "lambda",
		Method:          schemas.SourceScrape,
		Pricing:         []string{schemas.OnDemand},
		Credentials:     "",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description:     "Lambda public pricing page: on-demand price per GPU-hour of every 8x/4x/2x/1x instance",
		Tier:            schemas.TierSpecialist,
		Interconnect:    schemas.InterconnectInfiniband,
		Naming:          naming,
		Doc: scrapers.Doc{
			ProviderTitle: "Lambda",
			Method:        "pricing page (HTML)",
			OnDemand:      "✓",
			Spot:          "—",
			Reserved:      "—",
			Credentials:   "none",
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

// Source is the Lambda pricing page source.
type Source = pageutil.PageSource

// New builds the source from its config; it takes no options (any key is an error).
func New(cfg scrapers.Config) (scrapers.Source, error) { return page.New(cfg) }

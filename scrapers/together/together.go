// Package together collects Together AI's GPU prices from its public pricing page
// (https://www.together.ai/pricing: the "Dedicated Inference" and "GPU Clusters"
// tables).
// The long story (modes, rules, limits) is in its README.md.
package together

import (
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Name is the registry name of this source.
const Name = "together"

// DefaultEndpoint is the public pricing page.
const DefaultEndpoint = "https://www.together.ai/pricing"

func init() {
	scrapers.Register(scrapers.Info{
		Name:     Name,
		Provider: "together",
		Method:   schemas.SourceScrape,
		Pricing: []string{
			schemas.OnDemand,
			schemas.CommitmentPricing(1),
			schemas.CommitmentPricing(3),
			schemas.CommitmentPricing(6),
			schemas.CommitmentPricing(7),
			schemas.Reserved1Y,
		},
		Credentials:     "",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description: "Together AI public pricing page: dedicated inference and GPU cluster prices per GPU-hour, " +
			"on-demand and reserved terms",
		Tier:         schemas.TierSpecialist,
		Interconnect: schemas.InterconnectInfiniband,
		Doc: scrapers.Doc{
			ProviderTitle: "Together AI",
			Method:        "pricing page (HTML)",
			OnDemand:      "✓",
			Spot:          "—",
			Reserved:      "7–30, 31–90, 91–180, 181+ days",
			Credentials:   "none",
		},
	}, New)
}

// page describes the source. Its coverage guard: HGX H100 in both sections and HGX B200 in the GPU
// clusters table.
var page = pageutil.Page{
	Name:            Name,
	DefaultEndpoint: DefaultEndpoint,
	ParseDoc:        parseDoc,
	ErrLayout:       ErrLayout,
	Expectation: scrapers.Expectation{
		MinRows: 6,
		SKUs: []string{
			"together:dedicated-inference:hgx-h100",
			"together:gpu-clusters:hgx-h100",
			"together:gpu-clusters:hgx-b200",
		},
	},
}

// Source is the Together AI pricing page source.
type Source = pageutil.PageSource

// New builds the source from its config; it takes no options (any key is an error).
func New(cfg scrapers.Config) (scrapers.Source, error) { return page.New(cfg) }

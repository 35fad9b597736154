// Package crusoe collects Crusoe Cloud's GPU prices from its public pricing page
// (https://crusoe.ai/cloud/pricing, the GPU price cards).
// The long story (modes, rules, limits) is in its README.md.
package crusoe

import (
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Name is the registry name of this source.
const Name = "crusoe"

// DefaultEndpoint is the public pricing page.
const DefaultEndpoint = "https://crusoe.ai/cloud/pricing"

func init() {
	scrapers.Register(scrapers.Info{
		Name:     Name,
		Provider: "crusoe",
		Method:   schemas.SourceScrape,
		Pricing: []string{
			schemas.OnDemand,
			schemas.Spot,
			schemas.Reserved1Y,
			schemas.Reserved3Y,
			schemas.CommitmentPricing(6),
		},
		Credentials:     "",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description:     "Crusoe Cloud public pricing page: on-demand, spot and reserved price per GPU-hour of every GPU card",
		Tier:            schemas.TierSpecialist,
		Interconnect:    schemas.InterconnectInfiniband,
		Doc: scrapers.Doc{
			ProviderTitle: "Crusoe",
			Method:        "pricing page (HTML)",
			OnDemand:      "✓",
			Spot:          "✓",
			Reserved:      "6 months, 1y, 3y",
			Credentials:   "none",
		},
	}, New)
}

// page describes the source. Its coverage guard: the page lists H200, H100 and A100 (SXM and PCIe) at
// least, each with an on-demand price.
var page = pageutil.Page{
	Name:            Name,
	DefaultEndpoint: DefaultEndpoint,
	ParseDoc:        parseDoc,
	ErrLayout:       ErrLayout,
	Expectation: scrapers.Expectation{
		MinRows: 6,
		SKUs:    []string{"crusoe:h200-hgx-141gb", "crusoe:h100-hgx-80gb", "crusoe:a100-sxm-80gb"},
	},
}

// Source is the Crusoe pricing page source.
type Source = pageutil.PageSource

// New builds the source from its config; it takes no options (any key is an error).
func New(cfg scrapers.Config) (scrapers.Source, error) { return page.New(cfg) }

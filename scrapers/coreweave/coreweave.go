// Package coreweave collects CoreWeave's GPU instance prices from its public pricing
// page (https://www.coreweave.com/pricing, the "On-demand GPU instances" table).
// The long story (modes, rules, limits) is in its README.md.
package coreweave

import (
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Name is the registry name of this source.
const Name = "coreweave"

// DefaultEndpoint is the public pricing page.
const DefaultEndpoint = "https://www.coreweave.com/pricing"

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "coreweave",
		Method:          schemas.SourceScrape,
		Pricing:         []string{schemas.OnDemand, schemas.Spot},
		Credentials:     "",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description: "CoreWeave public pricing page: on-demand, spot and single-GPU inference price per instance-hour " +
			"of every GPU instance",
		Tier:         schemas.TierSpecialist,
		Interconnect: schemas.InterconnectInfiniband,
		Doc: scrapers.Doc{
			ProviderTitle: "CoreWeave",
			Method:        "pricing page (HTML)",
			OnDemand:      "✓",
			Spot:          "✓ where shown",
			Reserved:      "—",
			Credentials:   "none",
		},
	}, New)
}

// page describes the source. Its coverage guard: the table lists about ten GPU instances, each with an
// on-demand price, the flagship ones also with spot and inference prices.
var page = pageutil.Page{
	Name:            Name,
	DefaultEndpoint: DefaultEndpoint,
	ParseDoc:        parseDoc,
	ErrLayout:       ErrLayout,
	Expectation: scrapers.Expectation{
		MinRows: 10,
		SKUs:    []string{"coreweave:gb200-nvl72", "coreweave:b200", "coreweave:hgx-h100"},
	},
}

// Source is the CoreWeave pricing page source.
type Source = pageutil.PageSource

// New builds the source from its config; it takes no options (any key is an error).
func New(cfg scrapers.Config) (scrapers.Source, error) { return page.New(cfg) }

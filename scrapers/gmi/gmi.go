// Package gmi collects GMI Cloud's GPU prices from its public pricing page
// (https://www.gmicloud.ai/pricing, the GPU price cards).
// The long story (modes, rules, limits) is in its README.md.
package gmi

import (
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Name is the registry name of this source.
const Name = "gmi"

// DefaultEndpoint is the public pricing page.
const DefaultEndpoint = "https://www.gmicloud.ai/pricing"

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "gmi",
		Method:          schemas.SourceScrape,
		Pricing:         []string{schemas.OnDemand, schemas.Reserved1Y},
		Credentials:     "",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description:     "GMI Cloud public pricing page: \"from\" price per GPU-hour of every GPU card",
		Tier:            schemas.TierSpecialist,
		Interconnect:    schemas.InterconnectInfiniband,
		Naming:          naming,
		Doc: scrapers.Doc{
			ProviderTitle: "GMI Cloud",
			Method:        "pricing page (HTML)",
			OnDemand:      "✓ (\"from\" prices marked)",
			Spot:          "—",
			Reserved:      "where a term is stated",
			Credentials:   "none",
		},
	}, New)
}

// page describes the source. Its coverage guard: the page shows five GPU cards, H100 and H200 priced.
var page = pageutil.Page{
	Name:            Name,
	DefaultEndpoint: DefaultEndpoint,
	ParseDoc:        parseDoc,
	ErrLayout:       ErrLayout,
	Expectation: scrapers.Expectation{
		MinRows: 4,
		SKUs:    []string{"gmi:h100", "gmi:h200", "gmi:b200"},
	},
}

// Source is the GMI Cloud pricing page source.
type Source = pageutil.PageSource

// New builds the source from its config; it takes no options (any key is an error).
func New(cfg scrapers.Config) (scrapers.Source, error) { return page.New(cfg) }

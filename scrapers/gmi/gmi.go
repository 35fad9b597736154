// Package gmi collects GMI Cloud's GPU prices from its public pricing page
// (https://www.gmicloud.ai/pricing, the GPU price cards).
//
// The page is crawled with colly through the project's HTTP client (pageutil.Page:
// robots.txt, retries, body cap, charset, the raw archive) and parsed with goquery. Its markup is
// utility classes only (Tailwind), so cards are found by structure, not class: an h3
// (the GPU) whose parent also holds a price span followed by a unit span starting with
// "/" ("/GPU-hour"). Rules:
//   - GPU name: the h3, verbatim ("NVIDIA H100 GPU", "NVIDIA GB200"); SKU: "gmi:" +
//     the name's slug without "NVIDIA" and "GPU" ("gmi:h100", "gmi:gb200").
//   - Pricing kind: on_demand, unless the nearest h2 before the card names another
//     kind or a commitment term ("Reserved capacity: 1-year commitment" →
//     reserved_1y); a reserved heading without a term quarantines its cards.
//   - The unit span gives the unit ("/GPU-hour" → gpu_hour, gpu_count 1).
//   - "from $2.00" is kept as 2.00 with Attrs["price_qualifier"]="from"; a text without
//     an amount ("Pre order", "Contact sales") is a row with price 0 and
//     Attrs["price_text"]; "—" is no row; an unreadable amount is quarantined
//     (scrapers.Reject). The availability badge goes to Attrs["availability"].
//   - Region is ""; interconnect only where the card says InfiniBand.
//   - A page without cards is an error wrapping ErrLayout (the run fails).
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

// Package coreweave collects CoreWeave's GPU instance prices from its public pricing
// page (https://www.coreweave.com/pricing, the "On-demand GPU instances" table).
//
// The page is crawled with colly through the project's HTTP client (pageutil.Page:
// robots.txt, retries, body cap, charset, the raw archive) and parsed with goquery. The table is
// built of divs: div.table-v2 > .table-row-v2, one per GPU instance. Rules:
//   - GPU name: the row's h3[data-product] text, verbatim ("NVIDIA HGX H100",
//     "NVIDIA GB200 NVL72"); SKU: "coreweave:" + data-product without its "nvidia-"
//     prefix ("coreweave:gb200-nvl72", "coreweave:hgx-h100"), the slug of the name
//     when data-product is missing.
//   - Specs come from the row's labelled mobile column (GPU Count, VRAM, vCPUs, System
//     RAM, Local Storage), falling back to the desktop cells under the table headers.
//     A GPU count with a footnote marker ("4^1") is read as 4, the text and marker
//     kept in Attrs (gpu_count_text, footnote). VRAM is per GPU (GB).
//   - Prices are per instance-hour (unit hour, USD): span.instance-price → on_demand,
//     span.spot-price → spot, span.inference-price ("Inference Single GPU Price") →
//     on_demand of the single-GPU inference offering, SKU suffix "-inference-1gpu",
//     gpu_count 1, Attrs["offering"]="inference_single_gpu".
//   - An empty price next to a "Contact sales" link is a row with price 0 and
//     Attrs["price_text"]; "N/A" or an empty price without a link means not offered
//     (no row). A price that is there but unreadable is quarantined (scrapers.Reject);
//     a row without a name or a GPU count likewise.
//   - Region: the "REGION: …" eyebrow before the table ("NORTH AMERICA"), verbatim.
//   - Interconnect is set (infiniband) only when the row itself says InfiniBand.
//   - A page without rows is an error wrapping ErrLayout (the run fails).
//
// CoreWeave publishes reserved capacity only through sales; the page shows no reserved
// prices to record.
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
		Description:     "CoreWeave public pricing page: on-demand, spot and single-GPU inference price per instance-hour of every GPU instance",
		Tier:            schemas.TierSpecialist,
		Interconnect:    schemas.InterconnectInfiniband,
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

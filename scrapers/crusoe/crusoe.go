// Package crusoe collects Crusoe Cloud's GPU prices from its public pricing page
// (https://crusoe.ai/cloud/pricing, the GPU price cards).
//
// The page is crawled with colly through the project's HTTP client (pageutil.Page:
// robots.txt, retries, body cap, charset, the raw archive) and parsed with goquery. Each price table
// is a .pricing-table-heading row of column labels ("GPU model", "On-demand", "Current
// spot", and where Crusoe shows them reserved terms such as "1-year reserved") and one
// card (.pricing_gpu-item) per GPU whose .pricing-rich cells follow the labels in
// order. Rules:
//   - GPU name: the card's h4.pricing-item-heading, verbatim ("NVIDIA H100"); the
//     memory tag ("80GB") gives gpu_memory_gb; the other tags ("HGX", "SXM", "PCIe")
//     are the form factor, kept in Attrs["form_factor"]; a tag saying InfiniBand sets
//     the interconnect.
//   - SKU: "crusoe:" + model + form factor + memory ("crusoe:h100-hgx-80gb",
//     "crusoe:a100-pcie-80gb"): the page lists the same model in several form
//     factors, so all three are needed; a tag the name already says ("NVL72") is left
//     out. A SKU listed twice in one pricing kind is
//     quarantined rather than merged.
//   - The column label gives the pricing kind: on_demand, spot, reserved_1y,
//     reserved_3y or commitment_<n>m (pageutil.KindFromLabel). A label that names no
//     kind quarantines the card's cell.
//   - Prices are per GPU-hour ("$3.90/GPU-hr"): unit gpu_hour, gpu_count 1 (one GPU,
//     the unit priced; Crusoe sells 1, 2, 4 and 8-GPU VMs at that rate). "Contact
//     sales" is a row with price 0 and Attrs["price_text"]; "N/A" or a dash is no row.
//   - Region is "": the page shows one price for every region.
//   - A page without cards is an error wrapping ErrLayout (the run fails); unreadable
//     cards or cells are quarantined (scrapers.Reject) and the rest emitted.
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

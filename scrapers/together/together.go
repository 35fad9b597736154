// Package together collects Together AI's GPU prices from its public pricing page
// (https://www.together.ai/pricing: the "Dedicated Inference" and "GPU Clusters"
// tables).
//
// The page is crawled with colly through the project's HTTP client (pageutil.Page:
// robots.txt, retries, body cap, charset, the raw archive) and parsed with goquery. Every
// table.pricing_table is read with the section heading (h2) and sub-heading (p.h4,
// "On-demand", "Reserved") before it. Rules:
//   - The first cell is the hardware, verbatim ("NVIDIA HGX H100", "NVIDIA GB200
//     NVL72"); each other cell's price is the p[data-batch] text.
//   - SKU: "together:" + section slug + ":" + model slug
//     ("together:gpu-clusters:hgx-h100", "together:dedicated-inference:hgx-h100"): the
//     same GPU is sold at different prices in each section.
//   - Tables the page hides (inside class "hide", Webflow's display:none; the real page
//     keeps an older GPU Clusters "Hourly" table there) are not read.
//   - The header is laid out with its rowspan and colspan; a column's label joins the
//     captions stacked over it ("Reserved" over "7-30 days" → "Reserved 7-30 days"); a
//     cell spanning columns belongs to the first.
//   - Pricing kind from the column header ("On-demand", "Hourly" → on_demand; a term
//     such as "1 month", "6 months", "12 months" → commitment_<n>m / reserved_1y /
//     reserved_3y; a range of days the longest term it covers, "7-30 days" →
//     commitment_1m, "31-90 days" → commitment_3m, "91-180 days" → commitment_6m, an
//     open "181+ days" → commitment_7m), else from the sub-heading; a "Reserved" column
//     with no term takes it from the cell's link ("/monthly-reserved" →
//     commitment_1m). A price under a column with no kind or term is quarantined; a
//     note there is not recorded.
//   - The unit is what the table states, never assumed: its header ("All prices per
//     gpu per hour" in Dedicated Inference), else the paragraphs captioning it (the GPU
//     Clusters table is under "All prices are per GPU per hour."), its footnotes, or
//     its section's introduction. "per GPU per hour", "/GPU-hr", "GPU-hours" → unit
//     gpu_hour, gpu_count 1; "per node", "per instance", "per server" → hour. A price
//     in a table that states no unit is quarantined with the reason unless the price
//     text carries its own ("$2.50/GPU-hr").
//   - "Contact sales" is a row with price 0 and Attrs["price_text"]; "—" (not offered)
//     is no row; an unreadable price is quarantined (scrapers.Reject).
//   - Region is ""; interconnect is set only where the row says InfiniBand.
//   - A page without table rows is an error wrapping ErrLayout (the run fails).
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
		Description:     "Together AI public pricing page: dedicated inference and GPU cluster prices per GPU-hour, on-demand and reserved terms",
		Tier:            schemas.TierSpecialist,
		Interconnect:    schemas.InterconnectInfiniband,
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

// Package lambda collects Lambda's on-demand GPU instance prices from its public
// pricing page (https://lambda.ai/service/gpu-cloud, the "Instances pricing" table).
//
// The page is read as every single-page source reads its page (pageutil.Page) and
// parsed with goquery. Rules:
//   - Every tr[data-plan] of every tab panel is a row; the panel's tab ("8x", "4x",
//     "2x", "1x") is the GPU count, the plan ("NVIDIA H100 SXM") the GPU name, the
//     VRAM/GPU cell the memory.
//   - The price column is PRICE/GPU/HR: unit gpu_hour, pricing on_demand, USD.
//   - A row with no dollar amount ("Contact sales") is kept with price 0 and
//     Attrs["price_text"].
//   - SKU is gpu_<n>x_<model>_<vram>gb (e.g. gpu_8x_h100_sxm_80gb): Lambda's own
//     gpu_<n>x_<model> pattern, with the memory always added because the page lists
//     the same model in two memory sizes (A100 SXM 40 GB and 80 GB).
//   - Region is "": Lambda prices are the same in every region.
//   - A page without rows is an error wrapping ErrLayout.
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

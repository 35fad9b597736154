// Package lambda collects Lambda's on-demand GPU instance prices from its public
// pricing page (https://lambda.ai/service/gpu-cloud, the "Instances pricing" table).
//
// The page is fetched with the project's HTTP client as a page (GetPage: timeouts,
// retries, User-Agent, body cap, robots.txt, conditional requests) and parsed with
// goquery. Rules:
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
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
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
	}, New)
}

// Options: this source has none; any key is an error.
type Options struct{}

// Source is the Lambda pricing page source.
type Source struct {
	cfg scrapers.Config
}

// New builds the source from its config.
func New(cfg scrapers.Config) (scrapers.Source, error) {
	var o Options
	if err := cfg.DecodeOptions(&o); err != nil {
		return nil, err
	}
	if _, err := url.Parse(cfg.EndpointOr(DefaultEndpoint)); err != nil {
		return nil, fmt.Errorf("lambda: endpoint: %w", err)
	}
	return &Source{cfg: cfg}, nil
}

// Expect is the coverage guard: the table lists about twenty instance types, H100 SXM
// in every size.
func (s *Source) Expect() scrapers.Expectation {
	return scrapers.Expectation{
		MinRows: 12,
		SKUs:    []string{"gpu_8x_h100_sxm_80gb", "gpu_1x_h100_sxm_80gb"},
	}
}

// Collect fetches the page (honouring robots.txt) and emits its rows.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	u := s.cfg.EndpointOr(DefaultEndpoint)
	resp, err := s.cfg.Client.GetPage(ctx, u, http.Header{"Accept": {"text/html"}})
	if err != nil {
		return fmt.Errorf("lambda: %w", err)
	}
	rows, err := parsePage(bytes.NewReader(resp.Body), s.cfg.Now())
	if err != nil {
		return err
	}
	for _, o := range rows {
		o.SourceURL = u
		e.Emit(o)
	}
	s.cfg.Logger.With("source", s.cfg.Name).Debug("pricing page read", "rows", len(rows))
	return nil
}

// Package gmi collects GMI Cloud's GPU prices from its public pricing page
// (https://www.gmicloud.ai/pricing, the GPU price cards).
//
// The page is fetched with the project's HTTP client as a web page (robots.txt,
// conditional requests, User-Agent, retries) and parsed with goquery. Its markup is
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
	"bytes"
	"context"
	"fmt"
	"net/url"

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
	}, New)
}

// Options: this source has none; any key is an error.
type Options struct{}

// Source is the GMI Cloud pricing page source.
type Source struct {
	cfg scrapers.Config
}

// New builds the source from its config.
func New(cfg scrapers.Config) (scrapers.Source, error) {
	var o Options
	if err := cfg.DecodeOptions(&o); err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.EndpointOr(DefaultEndpoint))
	if err != nil {
		return nil, fmt.Errorf("gmi: endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("gmi: endpoint %q is not an http(s) URL", u.Redacted())
	}
	return &Source{cfg: cfg}, nil
}

// Expect is the coverage guard: the page shows five GPU cards, H100 and H200 priced.
func (s *Source) Expect() scrapers.Expectation {
	return scrapers.Expectation{
		MinRows: 4,
		SKUs:    []string{"gmi:h100", "gmi:h200", "gmi:b200"},
	}
}

// Collect fetches the page and emits its rows; unreadable cards are quarantined.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	u := s.cfg.EndpointOr(DefaultEndpoint)
	resp, err := s.cfg.Client.GetPage(ctx, u, nil)
	if err != nil {
		return fmt.Errorf("gmi: %w", err)
	}
	res, err := parsePage(bytes.NewReader(resp.Body), s.cfg.Now())
	if err != nil {
		return err
	}
	s.cfg.Logger.With("source", s.cfg.Name).Debug("pricing page read",
		"rows", len(res.Rows), "rejected", len(res.Rejects), "not_modified", resp.NotModified)
	if err := pageutil.Emit(e, res, u); err != nil {
		return fmt.Errorf("gmi: %w", err)
	}
	return nil
}

// Package crusoe collects Crusoe Cloud's GPU prices from its public pricing page
// (https://crusoe.ai/cloud/pricing, the GPU price cards) and, with API keys, the
// capacity of every instance type in every location from the Crusoe Cloud API
// (GET /v1alpha5/capacities, signed requests) as stock signals.
// The long story (modes, rules, limits) is in its README.md.
package crusoe

import (
	"context"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Name is the registry name of this source.
const Name = "crusoe"

// DefaultEndpoint is the public pricing page.
const DefaultEndpoint = "https://crusoe.ai/cloud/pricing"

// The environment variables holding the optional Crusoe Cloud API key pair: with
// both set, the source also reads the capacities (CapacityURL).
const (
	// EnvAccessKeyID holds the API access key ID (sent in the Authorization header).
	EnvAccessKeyID = "CRUSOE_ACCESS_KEY_ID"
	// EnvSecretKey holds the API secret key (raw URL-safe base64; it keys the
	// request signature and is never sent).
	EnvSecretKey = "CRUSOE_SECRET_KEY"
)

// CapacityURL is the Crusoe Cloud API's list of available capacity: per instance
// type and location, the quantity that can be created now
// (https://docs.crusoecloud.com/api, Capacities).
const CapacityURL = "https://api.crusoecloud.com/v1alpha5/capacities"

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
		Credentials:     EnvAccessKeyID + ", " + EnvSecretKey + " (optional; with them the capacities are read from the API)",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description: "Crusoe Cloud public pricing page: on-demand, spot and reserved price per GPU-hour of " +
			"every GPU card",
		Tier:          schemas.TierSpecialist,
		Interconnect:  schemas.InterconnectInfiniband,
		SecretEnv:     []string{EnvAccessKeyID, EnvSecretKey},
		SampleOptions: "# capacity_endpoint: " + CapacityURL + "   # the capacity API (with the key pair)\n",
		Doc: scrapers.Doc{
			ProviderTitle: "Crusoe",
			Method:        "pricing page (HTML)",
			OnDemand:      "✓",
			Spot:          "✓",
			Reserved:      "6 months, 1y, 3y",
			Credentials:   "none; `CRUSOE_ACCESS_KEY_ID`, `CRUSOE_SECRET_KEY` (optional: capacity)",
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

// Source is the Crusoe source: the pricing page and, with a key pair, the
// capacities.
type Source struct {
	page        scrapers.Source // the pricing page (pageutil.Page)
	cfg         scrapers.Config
	keyID       string
	secret      string
	capacityURL string
}

// New builds the source from its config. Its one option, capacity_endpoint, is the
// capacity API's URL (default CapacityURL; https, or a loopback test server).
// The key pair is read from cfg.Secret(EnvAccessKeyID) and cfg.Secret(EnvSecretKey).
func New(cfg scrapers.Config) (scrapers.Source, error) {
	p, capacityURL, err := page.NewWithCapacity(cfg, CapacityURL)
	if err != nil {
		return nil, err
	}
	return &Source{page: p, cfg: cfg, keyID: cfg.Secret(EnvAccessKeyID), secret: cfg.Secret(EnvSecretKey),
		capacityURL: capacityURL}, nil
}

// String describes the source without its keys.
func (s *Source) String() string {
	if s.keyID == "" && s.secret == "" {
		return "crusoe(pricing page)"
	}
	return "crusoe(pricing page, capacities with the keys from " + EnvAccessKeyID + " and " + EnvSecretKey + ")"
}

// Expect is the pricing page's coverage guard (the capacities add no rows).
func (s *Source) Expect() scrapers.Expectation { return page.Expect() }

// Collect reads the pricing page and emits its rows; then, when a key is set and e
// takes signals, the capacities as stock signals. A failed or refused capacity call
// is logged as a warning and costs no price: the page's result is the run's.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	var rows []schemas.Observation
	err := s.page.Collect(ctx, pageutil.Tee(e, &rows))
	if len(rows) > 0 && (s.keyID != "" || s.secret != "") {
		if _, ok := e.(scrapers.SignalEmitter); ok {
			s.collectCapacity(ctx, e, rows)
		}
	}
	return err
}

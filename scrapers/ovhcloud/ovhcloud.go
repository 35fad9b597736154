// Package ovhcloud collects OVHcloud Public Cloud GPU instance prices from the public
// order catalog API (https://api.ovh.com/1.0/order/catalog/public/cloud, no
// credentials), in the currency of the subsidiary asked for (EUR for FR, the default).
// The long story (modes, rules, limits) is in its README.md.
package ovhcloud

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"regexp"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Name is the registry name of this source.
const Name = "ovhcloud"

// DefaultEndpoint is the public cloud order catalog of the EU API.
const DefaultEndpoint = "https://api.ovh.com/1.0/order/catalog/public/cloud"

// DefaultSubsidiary is the subsidiary whose catalog is read: FR, priced in EUR.
const DefaultSubsidiary = "FR"

// sampleOptions documents sources.ovhcloud.options in the sample configuration.
//
//go:embed sample.yaml
var sampleOptions string

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "ovhcloud",
		Method:          schemas.SourceAPI,
		Pricing:         []string{schemas.OnDemand, schemas.CommitmentPricing(1), schemas.CommitmentPricing(12)},
		Credentials:     "",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description: "OVHcloud public order catalog: Public Cloud GPU flavours, hourly (on-demand) and monthly " +
			"postpaid, in the subsidiary's currency (EUR)",
		Tier:          schemas.TierSpecialist,
		Interconnect:  schemas.InterconnectEthernet,
		Naming:        naming,
		SampleOptions: sampleOptions,
		Doc: scrapers.Doc{
			ProviderTitle: "OVHcloud",
			Method:        "public order catalog API (EUR, converted)",
			OnDemand:      "✓ hourly",
			Spot:          "—",
			Reserved:      "monthly, savings plans",
			Credentials:   "none",
		},
	}, New)
}

// Options are the source's settings (sources.ovhcloud.options).
type Options struct {
	// Subsidiary is the ovhSubsidiary asked for (FR, DE, GB, WE, CA, US, …); the
	// catalog's prices are in its currency. Empty means FR. The US catalog is served
	// by another host (api.us.ovhcloud.com): set the endpoint with it.
	Subsidiary string `json:"subsidiary"`
}

var subsidiaryRE = regexp.MustCompile(`^[A-Z]{2,4}$`)

// Validate checks the options without network I/O.
func (o Options) Validate() error {
	if o.Subsidiary != "" && !subsidiaryRE.MatchString(o.Subsidiary) {
		return fmt.Errorf(
			"ovhcloud: options: subsidiary %q is not an OVH subsidiary code (2-4 upper-case letters)",
			o.Subsidiary,
		)
	}
	return nil
}

// Source is the OVHcloud catalog source.
type Source struct {
	cfg        scrapers.Config
	subsidiary string
}

// New builds the source from its config.
func New(cfg scrapers.Config) (scrapers.Source, error) {
	var o Options
	if err := cfg.DecodeOptions(&o); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if u, err := url.Parse(cfg.EndpointOr(DefaultEndpoint)); err != nil || u.Host == "" {
		return nil, fmt.Errorf("ovhcloud: endpoint %q is not an absolute URL", cfg.EndpointOr(DefaultEndpoint))
	}
	s := &Source{cfg: cfg, subsidiary: o.Subsidiary}
	if s.subsidiary == "" {
		s.subsidiary = DefaultSubsidiary
	}
	return s, nil
}

// Expect is the coverage guard: the FR catalog sells H100, L40S and L4 flavours by
// the hour, about twenty GPU flavours in all; other subsidiaries sell fewer.
func (s *Source) Expect() scrapers.Expectation {
	if s.subsidiary != DefaultSubsidiary {
		return scrapers.Expectation{MinRows: 4}
	}
	return scrapers.Expectation{MinRows: 15, SKUs: []string{"h100-380", "l40s-90", "l4-90"}}
}

// catalogURL is the endpoint with ovhSubsidiary set.
func (s *Source) catalogURL() (string, error) {
	u, err := url.Parse(s.cfg.EndpointOr(DefaultEndpoint))
	if err != nil {
		return "", fmt.Errorf("ovhcloud: endpoint: %w", err)
	}
	q := u.Query()
	q.Set("ovhSubsidiary", s.subsidiary)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Collect reads the catalog and emits every GPU row.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	u, err := s.catalogURL()
	if err != nil {
		return err
	}
	resp, err := s.cfg.Client.Get(ctx, u, nil)
	if err != nil {
		return fmt.Errorf("ovhcloud: %w", err)
	}
	res, err := parseCatalog(bytes.NewReader(resp.Body), s.subsidiary, s.cfg.Now())
	if err != nil {
		return err
	}
	for _, o := range res.Rows {
		o.SourceURL = u
		e.Emit(o)
	}
	for _, r := range res.Rejects {
		scrapers.Reject(e, r.Raw, r.Reason)
	}
	s.cfg.Logger.With("source", s.cfg.Name).
		Debug("catalog read", "subsidiary", s.subsidiary, "records", res.Records, "rows", len(res.Rows), "rejected",
			len(res.Rejects), "skipped", res.Skipped)
	return nil
}

// Package azure collects Azure GPU virtual machine prices from the public Retail Prices
// API (https://prices.azure.com/api/retail/prices, no credentials): on-demand, spot,
// low-priority, reservation and savings-plan meters of every NC, ND, NG and NV size,
// Linux only. With the credentials of a Microsoft Entra application
// (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET) it also reads the spot
// eviction rates of the sizes it priced from Azure Resource Graph, as interruption
// signals.
// The long story (modes, rules, limits) is in its README.md.
package azure

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Name is the registry name of this source.
const Name = "azure"

// DefaultEndpoint is the Retail Prices API.
const DefaultEndpoint = "https://prices.azure.com/api/retail/prices"

// APIVersion is the API version requested (it adds savingsPlan to the items).
const APIVersion = "2023-01-01-preview"

// gpuFilter selects every GPU VM meter: the N-series families NC, ND, NG and NV
// (NCC, the confidential NC sizes, start with Standard_NC too).
const gpuFilter = "serviceName eq 'Virtual Machines' and (contains(armSkuName,'Standard_NC') or " +
	"contains(armSkuName,'Standard_ND') or contains(armSkuName,'Standard_NG') or " +
	"contains(armSkuName,'Standard_NV'))"

// maxPages bounds a run against a NextPageLink that never ends.
const maxPages = 2000

// sampleOptions documents sources.azure.options in the sample configuration.
//
//go:embed sample.yaml
var sampleOptions string

func init() {
	scrapers.Register(scrapers.Info{
		Name:     Name,
		Provider: "azure",
		Method:   schemas.SourceAPI,
		Pricing: []string{
			schemas.OnDemand,
			schemas.Spot,
			schemas.LowPriority,
			schemas.Reserved1Y,
			schemas.Reserved3Y,
			schemas.CommitmentPricing(12),
			schemas.CommitmentPricing(36),
		},
		Credentials: EnvTenantID + ", " + EnvClientID + ", " + EnvClientSecret +
			" (optional; with them the spot eviction rates are read from Resource Graph)",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description: "Azure Retail Prices API: NC/ND/NG/NV Linux VMs, on-demand, spot, low priority, reservations, " +
			"savings plans",
		Tier:          schemas.TierHyperscaler,
		Interconnect:  schemas.InterconnectInfiniband,
		Naming:        naming,
		SecretEnv:     []string{EnvTenantID, EnvClientID, EnvClientSecret},
		SampleOptions: sampleOptions,
		Doc: scrapers.Doc{
			ProviderTitle: "Azure",
			Method:        "Retail Prices API (JSON, paged)",
			OnDemand:      "✓",
			Spot:          "✓ spot and low-priority (own series)",
			Reserved:      "1y, 3y reservations; 1y/3y savings plans",
			Credentials:   "none; `AZURE_TENANT_ID`, `AZURE_CLIENT_ID`, `AZURE_CLIENT_SECRET` (optional: spot eviction rates)",
		},
	}, New)
}

// Options are the source's settings (sources.azure.options).
type Options struct {
	// Regions limits the query to these armRegionName values; empty means all.
	Regions []string `json:"regions"`
	// Currency asks for prices in this ISO 4217 code; empty means the API's USD.
	Currency string `json:"currency"`
	// LoginEndpoint is the Microsoft identity platform host asked for the token of
	// the eviction rates; empty means DefaultLoginEndpoint (another cloud, a test).
	LoginEndpoint string `json:"login_endpoint"`
	// ManagementEndpoint is the Azure Resource Manager host whose Resource Graph is
	// queried (and whose "/.default" is the token's scope); empty means
	// DefaultManagementEndpoint.
	ManagementEndpoint string `json:"management_endpoint"`
}

var (
	regionRE   = regexp.MustCompile(`^[a-z0-9]+$`)
	currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
)

// Validate checks the options without network I/O.
func (o Options) Validate() error {
	for _, r := range o.Regions {
		if !regionRE.MatchString(r) {
			return fmt.Errorf("azure: options: region %q is not an armRegionName (lowercase letters and digits)", r)
		}
	}
	if o.Currency != "" && !currencyRE.MatchString(o.Currency) {
		return fmt.Errorf("azure: options: currency %q is not an upper-case ISO 4217 code", o.Currency)
	}
	if err := scrapers.SecretEndpoint(Name, "login_endpoint", o.LoginEndpoint); err != nil {
		return err
	}
	return scrapers.SecretEndpoint(Name, "management_endpoint", o.ManagementEndpoint)
}

// Source is the Azure retail prices source.
type Source struct {
	cfg   scrapers.Config
	opts  Options
	creds credentials // never printed
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
	if _, err := url.Parse(cfg.EndpointOr(DefaultEndpoint)); err != nil {
		return nil, fmt.Errorf("azure: endpoint: %w", err)
	}
	creds := credentials{
		tenant: strings.TrimSpace(cfg.Secret(EnvTenantID)),
		client: strings.TrimSpace(cfg.Secret(EnvClientID)),
		secret: strings.TrimSpace(cfg.Secret(EnvClientSecret)),
	}
	return &Source{cfg: cfg, opts: o, creds: creds}, nil
}

// Expect is the coverage guard: every region of the public cloud prices dozens of GPU
// sizes, so a full run yields thousands of rows and always the flagship sizes.
func (s *Source) Expect() scrapers.Expectation {
	if len(s.opts.Regions) > 0 {
		return scrapers.Expectation{MinRows: len(s.opts.Regions)}
	}
	return scrapers.Expectation{
		MinRows: 500,
		SKUs: []string{
			"Standard_ND96isr_H100_v5",
			"Standard_NC24ads_A100_v4",
			"Standard_NC40ads_H100_v5",
			"Standard_ND96asr_v4",
		},
	}
}

// firstURL is the first page's URL: the endpoint with api-version, the filter and,
// when set, the currency.
func (s *Source) firstURL() string {
	filter := gpuFilter
	if len(s.opts.Regions) > 0 {
		var rs []string
		for _, r := range s.opts.Regions {
			rs = append(rs, "armRegionName eq '"+r+"'")
		}
		filter += " and (" + strings.Join(rs, " or ") + ")"
	}
	q := "api-version=" + APIVersion
	if s.opts.Currency != "" {
		q += "&currencyCode=" + escape("'"+s.opts.Currency+"'")
	}
	q += "&$filter=" + escape(filter)
	ep := s.cfg.EndpointOr(DefaultEndpoint)
	sep := "?"
	if strings.Contains(ep, "?") {
		sep = "&"
	}
	return ep + sep + q
}

// escape percent-encodes a query value the way the API's own links do (%20 for space).
func escape(v string) string {
	return strings.ReplaceAll(url.QueryEscape(v), "+", "%20")
}

// String describes the source without its credentials.
func (s *Source) String() string {
	c := "unset"
	if s.creds.set() {
		c = "set"
	}
	return fmt.Sprintf("azure{regions=%v currency=%q eviction_credentials=%s}", s.opts.Regions, s.opts.Currency, c)
}

// Collect reads every page, following NextPageLink until it is null. The link is
// absolute; its scheme and host are replaced by the endpoint's, so a mirror (or a
// recording) keeps serving the whole run. Once every page is read, and when the
// source has credentials, it reads the eviction rates of the sizes priced
// (collectEvictions), which never fails the run.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	log := s.cfg.Logger.With("source", s.cfg.Name)
	base, err := url.Parse(s.cfg.EndpointOr(DefaultEndpoint))
	if err != nil {
		return fmt.Errorf("azure: endpoint: %w", err)
	}
	next := s.firstURL()
	seen := map[string]bool{}
	sizes := newPriced()
	for n := 1; next != ""; n++ {
		if n > maxPages {
			return fmt.Errorf("azure: more than %d pages, stopping at %s", maxPages, next)
		}
		if seen[next] {
			return fmt.Errorf("azure: NextPageLink repeats %s", next)
		}
		seen[next] = true
		resp, err := s.cfg.Client.Get(ctx, next, nil)
		if err != nil {
			return fmt.Errorf("azure: page %d: %w", n, err)
		}
		p, err := parsePage(bytes.NewReader(resp.Body), s.cfg.Now())
		if err != nil {
			return fmt.Errorf("azure: page %d (%s): %w", n, next, err)
		}
		for _, o := range p.Rows {
			sizes.add(o)
		}
		if err := scrapers.EmitResult(e, p.Result, next); err != nil {
			return fmt.Errorf("azure: page %d: %w", n, err)
		}
		log.Debug("page read", "page", n, "items", p.Items, "rows", len(p.Rows), "skipped", p.Skipped)
		if p.Next == "" {
			s.collectEvictions(ctx, e, sizes)
			return nil
		}
		next, err = rehost(p.Next, base)
		if err != nil {
			return fmt.Errorf("azure: page %d: NextPageLink: %w", n, err)
		}
	}
	return nil
}

// rehost replaces link's scheme and host with base's.
func rehost(link string, base *url.URL) (string, error) {
	u, err := url.Parse(link)
	if err != nil {
		return "", err
	}
	u.Scheme = base.Scheme
	u.Host = base.Host
	return u.String(), nil
}

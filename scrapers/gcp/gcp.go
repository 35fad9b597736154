// Package gcp collects Google Cloud GPU prices. With an API key (GPUPRICE_GCP_API_KEY)
// it reads the Cloud Billing Catalog API, the SKUs of the Compute Engine service
// (https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus, pageSize 5000,
// nextPageToken paging); without one it reads the public GPU pricing page
// (https://cloud.google.com/compute/gpus-pricing).
// The long story (modes, rules, limits) is in its README.md.
package gcp

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"

	"github.com/gpuprice/gpuprice/schemas"
)

// Name is the registry name of this source.
const Name = "gcp"

// ComputeServiceID is the Cloud Billing Catalog id of the Compute Engine service.
const ComputeServiceID = "6F81-5844-456A"

// DefaultEndpoint is the Compute Engine SKU list of the Cloud Billing Catalog API.
const DefaultEndpoint = "https://cloudbilling.googleapis.com/v1/services/" + ComputeServiceID + "/skus"

// DefaultPricingPage is the public GPU pricing page read when there is no API key.
const DefaultPricingPage = "https://cloud.google.com/compute/gpus-pricing"

// EnvAPIKey names the environment variable holding the API key.
const EnvAPIKey = "GPUPRICE_GCP_API_KEY"

// MaxPageSize is the largest pageSize the API accepts.
const MaxPageSize = 5000

// maxPages bounds a run against a nextPageToken that never ends.
const maxPages = 500

// Modes.
const (
	ModeAuto = ""     // the API when the key is set, else the page
	ModeAPI  = "api"  // the API; the key must be set
	ModePage = "page" // the public pricing page
)

// sampleOptions documents sources.gcp.options in the sample configuration.
//
//go:embed sample.yaml
var sampleOptions string

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "gcp",
		Method:          schemas.SourceAPI,
		Pricing:         []string{schemas.OnDemand, schemas.Spot, schemas.Reserved1Y, schemas.Reserved3Y},
		Credentials:     EnvAPIKey + " (optional; without it the public GPU pricing page is read)",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description:     "Google Cloud Billing Catalog API (or the public GPU pricing page): GPUs per GPU-hour and A2/A3/A4/G2 machine types, on-demand, spot, 1y/3y commitments",
		Tier:            schemas.TierHyperscaler,
		Interconnect:    schemas.InterconnectRoCE,
		Naming:          naming,
		SecretEnv:       []string{EnvAPIKey},
		SampleOptions:   sampleOptions,
		Doc: scrapers.Doc{
			ProviderTitle: "Google Cloud",
			Method:        "Cloud Billing Catalog API; without a key the public GPU pricing page",
			OnDemand:      "✓",
			Spot:          "✓ (Spot/preemptible)",
			Reserved:      "1y, 3y commitments",
			Credentials:   "`GPUPRICE_GCP_API_KEY` (optional)",
		},
	}, New)
}

// Options are the source's settings (sources.gcp.options).
type Options struct {
	// Mode is "" (API when GPUPRICE_GCP_API_KEY is set, else the page), "api" or "page".
	Mode string `json:"mode"`
	// Currency asks the API for prices in this ISO 4217 code; default USD.
	Currency string `json:"currency"`
	// PageSize is the API's pageSize, 1…5000; default 5000.
	PageSize int `json:"page_size"`
	// PricingPage is the URL of the public GPU pricing page; default DefaultPricingPage.
	PricingPage string `json:"pricing_page"`
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// Validate checks the options without network I/O.
func (o Options) Validate() error {
	switch o.Mode {
	case ModeAuto, ModeAPI, ModePage:
	default:
		return fmt.Errorf("gcp: options: mode %q is not \"\", \"api\" or \"page\"", o.Mode)
	}
	if o.Currency != "" && !currencyRE.MatchString(o.Currency) {
		return fmt.Errorf("gcp: options: currency %q is not an upper-case ISO 4217 code", o.Currency)
	}
	if o.PageSize < 0 || o.PageSize > MaxPageSize {
		return fmt.Errorf("gcp: options: page_size %d is not within 1…%d", o.PageSize, MaxPageSize)
	}
	if o.PricingPage != "" {
		if u, err := url.Parse(o.PricingPage); err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("gcp: options: pricing_page %q is not an absolute URL", o.PricingPage)
		}
	}
	return nil
}

// Source is the Google Cloud GPU price source.
type Source struct {
	cfg  scrapers.Config
	opts Options
	key  string // never printed
	mode string // ModeAPI or ModePage
}

// New builds the source from its config, reading the API key from the environment.
func New(cfg scrapers.Config) (scrapers.Source, error) {
	return newSource(cfg, cfg.Secret(EnvAPIKey))
}

func newSource(cfg scrapers.Config, key string) (*Source, error) {
	var o Options
	if err := cfg.DecodeOptions(&o); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Currency == "" {
		o.Currency = "USD"
	}
	if o.PageSize == 0 {
		o.PageSize = MaxPageSize
	}
	if o.PricingPage == "" {
		o.PricingPage = DefaultPricingPage
	}
	u, err := url.Parse(cfg.EndpointOr(DefaultEndpoint))
	if err != nil {
		return nil, fmt.Errorf("gcp: endpoint: %w", err)
	}
	if u.Query().Has("key") {
		return nil, fmt.Errorf("gcp: endpoint: must not carry a key parameter; set %s instead", EnvAPIKey)
	}
	mode := o.Mode
	key = strings.TrimSpace(key)
	switch {
	case mode == ModeAPI && key == "":
		return nil, fmt.Errorf("gcp: mode api needs %s to be set", EnvAPIKey)
	case mode == ModeAuto && key != "":
		mode = ModeAPI
	case mode == ModeAuto:
		mode = ModePage
	}
	return &Source{cfg: cfg, opts: o, key: key, mode: mode}, nil
}

// String describes the source without its key.
func (s *Source) String() string {
	k := "unset"
	if s.key != "" {
		k = "set"
	}
	return fmt.Sprintf("gcp{mode=%s currency=%s key=%s}", s.mode, s.opts.Currency, k)
}

// Expect is the coverage guard. The catalog prices every GPU in dozens of regions
// under four usage types, so a healthy API run yields many hundreds of rows,
// always with the H100, L4 and T4 and the A3, A2 and G2 machine types. The pricing
// page lists each GPU in its regions.
func (s *Source) Expect() scrapers.Expectation {
	if s.mode == ModePage {
		return scrapers.Expectation{
			MinRows: 40,
			SKUs:    []string{"nvidia-h100-80gb", "nvidia-l4", "nvidia-tesla-t4"},
		}
	}
	return scrapers.Expectation{
		MinRows: 500,
		SKUs: []string{"nvidia-h100-80gb", "nvidia-l4", "nvidia-tesla-t4", "nvidia-tesla-a100",
			"a3-highgpu-8g", "a2-highgpu-1g", "g2-standard-4"},
	}
}

// Collect reads the catalog API when the source has a key, else the pricing page.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	if s.mode == ModePage {
		return s.collectPage(ctx, e)
	}
	return s.collectAPI(ctx, e)
}

// pageURL is the URL of one page of the SKU list (never with the key).
func (s *Source) pageURL(token string) string {
	ep := s.cfg.EndpointOr(DefaultEndpoint)
	q := url.Values{}
	q.Set("currencyCode", s.opts.Currency)
	q.Set("pageSize", strconv.Itoa(s.opts.PageSize))
	if token != "" {
		q.Set("pageToken", token)
	}
	sep := "?"
	if strings.Contains(ep, "?") {
		sep = "&"
	}
	return ep + sep + q.Encode()
}

// collectAPI reads every page, following nextPageToken until it is empty, emitting each
// page's GPU rows as it goes and the machine-type rows after the last page.
func (s *Source) collectAPI(ctx context.Context, e scrapers.Emitter) error {
	log := s.cfg.Logger.With("source", s.cfg.Name)
	hdr := http.Header{"X-Goog-Api-Key": {s.key}, "Accept": {"application/json"}}
	var comps []component
	token := ""
	seen := map[string]bool{}
	skipped := map[string]int{}
	for n := 1; ; n++ {
		if n > maxPages {
			return fmt.Errorf("gcp: more than %d pages, stopping", maxPages)
		}
		u := s.pageURL(token)
		resp, err := s.cfg.Client.Get(ctx, u, hdr)
		if err != nil {
			return fmt.Errorf("gcp: page %d: %w", n, err)
		}
		p, err := parseSkus(bytes.NewReader(resp.Body), s.cfg.Now())
		if err != nil {
			return fmt.Errorf("gcp: page %d (%s): %w", n, u, err)
		}
		for _, rj := range p.Rejects {
			if !scrapers.Reject(e, rj.Raw, rj.Reason) {
				log.Warn("sku unreadable", "page", n, "reason", rj.Reason)
			}
		}
		for _, o := range p.Rows {
			o.SourceURL = u
			e.Emit(o)
		}
		for k, v := range p.Skipped {
			skipped[k] += v
		}
		comps = append(comps, p.Components...)
		log.Debug(
			"page read",
			"page",
			n,
			"skus",
			p.SKUs,
			"rows",
			len(p.Rows),
			"components",
			len(p.Components),
			"rejected",
			len(p.Rejects),
		)
		if p.Next == "" {
			break
		}
		if seen[p.Next] {
			return fmt.Errorf("gcp: page %d: nextPageToken repeats", n)
		}
		seen[p.Next] = true
		token = p.Next
	}
	rows, incomplete := deriveMachines(comps, s.cfg.Now())
	first := s.pageURL("")
	for _, o := range rows {
		o.SourceURL = first
		e.Emit(o)
	}
	log.Debug("catalog read", "machine_rows", len(rows), "machine_incomplete", incomplete,
		"skipped_dws", skipped[skipDWS], "skipped_reserved", skipped[skipReserved])
	return nil
}

// collectPage reads the public GPU pricing page.
func (s *Source) collectPage(ctx context.Context, e scrapers.Emitter) error {
	u := s.opts.PricingPage
	f, err := pageutil.Crawl(ctx, s.cfg, u)
	if err != nil {
		return fmt.Errorf("gcp: pricing page: %w", err)
	}
	res, err := parsePricingPage(bytes.NewReader(f.Body), s.cfg.Now())
	if err != nil {
		return err
	}
	s.cfg.Logger.With("source", s.cfg.Name).
		Debug("pricing page read", "rows", len(res.Rows), "not_offered", res.Skipped[skipNotOffered])
	if err := scrapers.EmitResult(e, res, u); err != nil {
		return fmt.Errorf("gcp: pricing page: %w", err)
	}
	return nil
}

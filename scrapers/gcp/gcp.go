// Package gcp collects Google Cloud GPU prices. With an API key (GPUPRICE_GCP_API_KEY)
// it reads the Cloud Billing Catalog API, the SKUs of the Compute Engine service
// (https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus, pageSize 5000,
// nextPageToken paging); without one it reads the public GPU pricing page
// (https://cloud.google.com/compute/gpus-pricing). With an OAuth 2.0 access token
// (GPUPRICE_GCP_ACCESS_TOKEN) and a project (options.project) it also reads the Spot
// preemption history of the A2/A3/A4/G2 machine types it priced (advice.capacityHistory),
// as preemption signals.
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

// credentials is Info.Credentials: both variables are optional.
const credentials = EnvAPIKey + " (optional; without it the public GPU pricing page is read); " +
	EnvAccessToken + " (optional, with options.project: an OAuth 2.0 access token, e.g. " +
	"`gcloud auth print-access-token`, to also read the Spot preemption history of the A2/A3/A4/G2 " +
	"machine types priced; tokens last about an hour, so give a fresh one per run)"

// docCredentials is the Credentials cell of the README source table.
const docCredentials = "`GPUPRICE_GCP_API_KEY` (optional); `GPUPRICE_GCP_ACCESS_TOKEN` with the `project` " +
	"option (optional: Spot preemption history; `gcloud auth print-access-token`, tokens last about an " +
	"hour, so give a fresh one per run)"

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "gcp",
		Method:          schemas.SourceAPI,
		Pricing:         []string{schemas.OnDemand, schemas.Spot, schemas.Reserved1Y, schemas.Reserved3Y},
		Credentials:     credentials,
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description: "Google Cloud Billing Catalog API (or the public GPU pricing page): GPUs per GPU-hour and " +
			"A2/A3/A4/G2 machine types, on-demand, spot, 1y/3y commitments; with an access token, the machine types' Spot " +
			"preemption history",
		Tier:          schemas.TierHyperscaler,
		Interconnect:  schemas.InterconnectRoCE,
		Naming:        naming,
		SecretEnv:     []string{EnvAPIKey, EnvAccessToken},
		SampleOptions: sampleOptions,
		Doc: scrapers.Doc{
			ProviderTitle: "Google Cloud",
			Method:        "Cloud Billing Catalog API; without a key the public GPU pricing page",
			OnDemand:      "✓",
			Spot:          "✓ (Spot/preemptible)",
			Reserved:      "1y, 3y commitments",
			Credentials:   docCredentials,
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
	// Project is the ID of the Google Cloud project the Spot capacity history is
	// asked in (its path names it; the access token must be allowed to read Compute
	// Engine there). With GPUPRICE_GCP_ACCESS_TOKEN it turns the capacity history on;
	// "" leaves it off.
	Project string `json:"project"`
	// CapacityRequests bounds the capacity history requests of a run (one per machine
	// type and zone, or region), 1…MaxCapacityRequests; 0 means
	// DefaultCapacityRequests. The targets past it are named in a warning.
	CapacityRequests int `json:"capacity_requests"`
	// ComputeEndpoint is the Compute Engine API root the capacity history is asked
	// of; "" means DefaultComputeEndpoint. https, or http on the loopback (a test).
	ComputeEndpoint string `json:"compute_endpoint"`
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
	if o.Project != "" && !projectRE.MatchString(o.Project) {
		return fmt.Errorf("gcp: options: project %q is not a Google Cloud project ID", o.Project)
	}
	if o.CapacityRequests < 0 || o.CapacityRequests > MaxCapacityRequests {
		return fmt.Errorf("gcp: options: capacity_requests %d is not within 1…%d", o.CapacityRequests, MaxCapacityRequests)
	}
	return validEndpoint("compute_endpoint", o.ComputeEndpoint)
}

// Source is the Google Cloud GPU price source.
type Source struct {
	cfg   scrapers.Config
	opts  Options
	key   string // never printed
	token string // the capacity history's access token; never printed
	mode  string // ModeAPI or ModePage
}

// New builds the source from its config, reading the API key (and the access token)
// from the environment.
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
	if o.CapacityRequests == 0 {
		o.CapacityRequests = DefaultCapacityRequests
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
	token := strings.TrimSpace(cfg.Secret(EnvAccessToken))
	return &Source{cfg: cfg, opts: o, key: key, token: token, mode: mode}, nil
}

// String describes the source without its key or token.
func (s *Source) String() string {
	set := func(v string) string {
		if v != "" {
			return "set"
		}
		return "unset"
	}
	return fmt.Sprintf("gcp{mode=%s currency=%s key=%s access_token=%s project=%q}",
		s.mode, s.opts.Currency, set(s.key), set(s.token), s.opts.Project)
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
// Once every price is read, and when the source has an access token and a project,
// it reads the Spot preemption history of the machine types priced
// (collectPreemption), which never fails the run.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	p := newPricedMachines()
	var err error
	if s.mode == ModePage {
		err = s.collectPage(ctx, e, p)
	} else {
		err = s.collectAPI(ctx, e, p)
	}
	if err != nil {
		return err
	}
	s.collectPreemption(ctx, e, p)
	return nil
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
// page's GPU rows as it goes and the machine-type rows after the last page, each
// noted in p.
func (s *Source) collectAPI(ctx context.Context, e scrapers.Emitter, p *pricedMachines) error {
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
		pg, err := parseSkus(bytes.NewReader(resp.Body), s.cfg.Now())
		if err != nil {
			return fmt.Errorf("gcp: page %d (%s): %w", n, u, err)
		}
		for _, rj := range pg.Rejects {
			if !scrapers.Reject(e, rj.Raw, rj.Reason) {
				log.Warn("sku unreadable", "page", n, "reason", rj.Reason)
			}
		}
		for _, o := range pg.Rows {
			o.SourceURL = u
			p.add(o)
			e.Emit(o)
		}
		for k, v := range pg.Skipped {
			skipped[k] += v
		}
		comps = append(comps, pg.Components...)
		log.Debug(
			"page read",
			"page",
			n,
			"skus",
			pg.SKUs,
			"rows",
			len(pg.Rows),
			"components",
			len(pg.Components),
			"rejected",
			len(pg.Rejects),
		)
		if pg.Next == "" {
			break
		}
		if seen[pg.Next] {
			return fmt.Errorf("gcp: page %d: nextPageToken repeats", n)
		}
		seen[pg.Next] = true
		token = pg.Next
	}
	rows, incomplete := deriveMachines(comps, s.cfg.Now())
	first := s.pageURL("")
	for _, o := range rows {
		o.SourceURL = first
		p.add(o)
		e.Emit(o)
	}
	log.Debug("catalog read", "machine_rows", len(rows), "machine_incomplete", incomplete,
		"skipped_dws", skipped[skipDWS], "skipped_reserved", skipped[skipReserved])
	return nil
}

// collectPage reads the public GPU pricing page, noting its rows in p (they price
// GPUs, not machine types, so they give the capacity history nothing to ask).
func (s *Source) collectPage(ctx context.Context, e scrapers.Emitter, p *pricedMachines) error {
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
	for _, o := range res.Rows {
		p.add(o)
	}
	return nil
}

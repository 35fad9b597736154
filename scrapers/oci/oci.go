// Package oci collects Oracle Cloud Infrastructure GPU prices from the public price
// list API (https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/, no
// credentials).
// The long story (modes, rules, limits) is in its README.md.
package oci

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Name is the registry name of this source.
const Name = "oci"

// DefaultEndpoint is the public price list API.
const DefaultEndpoint = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/"

// maxPages bounds a run against paging that never ends.
const maxPages = 200

// sampleOptions documents sources.oci.options in the sample configuration.
//
//go:embed sample.yaml
var sampleOptions string

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "oci",
		Method:          schemas.SourceAPI,
		Pricing:         []string{schemas.OnDemand, schemas.Spot},
		Credentials:     "",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "0 * * * *",
		Description: "OCI public price list API: GPU parts per GPU-hour (pay as you go), with preemptible derived at " +
			"50% of on-demand",
		Tier:          schemas.TierHyperscaler,
		Interconnect:  schemas.InterconnectRoCE,
		Naming:        naming,
		SampleOptions: sampleOptions,
		Doc: scrapers.Doc{
			ProviderTitle: "Oracle OCI",
			Method:        "public price list API",
			OnDemand:      "✓",
			Spot:          "derived only (50 % rule, `source_kind=derived`)",
			Reserved:      "—",
			Credentials:   "none",
		},
	}, New)
}

// Options are the source's settings (sources.oci.options).
type Options struct {
	// Currency asks for prices in this ISO 4217 code; default USD.
	Currency string `json:"currency"`
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// Validate checks the options without network I/O.
func (o Options) Validate() error {
	if o.Currency != "" && !currencyRE.MatchString(o.Currency) {
		return fmt.Errorf("oci: options: currency %q is not an upper-case ISO 4217 code", o.Currency)
	}
	return nil
}

// Source is the OCI price list source.
type Source struct {
	cfg  scrapers.Config
	opts Options
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
	if o.Currency == "" {
		o.Currency = "USD"
	}
	if _, err := url.Parse(cfg.EndpointOr(DefaultEndpoint)); err != nil {
		return nil, fmt.Errorf("oci: endpoint: %w", err)
	}
	return &Source{cfg: cfg, opts: o}, nil
}

// Expect is the coverage guard: the list has a dozen GPU parts, each an on-demand and
// a derived spot row, always with the H100 and A10.
func (s *Source) Expect() scrapers.Expectation {
	return scrapers.Expectation{
		MinRows: 12,
		SKUs:    []string{"BM.GPU.H100.8", "BM.GPU.A10.4", "BM.GPU.A100-v2.8"},
	}
}

// firstURL is the endpoint with currencyCode.
func (s *Source) firstURL() string {
	ep := s.cfg.EndpointOr(DefaultEndpoint)
	sep := "?"
	if strings.Contains(ep, "?") {
		sep = "&"
	}
	return ep + sep + "currencyCode=" + url.QueryEscape(s.opts.Currency)
}

// Collect reads every page and emits its rows.
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	log := s.cfg.Logger.With("source", s.cfg.Name)
	base, err := url.Parse(s.cfg.EndpointOr(DefaultEndpoint))
	if err != nil {
		return fmt.Errorf("oci: endpoint: %w", err)
	}
	next := s.firstURL()
	seen := map[string]bool{}
	for n := 1; next != ""; n++ {
		if n > maxPages {
			return fmt.Errorf("oci: more than %d pages, stopping at %s", maxPages, next)
		}
		if seen[next] {
			return fmt.Errorf("oci: next page repeats %s", next)
		}
		seen[next] = true
		resp, err := s.cfg.Client.Get(ctx, next, nil)
		if err != nil {
			return fmt.Errorf("oci: page %d: %w", n, err)
		}
		p, err := parsePage(bytes.NewReader(resp.Body), s.opts.Currency, s.cfg.Now())
		if err != nil {
			return fmt.Errorf("oci: page %d (%s): %w", n, next, err)
		}
		for _, rj := range p.Rejects {
			if !scrapers.Reject(e, rj.Raw, rj.Reason) {
				log.Warn("item unreadable", "page", n, "reason", rj.Reason)
			}
		}
		for _, o := range p.Rows {
			o.SourceURL = next
			e.Emit(o)
		}
		log.Debug(
			"page read",
			"page",
			n,
			"items",
			p.Items,
			"rows",
			len(p.Rows),
			"skipped",
			p.Skipped,
			"rejected",
			len(p.Rejects),
		)
		switch {
		case p.NextLink != "":
			next, err = rehost(p.NextLink, base)
			if err != nil {
				return fmt.Errorf("oci: page %d: next link: %w", n, err)
			}
		case p.NextOffset >= 0:
			next = withOffset(s.firstURL(), p.NextOffset)
		default:
			next = ""
		}
	}
	return nil
}

// rehost replaces link's scheme and host with base's, so that a mirror (or a
// recording) keeps serving the whole run.
func rehost(link string, base *url.URL) (string, error) {
	u, err := url.Parse(link)
	if err != nil {
		return "", err
	}
	u.Scheme = base.Scheme
	u.Host = base.Host
	return u.String(), nil
}

// withOffset sets the offset query parameter of u.
func withOffset(u string, offset int) string {
	return u + "&offset=" + strconv.Itoa(offset)
}

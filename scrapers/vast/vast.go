// Package vast collects GPU offers from the public Vast.ai offer search
// (https://console.vast.ai/api/v0/bundles/, no credentials).
// The long story (modes, rules, limits) is in its README.md.
package vast

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Name is the registry name of this source.
const Name = "vast"

// DefaultEndpoint is the offer search.
const DefaultEndpoint = "https://console.vast.ai/api/v0/bundles/"

// DefaultQuery asks for every rentable, unrented on-demand GPU offer, cheapest first,
// pricing 8 GB of disk into dph_total.
func DefaultQuery() map[string]any {
	return map[string]any{
		"rentable":          map[string]any{"eq": true},
		"rented":            map[string]any{"eq": false},
		"num_gpus":          map[string]any{"gte": 1},
		"type":              "on-demand",
		"allocated_storage": 8,
		"order":             [][]string{{"dph_total", "asc"}},
		"limit":             DefaultLimit,
	}
}

// DefaultLimit is the most offers one query asks for.
const DefaultLimit = 10000

// sampleOptions documents sources.vast.options in the sample configuration.
//
//go:embed sample.yaml
var sampleOptions string

func init() {
	scrapers.Register(scrapers.Info{
		Name:            Name,
		Provider:        "vast",
		Method:          schemas.SourceAPI,
		Pricing:         []string{schemas.OnDemand, schemas.Spot},
		Credentials:     "",
		DefaultEndpoint: DefaultEndpoint,
		Schedule:        "*/10 * * * *",
		Description: "Vast.ai marketplace offer search: every rentable GPU offer, on-demand (dph_total) and " +
			"interruptible (min_bid)",
		Tier:          schemas.TierMarketplace,
		Interconnect:  schemas.InterconnectEthernet,
		Naming:        naming,
		SampleOptions: sampleOptions,
		Signals:       OfferSignals,
		Doc: scrapers.Doc{
			ProviderTitle: "Vast.ai",
			Method:        "offer search API (JSON)",
			OnDemand:      "✓ per machine offer",
			Spot:          "✓ interruptible (min bid)",
			Reserved:      "—",
			Credentials:   "none",
		},
	}, New)
}

// Options are the source's settings (sources.vast.options).
type Options struct {
	// Query replaces DefaultQuery: the JSON search object sent as the q parameter.
	Query map[string]any `json:"query"`
}

// Source is the Vast.ai offer search source.
type Source struct {
	cfg   scrapers.Config
	query []byte
	own   bool // a configured query
}

// New builds the source from its config.
func New(cfg scrapers.Config) (scrapers.Source, error) {
	var o Options
	if err := cfg.DecodeOptions(&o); err != nil {
		return nil, err
	}
	q := DefaultQuery()
	if o.Query != nil {
		if len(o.Query) == 0 {
			return nil, fmt.Errorf("vast: options: query is empty")
		}
		q = o.Query
	}
	data, err := json.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("vast: options: query: %w", err)
	}
	if _, err := url.Parse(cfg.EndpointOr(DefaultEndpoint)); err != nil {
		return nil, fmt.Errorf("vast: endpoint: %w", err)
	}
	return &Source{cfg: cfg, query: data, own: o.Query != nil}, nil
}

// Expect is the coverage guard: the marketplace lists well over a thousand GPU offers
// at any time, each giving an on-demand and usually a spot row. Machine SKUs come and
// go, so none is required.
func (s *Source) Expect() scrapers.Expectation {
	if s.own {
		return scrapers.Expectation{MinRows: 1}
	}
	return scrapers.Expectation{MinRows: 500}
}

// requestURL is the endpoint with the query as its q parameter.
func (s *Source) requestURL() string {
	ep := s.cfg.EndpointOr(DefaultEndpoint)
	sep := "?"
	if strings.Contains(ep, "?") {
		sep = "&"
	}
	return ep + sep + "q=" + url.QueryEscape(string(s.query))
}

// Collect runs the search once (the API does not page: it returns up to the query's
// limit) and emits every row, then the market's depth in the answer: one depth
// signal per GPU name (scrapers.EmitSignals; each row's own stock and reliability
// are read by Info.Signals).
func (s *Source) Collect(ctx context.Context, e scrapers.Emitter) error {
	u := s.requestURL()
	resp, err := s.cfg.Client.Get(ctx, u, map[string][]string{"Accept": {"application/json"}})
	if err != nil {
		return fmt.Errorf("vast: %w", err)
	}
	now := s.cfg.Now()
	res, depth, err := parseAnswer(bytes.NewReader(resp.Body), now)
	if err != nil {
		return err
	}
	s.cfg.Logger.With("source", s.cfg.Name).Debug("offers read", "rows", len(res.Rows), "gpu_names", len(depth))
	emitErr := scrapers.EmitResult(e, res, u)
	scrapers.EmitSignals(e, depthSignals(depth, now, u)...)
	if emitErr != nil {
		return fmt.Errorf("vast: %w", emitErr)
	}
	return nil
}

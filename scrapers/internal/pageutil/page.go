package pageutil

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/gpuprice/gpuprice/scrapers"
)

// Page describes a source that reads one public pricing page: it is fetched through
// the shared client's GetPage (robots.txt, conditional requests, retries), parsed by
// Parse, and its rows emitted with unreadable ones quarantined.
type Page struct {
	Name            string
	DefaultEndpoint string
	Parse           func(r io.Reader, observedAt time.Time) (Result, error)
	Expectation     scrapers.Expectation
}

// Expect is the page's coverage guard.
func (p Page) Expect() scrapers.Expectation { return p.Expectation }

// New builds the source: it takes no options (any key is an error) and checks the
// endpoint without network I/O.
func (p Page) New(cfg scrapers.Config) (scrapers.Source, error) {
	var none struct{}
	if err := cfg.DecodeOptions(&none); err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.EndpointOr(p.DefaultEndpoint))
	if err != nil {
		return nil, fmt.Errorf("%s: endpoint: %w", p.Name, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%s: endpoint %q is not an http(s) URL", p.Name, u.Redacted())
	}
	return &PageSource{page: p, cfg: cfg}, nil
}

// PageSource collects one Page.
type PageSource struct {
	page Page
	cfg  scrapers.Config
}

// Expect implements scrapers.Expecter.
func (s *PageSource) Expect() scrapers.Expectation { return s.page.Expectation }

// Collect fetches the page and emits its rows; unreadable rows are quarantined.
func (s *PageSource) Collect(ctx context.Context, e scrapers.Emitter) error {
	u := s.cfg.EndpointOr(s.page.DefaultEndpoint)
	resp, err := s.cfg.Client.GetPage(ctx, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", s.page.Name, err)
	}
	res, err := s.page.Parse(bytes.NewReader(resp.Body), s.cfg.Now())
	if err != nil {
		return err
	}
	s.cfg.Logger.Debug("pricing page read", "rows", len(res.Rows), "rejected", len(res.Rejects), "not_modified", resp.NotModified)
	if err := Emit(e, res, u); err != nil {
		return fmt.Errorf("%s: %w", s.page.Name, err)
	}
	return nil
}

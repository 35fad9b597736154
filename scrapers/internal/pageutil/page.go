package pageutil

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpuprice/gpuprice/scrapers"
)

// Page describes a source that reads one public pricing page: it is crawled with colly
// through the shared client (Crawl: robots.txt, retries, body cap, charset, the raw
// archive), its HTML document handed to ParseDoc, and its rows emitted with unreadable
// ones quarantined.
type Page struct {
	Name            string
	DefaultEndpoint string
	// ParseDoc reads the rows of the page's document (its <html> element). It is
	// pure: no HTTP, no clock.
	ParseDoc func(doc *goquery.Selection, observedAt time.Time) (Result, error)
	// ErrLayout is the source's "layout changed" error: a response that is empty or
	// not HTML wraps it.
	ErrLayout   error
	Expectation scrapers.Expectation
}

// ParseReader parses a recorded page as Collect parses a crawled one: an empty page
// is an ErrLayout error, anything else is read as HTML and handed to ParseDoc.
func (p Page) ParseReader(r io.Reader, observedAt time.Time) (Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Result{}, fmt.Errorf("%s: reading page: %w", p.Name, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Result{}, fmt.Errorf("%w: the page is empty", p.ErrLayout)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(data))
	if err != nil {
		return Result{}, fmt.Errorf("%s: parsing HTML: %w", p.Name, err)
	}
	return p.ParseDoc(doc.Find("html"), observedAt)
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

// Collect crawls the page and emits its rows; unreadable rows are quarantined.
func (s *PageSource) Collect(ctx context.Context, e scrapers.Emitter) error {
	u := s.cfg.EndpointOr(s.page.DefaultEndpoint)
	f, err := Crawl(ctx, s.cfg, u)
	if err != nil {
		return fmt.Errorf("%s: %w", s.page.Name, err)
	}
	if len(bytes.TrimSpace(f.Body)) == 0 {
		return fmt.Errorf("%w: the page is empty", s.page.ErrLayout)
	}
	if f.Doc == nil {
		return fmt.Errorf("%w: the answer is not HTML (%s)", s.page.ErrLayout, contentType(f))
	}
	res, err := s.page.ParseDoc(f.Doc, s.cfg.Now())
	if err != nil {
		return err
	}
	s.cfg.Logger.Debug("pricing page read", "rows", len(res.Rows), "rejected", len(res.Rejects))
	if err := Emit(e, res, u); err != nil {
		return fmt.Errorf("%s: %w", s.page.Name, err)
	}
	return nil
}

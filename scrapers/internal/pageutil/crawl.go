package pageutil

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Fetched is one page the crawler read.
type Fetched struct {
	URL         string
	Status      int
	ContentType string
	Body        []byte             // decoded to UTF-8
	Doc         *goquery.Selection // the document's <html> element; nil when the answer is not HTML
}

// Crawl reads the web page at url with colly, through cfg.Client: every request
// (robots.txt included) goes through the shared client's Transport, so retries,
// Retry-After, the body cap, charset decoding, per-host spacing, secret redaction
// and the raw archive apply as to every other request. The crawler honours
// robots.txt for gpuprice's User-Agent (a disallowed page fails with fetch.ErrRobots
// and is not requested), stops when ctx ends (colly.StdlibContext), keeps one request
// at a time per host spaced by http.min_interval (a colly LimitRule), and hands over the page's HTML
// document as a goquery selection (OnHTML). A final status that is not 2xx is a
// *fetch.StatusError (errors.Is fetch.ErrStatus).
func Crawl(ctx context.Context, cfg scrapers.Config, pageURL string) (*Fetched, error) {
	client := cfg.Client
	c := colly.NewCollector(
		colly.StdlibContext(ctx),
		colly.UserAgent(client.UserAgent),
		colly.MaxBodySize(0), // the shared client caps bodies (http.max_body_bytes)
		colly.AllowURLRevisit(),
	)
	c.IgnoreRobotsTxt = false
	c.WithTransport(client.Transport())
	// One request at a time per host, spaced by http.min_interval (the shared client
	// also spaces requests to a host across every source of the process).
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1, Delay: client.MinInterval()}); err != nil {
		return nil, fmt.Errorf("colly: %w", err)
	}
	c.OnRequest(func(r *colly.Request) {
		r.Headers.Set("Accept", "text/html,application/xhtml+xml")
	})
	var out *Fetched
	c.OnResponse(func(r *colly.Response) {
		out = &Fetched{URL: pageURL, Status: r.StatusCode, ContentType: r.Headers.Get("Content-Type"), Body: r.Body}
	})
	c.OnHTML("html", func(e *colly.HTMLElement) {
		if out != nil && out.Doc == nil {
			out.Doc = e.DOM
		}
	})
	var status int
	c.OnError(func(r *colly.Response, _ error) {
		if r != nil {
			status = r.StatusCode
		}
	})
	shown := fetch.RedactURL(pageURL)
	err := c.Visit(pageURL)
	switch {
	case errors.Is(err, colly.ErrRobotsTxtBlocked):
		return nil, fmt.Errorf("%w: %s", fetch.ErrRobots, shown)
	case err != nil && ctx.Err() != nil:
		return nil, fmt.Errorf("fetch: %s: %w", shown, ctx.Err())
	case err != nil && status != 0:
		return nil, &fetch.StatusError{URL: shown, Status: status}
	case err != nil:
		return nil, redactErr(err, shown)
	case out == nil:
		return nil, fmt.Errorf("fetch: %s: no response", shown)
	case out.Status < 200 || out.Status >= 300:
		return nil, &fetch.StatusError{URL: shown, Status: out.Status}
	}
	return out, nil
}

// redactErr names the request URL in err redacted (colly's errors are *url.Error
// holding the URL as requested); the chain is kept.
func redactErr(err error, shown string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = shown
	}
	return err
}

// contentType is the response's Content-Type, or what its body looks like.
func contentType(f *Fetched) string {
	ct := f.ContentType
	if ct == "" {
		ct = http.DetectContentType(f.Body)
	}
	return ct
}

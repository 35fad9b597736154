package pageutil_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// TestCrawl: the crawler honours a robots.txt group written for gpuprice, decodes the
// page to UTF-8, hands over its document, reports every response to the client's
// Observer (the raw archive) and stops when its context ends.
func TestCrawl(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		"/robots.txt": {{Body: "User-agent: gpuprice\nDisallow: /private\n\nUser-agent: *\nAllow: /\n"}},
		"/pricing": {{Body: "<html><body><table><tr><td>Z\xfcrich \x80 2,49</td></tr></table></body></html>",
			Header: map[string]string{"Content-Type": "text/html; charset=windows-1252"}}},
		"/private/prices": {{Body: "<p>secret</p>"}},
		"/gone":           {{Status: http.StatusNotFound}},
	})
	cfg := scrapertest.Config(t, "crawl", "", nil)
	var seen []string
	cfg.Client.Observer = observerFunc(func(url string, status int) { seen = append(seen, url[len(srv.URL):]) })
	ctx := context.Background()

	f, err := pageutil.Crawl(ctx, cfg, srv.URL+"/pricing")
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil || f.Doc.Find("td").Text() != "Zürich € 2,49" || !strings.Contains(string(f.Body), "Zürich €") {
		t.Errorf("page = %q", f.Body)
	}
	if strings.Join(seen, " ") != "/robots.txt /pricing" {
		t.Errorf("observed %v, want robots.txt then the page", seen)
	}
	if _, err := pageutil.Crawl(ctx, cfg, srv.URL+"/private/prices"); !errors.Is(err, fetch.ErrRobots) || srv.Hits["/private/prices"] != 0 {
		t.Errorf("disallowed page: %v after %d requests", err, srv.Hits["/private/prices"])
	}
	var se *fetch.StatusError
	if _, err := pageutil.Crawl(ctx, cfg, srv.URL+"/gone"); !errors.As(err, &se) || se.Status != http.StatusNotFound {
		t.Errorf("404: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := pageutil.Crawl(cancelled, cfg, srv.URL+"/pricing"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

type observerFunc func(url string, status int)

func (f observerFunc) Observe(_ context.Context, _, url string, _ []byte, r *fetch.Response, _ time.Time) {
	f(url, r.Status)
}

// Package pagetest runs the Collect-level tests every single-page source built on
// pageutil.Page shares, over the source's own recorded pages in testdata/: the full
// page after a 429, a partly unreadable page (with and without a quarantining
// emitter), robots.txt, and failures (500 and 429 forever, a changed layout, an empty
// page).
package pagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// Case describes one source and what its recorded pages hold.
type Case struct {
	Name           string           // registry name: the prefix of the source's errors
	New            scrapers.Factory // the source's constructor
	PagePath       string           // path of the pricing page on the replay server
	FullRows       int              // rows from testdata/full_page/input.html
	PartialRows    int              // readable rows of testdata/partial/input.html (when there is one)
	PartialRejects int              // unreadable rows of it
	ErrLayout      error            // the source's "layout changed" error
}

// rejectSink is a Sink that can quarantine.
type rejectSink struct {
	scrapertest.Sink
	rejected []string
}

func (r *rejectSink) Reject(_, reason string) { r.rejected = append(r.rejected, reason) }

// Run runs the shared tests as subtests of t.
func Run(t *testing.T, c Case) {
	t.Helper()
	newSource := func(t *testing.T, url string) scrapers.Source {
		t.Helper()
		src, err := c.New(scrapertest.Config(t, c.Name, url, nil))
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	t.Run("Collect", func(t *testing.T) {
		srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{c.PagePath: {
			{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}},
			{File: "testdata/full_page/input.html", Header: map[string]string{"Content-Type": "text/html; charset=utf-8"}},
		}})
		var sink scrapertest.Sink
		if err := newSource(t, srv.URL+c.PagePath).Collect(context.Background(), &sink); err != nil {
			t.Fatal(err)
		}
		if srv.Hits[c.PagePath] != 2 || srv.Hits["/robots.txt"] != 1 {
			t.Errorf("hits = %v, want robots.txt once and the page twice (a 429 then the page)", srv.Hits)
		}
		for _, r := range srv.Reqs {
			if ua := r.Header.Get("User-Agent"); ua != fetch.DefaultUserAgent {
				t.Errorf("User-Agent = %q", ua)
			}
		}
		if len(sink.Rows) != c.FullRows {
			t.Fatalf("rows = %d, want %d", len(sink.Rows), c.FullRows)
		}
		for _, o := range sink.Rows {
			if o.SourceURL != srv.URL+c.PagePath || o.SourceKind != schemas.SourceScrape {
				t.Errorf("row %s: source %q %q", o.SKU, o.SourceURL, o.SourceKind)
			}
		}
	})
	// A source whose parser fails the whole page on an unreadable row (lambda) has no
	// partial page to quarantine from.
	_, noPartial := os.Stat("testdata/partial/input.html")
	t.Run("Partial", func(t *testing.T) {
		if noPartial != nil {
			return
		}
		srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{c.PagePath: {{File: "testdata/partial/input.html"}}})
		src := newSource(t, srv.URL+c.PagePath)
		var rs rejectSink
		if err := src.Collect(context.Background(), &rs); err != nil {
			t.Fatal(err)
		}
		if len(rs.Rows) != c.PartialRows || len(rs.rejected) != c.PartialRejects {
			t.Errorf("rows %d rejected %d, want %d and %d", len(rs.Rows), len(rs.rejected), c.PartialRows, c.PartialRejects)
		}
		var plain scrapertest.Sink
		err := src.Collect(context.Background(), &plain)
		if !errors.Is(err, pageutil.ErrUnquarantined) || len(plain.Rows) != c.PartialRows {
			t.Errorf("without a Rejecter: err %v rows %d", err, len(plain.Rows))
		}
	})
	t.Run("Robots", func(t *testing.T) {
		srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
			"/robots.txt": {{Body: "User-agent: *\nDisallow: " + c.PagePath + "\n"}},
			c.PagePath:    {{File: "testdata/full_page/input.html"}},
		})
		var sink scrapertest.Sink
		if err := newSource(t, srv.URL+c.PagePath).Collect(context.Background(), &sink); !errors.Is(err, fetch.ErrRobots) {
			t.Errorf("err = %v, want ErrRobots", err)
		}
		if srv.Hits[c.PagePath] != 0 {
			t.Error("a page robots.txt disallows was fetched")
		}
	})
	for _, f := range []struct {
		name  string
		route scrapertest.Route
		is    error
	}{
		{"500 forever", scrapertest.Route{Status: http.StatusInternalServerError}, fetch.ErrStatus},
		{"429 forever", scrapertest.Route{Status: http.StatusTooManyRequests}, fetch.ErrStatus},
		{"layout changed", scrapertest.Route{File: "testdata/layout_changed/input.html"}, c.ErrLayout},
		{"empty page", scrapertest.Route{File: "testdata/empty/input.html"}, c.ErrLayout},
	} {
		t.Run(f.name, func(t *testing.T) {
			srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{c.PagePath: {f.route}})
			var sink scrapertest.Sink
			err := newSource(t, srv.URL+c.PagePath).Collect(context.Background(), &sink)
			if !errors.Is(err, f.is) || !strings.HasPrefix(err.Error(), c.Name+": ") {
				t.Fatalf("err = %v, want %v", err, f.is)
			}
			if len(sink.Rows) != 0 {
				t.Errorf("rows emitted on failure: %d", len(sink.Rows))
			}
		})
	}
}

// Parser is a source's pure page parser.
type Parser func(r io.Reader, observedAt time.Time) (pageutil.Result, error)

// Golden parses every testdata/<case>/input.html and compares the result (or the
// error) with testdata/<case>/expected.json (scrapertest.GoldenCases).
func Golden(t *testing.T, parse Parser) {
	t.Helper()
	scrapertest.GoldenCases(t, "testdata/*/input.html", func(_ string, data []byte) (pageutil.Result, error) {
		return parse(bytes.NewReader(data), scrapertest.ObservedAt)
	})
}

// ParseFile parses a recorded page at the tests' fixed observation time.
func ParseFile(t testing.TB, parse Parser, path string) (pageutil.Result, error) {
	t.Helper()
	return parse(bytes.NewReader(scrapertest.ReadFile(t, path)), scrapertest.ObservedAt)
}

// Index maps rows by "sku|pricing", failing on a series that appears twice.
func Index(t testing.TB, rows []schemas.Observation) map[string]schemas.Observation {
	t.Helper()
	out := map[string]schemas.Observation{}
	for _, o := range rows {
		k := o.SKU + "|" + o.Pricing
		if _, dup := out[k]; dup {
			t.Errorf("duplicate series %s", k)
		}
		out[k] = o
	}
	return out
}

// Unpriced splits the rows a page lists without a price (price 0) by what ingest
// makes of them: notOffered are those whose price_text scrapers.NotOffered knows
// (counted as not offered, runs.rows_not_offered), quarantined the others ("no price
// published"), each as "sku|pricing", sorted.
func Unpriced(rows []schemas.Observation) (notOffered, quarantined []string) {
	for _, o := range rows {
		if o.PriceNative != 0 {
			continue
		}
		k := o.SKU + "|" + o.Pricing
		if scrapers.NotOffered(o.Attrs["price_text"]) {
			notOffered = append(notOffered, k)
		} else {
			quarantined = append(quarantined, k)
		}
	}
	sort.Strings(notOffered)
	sort.Strings(quarantined)
	return notOffered, quarantined
}

// NotOffered checks that each recorded page (its path → how many) gives that many
// rows ingest counts as not offered (Unpriced) and none it would quarantine for
// having no price.
func NotOffered(t *testing.T, parse Parser, want map[string]int) {
	t.Helper()
	for file, n := range want {
		res, err := ParseFile(t, parse, file)
		if err != nil {
			t.Fatal(err)
		}
		notOffered, quarantined := Unpriced(res.Rows)
		if len(notOffered) != n || len(quarantined) != 0 {
			t.Errorf("%s: not offered %v, quarantined %v; want %d and none", file, notOffered, quarantined, n)
		}
	}
}

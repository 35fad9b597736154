// Package scrapertest holds what every source's tests share: a sink that collects
// emitted observations, golden-file comparison with an -update flag, a config pointing
// a source at a local server with a fixed clock and fast retries, and a replay server.
package scrapertest

import (
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Update rewrites golden files instead of comparing: go test ./scrapers/... -update
var Update = flag.Bool("update", false, "rewrite golden expected files")

// ObservedAt is the fixed clock of every source test.
var ObservedAt = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// Sink collects emitted observations; safe for concurrent use.
type Sink struct {
	mu      sync.Mutex
	Rows    []schemas.Observation
	Signals []schemas.Signal // what the source sent through scrapers.EmitSignals
}

// EmitSignal implements scrapers.SignalEmitter.
func (s *Sink) EmitSignal(sig schemas.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Signals = append(s.Signals, sig)
}

// Emit implements scrapers.Emitter.
func (s *Sink) Emit(o schemas.Observation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Rows = append(s.Rows, o)
}

// Sorted returns the rows sorted by series key then effective_at, for stable goldens.
func (s *Sink) Sorted() []schemas.Observation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]schemas.Observation(nil), s.Rows...)
	SortRows(out)
	return out
}

// SortRows sorts rows by series key, then effective_at, then price.
func SortRows(rows []schemas.Observation) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if ka, kb := a.SeriesKey(), b.SeriesKey(); ka != kb {
			return ka < kb
		}
		if !a.EffectiveAt.Equal(b.EffectiveAt) {
			return a.EffectiveAt.Before(b.EffectiveAt)
		}
		return a.PriceNative < b.PriceNative
	})
}

// Config returns a source config pointing at endpoint with a fixed clock, a 5 s timeout
// and fast retries (3 tries, 1 ms apart). Like the CLI, it reads the source's
// credential variables (Info.SecretEnv) from the environment into Secrets, so tests
// set them with t.Setenv.
func Config(t testing.TB, name, endpoint string, options map[string]any) scrapers.Config {
	t.Helper()
	info, _, _ := scrapers.Lookup(name)
	c := fetch.New(fetch.Options{
		Timeout: 5 * time.Second,
		Backoff: fetch.Backoff{MaxTries: 3, Initial: time.Millisecond, Max: 5 * time.Millisecond},
	})
	return scrapers.Config{
		Name:     name,
		Endpoint: endpoint,
		Options:  options,
		Client:   c,
		Logger:   slog.New(slog.DiscardHandler),
		Now:      func() time.Time { return ObservedAt },
		Secrets:  info.Secrets(os.Getenv),
	}
}

// Golden compares got (marshalled as indented JSON) with the file at path, or rewrites
// the file when -update is given.
func Golden(t testing.TB, path string, got any) {
	t.Helper()
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if string(want) != string(data) {
		t.Errorf(
			"%s: output differs from golden file (run with -update after checking the change)\n--- got ---\n%s",
			path,
			truncate(string(data), 4000),
		)
	}
}

// GoldenCase is what a parser case records in its expected.json: the parser's result,
// or the error it gave.
type GoldenCase[R any] struct {
	Result *R     `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// GoldenCases is every source's golden-case loop: for each input file matching pattern
// ("testdata/*/input.json"), it runs parse on the file's bytes and compares the
// GoldenCase with expected.json in the same folder (go test -update rewrites them).
// parse gets the path too, for sources whose cases hold several formats. It returns
// the number of cases, failing when there is none.
func GoldenCases[R any](t *testing.T, pattern string, parse func(path string, data []byte) (R, error)) int {
	t.Helper()
	cases, err := filepath.Glob(pattern)
	if err != nil || len(cases) == 0 {
		t.Fatalf("no golden cases match %s: %v", pattern, err)
	}
	for _, in := range cases {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			res, err := parse(in, ReadFile(t, in))
			var g GoldenCase[R]
			if err != nil {
				g.Error = err.Error()
			} else {
				g.Result = &res
			}
			Golden(t, filepath.Join(dir, "expected.json"), g)
		})
	}
	return len(cases)
}

// ReadFile returns the file's content, failing the test when it cannot be read.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n…"
}

// Route is one canned response of a replay server.
type Route struct {
	Status int               // default 200
	File   string            // body from this file
	Body   string            // or this body
	Header map[string]string // extra response headers
}

// Server is a local HTTP server replaying canned responses by request path plus raw
// query ("/api?x=1"), falling back to the path alone. It counts requests per key.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	routes map[string][]Route // a list: successive requests take successive entries, the last repeats
	Hits   map[string]int
	Reqs   []*http.Request
}

// NewServer starts a replay server; it is closed when the test ends.
func NewServer(t testing.TB, routes map[string][]Route) *Server {
	t.Helper()
	s := &Server{routes: routes, Hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		s.mu.Lock()
		rs, ok := s.routes[key]
		if !ok {
			key = r.URL.Path
			rs, ok = s.routes[key]
		}
		n := s.Hits[key]
		s.Hits[key]++
		s.Reqs = append(s.Reqs, r.Clone(r.Context()))
		s.mu.Unlock()
		if !ok || len(rs) == 0 {
			http.NotFound(w, r)
			return
		}
		rt := rs[min(n, len(rs)-1)]
		body := []byte(rt.Body)
		if rt.File != "" {
			var err error
			if body, err = os.ReadFile(rt.File); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		}
		for k, v := range rt.Header {
			w.Header().Set(k, v)
		}
		if rt.Status != 0 {
			w.WriteHeader(rt.Status)
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

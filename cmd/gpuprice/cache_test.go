package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestConditionalPageRequests: with http.cache_dir set, the second collection of a
// pricing page is a conditional request, its 304 answered from the cache and the page
// parsed as before; collect --record never sends a conditional request, so its archive
// holds the whole page and reparse rebuilds the rows from it.
func TestConditionalPageRequests(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "scrapers", "lambda", "testdata", "full_page", "input.html"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conditional, whole int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/service/gpu-cloud" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("If-None-Match") == `"page-v1"` {
			conditional++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		whole++
		w.Header().Set("ETag", `"page-v1"`)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(page)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := "data_dir: " + dir + "\nhttp: {timeout: 5s, retries: 2, cache_dir: " + filepath.Join(dir, "http-cache") +
		"}\nsources:\n  lambda: {endpoint: " + srv.URL + "/service/gpu-cloud}\n  fx: {enabled: false}\n"
	for _, other := range append(disabledOthers(), "azure", "vast") {
		cfg += "  " + other + ": {enabled: false}\n"
	}
	cfgPath := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := "duckdb://" + filepath.Join(dir, "g.duckdb")
	lambdaRows := regexp.MustCompile(`(?m)^lambda\s+ok\s+22\s`)
	for i, want := range []struct{ whole, conditional int }{{1, 0}, {1, 1}} {
		out, code := run(t, "--config", cfgPath, "--store", dsn, "collect")
		mu.Lock()
		w, c := whole, conditional
		mu.Unlock()
		if code != 0 || !lambdaRows.MatchString(out) || w != want.whole || c != want.conditional {
			t.Fatalf("collection %d: exit %d, %d whole and %d conditional requests (want %d and %d)\n%s", i+1, code, w, c, want.whole, want.conditional, out)
		}
	}
	arc := filepath.Join(t.TempDir(), "archive")
	if out, code := run(t, "--config", cfgPath, "--store", dsn, "collect", "--record", arc); code != 0 || !lambdaRows.MatchString(out) || whole != 2 {
		t.Fatalf("collect --record: exit %d, %d whole requests (want 2: the archive holds whole answers)\n%s", code, whole, out)
	}
	srv.Close()
	fresh := "duckdb://" + filepath.Join(t.TempDir(), "fresh.duckdb")
	if out, code := run(t, "--config", cfgPath, "--store", fresh, "reparse", arc); code != 0 || !lambdaRows.MatchString(out) || strings.Contains(out, "not in the archive") {
		t.Fatalf("reparse: exit %d\n%s", code, out)
	}
}

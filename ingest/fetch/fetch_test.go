package fetch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func fast() Options {
	return Options{Timeout: 2 * time.Second, Backoff: Backoff{MaxTries: 3, Initial: time.Millisecond, Max: 20 * time.Millisecond}}
}

func TestRetriesThenSucceeds(t *testing.T) {
	var n atomic.Int32
	var ua atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua.Store(r.UserAgent())
		switch n.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusBadGateway)
		default:
			_, _ = w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	r, err := New(fast()).Get(context.Background(), srv.URL, nil)
	if err != nil || string(r.Body) != "ok" || n.Load() != 3 {
		t.Fatalf("resp %v err %v after %d requests", r, err, n.Load())
	}
	if !strings.HasPrefix(ua.Load().(string), "gpuprice/") {
		t.Errorf("User-Agent %q does not name gpuprice", ua.Load())
	}
}

func TestGivesUpAndDoesNotRetry4xx(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer srv.Close()
	c := New(fast())
	_, err := c.Get(context.Background(), srv.URL+"/down", nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 500 || !errors.Is(err, ErrStatus) || n.Load() != 3 {
		t.Fatalf("err %v after %d requests, want HTTP 500 after 3", err, n.Load())
	}
	n.Store(0)
	_, err = c.Get(context.Background(), srv.URL+"/missing", nil)
	if !errors.As(err, &se) || se.Status != 404 || n.Load() != 1 {
		t.Fatalf("404: err %v after %d requests, want one request", err, n.Load())
	}
}

func TestRetryAfterIsHonouredUpToMax(t *testing.T) {
	b := Backoff{MaxTries: 2, Initial: time.Millisecond, Max: 50 * time.Millisecond}
	var waited time.Duration
	start := time.Now()
	err := b.Do(context.Background(), func(attempt int) (bool, time.Duration, error) {
		if attempt == 1 {
			return true, time.Hour, errors.New("429")
		}
		waited = time.Since(start)
		return false, 0, nil
	})
	if err != nil || waited < 50*time.Millisecond {
		t.Errorf("err %v; waited %v, want the capped Retry-After (50ms)", err, waited)
	}
	if got := retryAfter("7", time.Now()); got != 7*time.Second {
		t.Errorf("retryAfter(7) = %v", got)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := retryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); got != 90*time.Second {
		t.Errorf("retryAfter(date) = %v", got)
	}
	if got := retryAfter("soon", now); got != 0 {
		t.Errorf("retryAfter(bad) = %v", got)
	}
}

func TestBodyCapped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
	}))
	defer srv.Close()
	o := fast()
	o.MaxBody = 1024
	if _, err := New(o).Get(context.Background(), srv.URL, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestTimeoutCutsHangingServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	o := fast()
	o.Timeout = 50 * time.Millisecond
	o.Backoff.MaxTries = 1
	if _, err := New(o).Get(context.Background(), srv.URL, nil); err == nil {
		t.Fatal("a hanging server returned no error")
	}
}

// pageGet fetches url through the client's Transport, as the page crawler does.
func pageGet(t *testing.T, c *Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := (&http.Client{Transport: c.Transport()}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func TestConditionalRequests(t *testing.T) {
	var conditional atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			conditional.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte("<table>prices</table>"))
	}))
	defer srv.Close()
	o := fast()
	o.CacheDir = t.TempDir()
	c := New(o)
	ctx := context.Background()
	first, err := c.GetConditional(ctx, srv.URL+"/pricing", nil)
	if err != nil || first.NotModified {
		t.Fatalf("first: %v %v", first, err)
	}
	second, err := c.GetConditional(ctx, srv.URL+"/pricing", nil)
	if err != nil || !second.NotModified || string(second.Body) != "<table>prices</table>" || conditional.Load() != 1 {
		t.Fatalf("second: %+v %v (conditional requests %d)", second, err, conditional.Load())
	}
	// The crawler's requests go through the same cache.
	resp, body := pageGet(t, c, srv.URL+"/pricing")
	if resp.StatusCode != http.StatusOK || string(body) != "<table>prices</table>" || conditional.Load() != 2 {
		t.Fatalf("through Transport: %d %q (conditional requests %d)", resp.StatusCode, body, conditional.Load())
	}
	// Without a cache nothing is conditional.
	plain := New(fast())
	if r, err := plain.GetConditional(ctx, srv.URL+"/pricing", nil); err != nil || r.NotModified || conditional.Load() != 2 {
		t.Fatalf("without a cache: %+v %v", r, err)
	}
}

// TestTransport: statuses come back as responses once retries are spent (a crawler
// reads robots.txt's 404 as "no rules"), retried ones after their retries; transport
// failures and oversized bodies are errors.
func TestTransport(t *testing.T) {
	var flaky atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/flaky":
			if flaky.Add(1) == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			_, _ = w.Write([]byte("<p>ok</p>"))
		case "/big":
			_, _ = w.Write(make([]byte, 2048))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	o := fast()
	o.MaxBody = 1024
	c := New(o)
	if resp, body := pageGet(t, c, srv.URL+"/flaky"); resp.StatusCode != 200 || string(body) != "<p>ok</p>" || flaky.Load() != 2 {
		t.Errorf("flaky: %d %q after %d requests", resp.StatusCode, body, flaky.Load())
	}
	if resp, _ := pageGet(t, c, srv.URL+"/robots.txt"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("robots.txt: %d, want the 404 as a response", resp.StatusCode)
	}
	if _, err := (&http.Client{Transport: c.Transport()}).Get(srv.URL + "/big"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("big body: %v, want ErrTooLarge", err)
	}
}

// TestPostRetriedOnlyWhenIdempotent: a POST is sent once unless the caller says that
// sending it again does no harm.
func TestPostRetriedOnlyWhenIdempotent(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	c := New(fast())
	ctx := context.Background()
	if _, err := c.Do(ctx, http.MethodPost, srv.URL, nil, []byte("{}")); !errors.Is(err, ErrStatus) || posts.Load() != 1 {
		t.Errorf("plain POST: %v after %d posts, want one", err, posts.Load())
	}
	posts.Store(0)
	if _, err := c.Do(Idempotent(ctx), http.MethodPost, srv.URL, nil, []byte("{}")); !errors.Is(err, ErrStatus) || posts.Load() != 3 {
		t.Errorf("idempotent POST: %v after %d posts, want 3", err, posts.Load())
	}
	posts.Store(0)
	if _, err := c.Get(ctx, srv.URL, nil); !errors.Is(err, ErrStatus) || posts.Load() != 3 {
		t.Errorf("GET: %v after %d requests, want 3", err, posts.Load())
	}
}

package fetch

import (
	"context"
	"errors"
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

func TestConditionalAndRobots(t *testing.T) {
	var conditional atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = w.Write([]byte("User-agent: gpuprice\nDisallow: /private\n\nUser-agent: *\nAllow: /\n"))
		case "/pricing":
			if r.Header.Get("If-None-Match") == `"v1"` {
				conditional.Add(1)
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			_, _ = w.Write([]byte("<table>prices</table>"))
		default:
			_, _ = w.Write([]byte("secret"))
		}
	}))
	defer srv.Close()
	o := fast()
	o.CacheDir = t.TempDir()
	c := New(o)
	ctx := context.Background()
	first, err := c.GetPage(ctx, srv.URL+"/pricing", nil)
	if err != nil || first.NotModified {
		t.Fatalf("first: %v %v", first, err)
	}
	second, err := c.GetPage(ctx, srv.URL+"/pricing", nil)
	if err != nil || !second.NotModified || string(second.Body) != "<table>prices</table>" || conditional.Load() != 1 {
		t.Fatalf("second: %+v %v (conditional requests %d)", second, err, conditional.Load())
	}
	if _, err := c.GetPage(ctx, srv.URL+"/private/x", nil); !errors.Is(err, ErrRobots) {
		t.Fatalf("robots.txt ignored: %v", err)
	}
}

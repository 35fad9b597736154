// Package fetch is the one HTTP client of gpuprice: the sources, the page crawler
// (colly, through Transport), the alert notifiers, the raw archive and the ECB rates
// all send their requests through a Client. A Client sets a clear User-Agent, a
// timeout on every request, spaces requests to one host (MinInterval), caps response
// bodies (counted after decompression), tells an Observer of every response (the raw
// archive of `collect --record`), and retries 429, 500, 502, 503 and 504 answers and
// transport errors with backoff, honouring Retry-After (capped). It retries GET, HEAD,
// OPTIONS, PUT and DELETE requests; a POST or PATCH only when the caller says that
// sending it twice does no harm, with a context from Idempotent (a price query; an
// Alertmanager post, which deduplicates), and never a webhook post. Errors and logs
// name URLs with credentials redacted (RedactURL). Transport lends all of this to
// another HTTP library (the colly crawler, which honours robots.txt), decoding web
// pages to UTF-8 from their declared charset. With a Cache (http.cache_dir), GET
// requests through Transport and GetConditional are conditional (ETag,
// Last-Modified) and a 304 is answered from the cache. Stream reads files too large
// to hold with the same policy, and Observed reports the responses of another client
// (an SDK's) to an Observer.
package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// DefaultUserAgent names the project so providers know who is asking.
const DefaultUserAgent = "gpuprice/0.1 (+https://github.com/gpuprice/gpuprice; GPU price history)"

// Sentinel errors.
var (
	ErrTooLarge = errors.New("fetch: response body exceeds the limit")
	ErrStatus   = errors.New("fetch: unexpected HTTP status")
	// ErrRobots is returned by the page crawler when robots.txt disallows a page for
	// gpuprice.
	ErrRobots = errors.New("fetch: disallowed by robots.txt")
)

// StatusError is returned for a response whose status is not 2xx (after retries).
type StatusError struct {
	URL    string // with credentials redacted (RedactURL)
	Status int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("fetch: %s: HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// Unwrap lets errors.Is(err, ErrStatus) match.
func (e *StatusError) Unwrap() error { return ErrStatus }

// Backoff is the project's one retry policy.
type Backoff struct {
	MaxTries int           // total attempts, at least 1
	Initial  time.Duration // first wait
	Max      time.Duration // cap of any wait, Retry-After included
}

// DefaultBackoff tries four times, waiting 500ms, 1s, 2s (capped at 30s).
func DefaultBackoff() Backoff {
	return Backoff{MaxTries: 4, Initial: 500 * time.Millisecond, Max: 30 * time.Second}
}

// Wait returns the wait before attempt n (n ≥ 1 is the first retry).
func (b Backoff) Wait(n int) time.Duration {
	d := b.Initial
	for i := 1; i < n; i++ {
		d *= 2
		if d >= b.Max {
			return b.Max
		}
	}
	if d > b.Max {
		return b.Max
	}
	return d
}

// Do calls f until it succeeds, returns a non-retryable error, or the tries are spent.
// f returns retryAfter > 0 to ask for a specific wait (a Retry-After header).
func (b Backoff) Do(ctx context.Context, f func(attempt int) (retry bool, retryAfter time.Duration, err error)) error {
	tries := max(b.MaxTries, 1)
	var err error
	for attempt := 1; ; attempt++ {
		var retry bool
		var after time.Duration
		retry, after, err = f(attempt)
		if err == nil || !retry || attempt >= tries {
			return err
		}
		wait := b.Wait(attempt)
		if after > 0 {
			wait = min(after, b.Max)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// Response is a fully read response.
type Response struct {
	URL    string
	Status int
	Header http.Header
	Body   []byte
	// NotModified is set when the server answered 304 and Body comes from the Cache.
	NotModified bool
}

// Observer is told of every response a Client reads (the raw archive uses it).
type Observer interface {
	Observe(ctx context.Context, method, url string, reqBody []byte, resp *Response, at time.Time)
}

// Client is a shared HTTP client. The zero value is not usable: use New.
type Client struct {
	HTTP      *http.Client
	UserAgent string
	Backoff   Backoff
	MaxBody   int64 // bytes; responses larger than this fail with ErrTooLarge
	Logger    *slog.Logger
	Observer  Observer
	Limiter   *HostLimiter
	// Cache makes GET requests of Transport and GetConditional conditional
	// (If-None-Match, If-Modified-Since); nil: none.
	Cache *Cache
}

// Options configure New.
type Options struct {
	Timeout   time.Duration // per request; default 30s
	UserAgent string
	Backoff   Backoff
	MaxBody   int64 // default 64 MiB
	Logger    *slog.Logger
	// MinInterval between requests to the same host (0: no limit).
	MinInterval time.Duration
	// CacheDir keeps validators and bodies for conditional requests ("": none).
	CacheDir string
}

// New returns a Client with defaults filled in.
func New(o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.Backoff.MaxTries == 0 {
		o.Backoff = DefaultBackoff()
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 64 << 20
	}
	c := &Client{
		HTTP:      &http.Client{Timeout: o.Timeout, CheckRedirect: CheckRedirect},
		UserAgent: o.UserAgent,
		Backoff:   o.Backoff,
		MaxBody:   o.MaxBody,
		Logger:    o.Logger,
	}
	if o.MinInterval > 0 {
		c.Limiter = NewHostLimiter(o.MinInterval)
	}
	if o.CacheDir != "" {
		c.Cache = &Cache{Dir: o.CacheDir}
	}
	return c
}

// ErrRedirect is returned for a redirect that would carry credentials to a host
// reached without TLS.
var ErrRedirect = errors.New("fetch: redirect refused")

// CheckRedirect is the redirect policy of every Client (http.Client.CheckRedirect):
// at most 10 redirects; on a redirect to another host every credential header
// (Authorization, Cookie, X-Goog-Api-Key, X-Api-Key, …; see schemas.SensitiveHeader)
// is removed, since net/http forwards custom headers such as X-Goog-Api-Key; and a
// request that carried a credential (a header or a query parameter such as key=) is
// never redirected to another host over plain HTTP.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return fmt.Errorf("%w: stopped after 10 redirects", ErrRedirect)
	}
	first := via[0]
	if strings.EqualFold(req.URL.Host, first.URL.Host) {
		return nil
	}
	carried := false
	for _, prev := range via {
		for k := range prev.Header {
			if schemas.SensitiveHeader(k) {
				carried = true
			}
		}
		for k := range prev.URL.Query() {
			if schemas.SensitiveParam(k) {
				carried = true
			}
		}
	}
	for k := range req.Header {
		if schemas.SensitiveHeader(k) {
			req.Header.Del(k)
		}
	}
	if carried && req.URL.Scheme != "https" {
		return fmt.Errorf("%w: a request carrying credentials to %s was redirected to %s over plain HTTP",
			ErrRedirect, first.URL.Host, req.URL.Host)
	}
	return nil
}

// Get fetches url. Extra headers may be nil.
func (c *Client) Get(ctx context.Context, url string, hdr http.Header) (*Response, error) {
	return c.Do(ctx, http.MethodGet, url, hdr, nil)
}

type idempotentKey struct{}

// Idempotent returns a context under which POST and PATCH requests are retried as GET
// requests are: the caller says that sending the request again does no harm.
func Idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

// retriable reports whether a request may be sent again after a failure.
func retriable(ctx context.Context, method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete, "":
		return true
	}
	marked, _ := ctx.Value(idempotentKey{}).(bool)
	return marked
}

// Do sends a request with an optional body and reads the response whole, up to
// MaxBody. Statuses 429, 500, 502, 503 and 504 and transport errors are retried when
// the request may be sent again (see the package comment); the body is sent again on
// each retry.
func (c *Client) Do(ctx context.Context, method, url string, hdr http.Header, body []byte) (*Response, error) {
	r, err := c.do(ctx, method, url, hdr, body)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// do is Do, returning the last response read even when its status is an error.
func (c *Client) do(ctx context.Context, method, url string, hdr http.Header, body []byte) (*Response, error) {
	var out *Response
	shown := RedactURL(url) // what errors and logs name: never a credential
	again := retriable(ctx, method)
	err := c.Backoff.Do(ctx, func(attempt int) (bool, time.Duration, error) {
		out = nil
		if c.Limiter != nil {
			if err := c.Limiter.Wait(ctx, url); err != nil {
				return false, 0, err
			}
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, url, rd)
		if err != nil {
			return false, 0, fmt.Errorf("fetch: %s: %w", shown, scrubURL(err, url, shown))
		}
		for k, vs := range hdr {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		req.Header.Set("User-Agent", c.UserAgent)
		start := time.Now()
		resp, err := c.HTTP.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return false, 0, fmt.Errorf("fetch: %s: %w", shown, ctx.Err())
			}
			err = scrubURL(err, url, shown)
			c.log("request failed", "url", shown, "attempt", attempt, "error", err.Error())
			return again, 0, fmt.Errorf("fetch: %w", err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, c.MaxBody+1))
		if err != nil {
			return again, 0, fmt.Errorf("fetch: %s: reading body: %w", shown, scrubURL(err, url, shown))
		}
		if int64(len(data)) > c.MaxBody {
			return false, 0, fmt.Errorf("%w (%d bytes): %s", ErrTooLarge, c.MaxBody, shown)
		}
		r := &Response{URL: url, Status: resp.StatusCode, Header: resp.Header, Body: data}
		if c.Observer != nil {
			c.Observer.Observe(ctx, method, url, body, r, start)
		}
		c.log(
			"response",
			"url",
			shown,
			"status",
			resp.StatusCode,
			"bytes",
			len(data),
			"attempt",
			attempt,
			"duration",
			time.Since(start),
		)
		out = r
		switch {
		case resp.StatusCode >= 200 && resp.StatusCode < 300, resp.StatusCode == http.StatusNotModified:
			return false, 0, nil
		case retryable(resp.StatusCode):
			return again, retryAfter(
					resp.Header.Get("Retry-After"),
					time.Now(),
				), &StatusError{
					URL:    shown,
					Status: resp.StatusCode,
				}
		default:
			return false, 0, &StatusError{URL: shown, Status: resp.StatusCode}
		}
	})
	return out, err
}

func (c *Client) log(msg string, args ...any) {
	if c.Logger != nil {
		c.Logger.Debug(msg, args...)
	}
}

func retryable(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryAfter parses a Retry-After header (seconds or HTTP date); 0 when absent or bad.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func asStatus(err error, se **StatusError) bool { return errors.As(err, se) }

package fetch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// StreamEntry takes the body of one streamed response as it is read.
type StreamEntry interface {
	io.Writer
	// Close ends the entry. With a nil error the body was read to its end and the
	// entry is kept; with an error (the transfer broke off) the partial body is
	// dropped. Close reports what failed while keeping the entry.
	Close(err error) error
}

// StreamObserver is an Observer that also takes responses too large to be read
// whole (Client.Stream): their body is handed over piece by piece as the caller
// reads it. Client.Stream tells an Observer that is not a StreamObserver of its
// failed attempts only.
type StreamObserver interface {
	Observer
	ObserveStream(
		ctx context.Context,
		method, url string,
		reqBody []byte,
		status int,
		header http.Header,
		at time.Time,
	) StreamEntry
}

// errStatusBodyLimit bounds what is read of a failed streamed response.
const errStatusBodyLimit = 64 << 10

// Stream GETs url and hands the body to read as it arrives, without holding it (for
// files of gigabytes, which Do's MaxBody refuses). It uses the client's transport,
// User-Agent, host limiter and retry policy, with timeout in place of the client's
// (0: the client's): 429, 5xx and transport errors are retried before the body is
// read, never after. Any status but 200 is an error (*StatusError). Extra headers may
// be nil.
//
// Every response is reported to the Observer: failed attempts as in Do (their body
// read up to 64 KiB); the 200 body, when the Observer is a StreamObserver, is copied
// to its entry as read consumes it, and what read leaves unread is then read on into
// the entry, so that the whole body is kept even when read gives up on it (a parser
// bug is what an archive is for).
func (c *Client) Stream(
	ctx context.Context,
	url string,
	hdr http.Header,
	timeout time.Duration,
	read func(io.Reader) error,
) error {
	shown := RedactURL(url)
	hc := http.Client{Timeout: timeout}
	if c.HTTP != nil {
		hc = *c.HTTP
		if timeout > 0 {
			hc.Timeout = timeout
		}
	}
	var resp *http.Response
	var at time.Time
	err := c.Backoff.Do(ctx, func(attempt int) (bool, time.Duration, error) {
		if c.Limiter != nil {
			if err := c.Limiter.Wait(ctx, url); err != nil {
				return false, 0, err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, 0, fmt.Errorf("fetch: %s: %w", shown, scrubURL(err, url, shown))
		}
		for k, vs := range hdr {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		req.Header.Set("User-Agent", c.UserAgent)
		at = time.Now()
		r, err := hc.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return false, 0, fmt.Errorf("fetch: %s: %w", shown, ctx.Err())
			}
			err = scrubURL(err, url, shown)
			c.log("request failed", "url", shown, "attempt", attempt, "error", err.Error())
			return true, 0, fmt.Errorf("fetch: %w", err)
		}
		if r.StatusCode == http.StatusOK {
			resp = r
			return false, 0, nil
		}
		data, _ := io.ReadAll(io.LimitReader(r.Body, errStatusBodyLimit))
		r.Body.Close()
		if c.Observer != nil {
			c.Observer.Observe(
				ctx,
				http.MethodGet,
				url,
				nil,
				&Response{URL: url, Status: r.StatusCode, Header: r.Header, Body: data},
				at,
			)
		}
		c.log("response", "url", shown, "status", r.StatusCode, "attempt", attempt, "duration", time.Since(at))
		serr := &StatusError{URL: shown, Status: r.StatusCode}
		if retryable(r.StatusCode) {
			return true, retryAfter(r.Header.Get("Retry-After"), time.Now()), serr
		}
		return false, 0, serr
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	so, ok := c.Observer.(StreamObserver)
	if !ok {
		return read(resp.Body)
	}
	t := &tee{r: resp.Body, w: so.ObserveStream(ctx, http.MethodGet, url, nil, resp.StatusCode, resp.Header, at)}
	rerr := read(t)
	// The rest of the body goes to the entry too; the entry is kept only when the
	// body was read to its end.
	_, derr := io.Copy(io.Discard, t)
	if derr == nil {
		derr = t.rerr
	}
	if cerr := t.w.Close(derr); cerr != nil {
		c.log("stream not recorded", "url", shown, "error", cerr.Error())
	}
	c.log("response", "url", shown, "status", resp.StatusCode, "bytes", t.n, "duration", time.Since(at))
	return rerr
}

// tee copies what is read from r to w; a failing w is no longer written to (the
// entry reports it when closed), and never fails the read.
type tee struct {
	r    io.Reader
	w    StreamEntry
	werr bool
	rerr error // a read error other than io.EOF
	n    int64
}

func (t *tee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.n += int64(n)
	if n > 0 && !t.werr {
		if _, werr := t.w.Write(p[:n]); werr != nil {
			t.werr = true
		}
	}
	if err != nil && err != io.EOF && t.rerr == nil {
		t.rerr = err
	}
	return n, err
}

// Doer sends an HTTP request: *http.Client is one, and so is the AWS SDK's
// HTTPClient.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Observed returns a Doer that sends through d and tells obs of every response, its
// body read whole (up to maxBody bytes; 0: 64 MiB) and handed back to the caller
// unchanged, with the request body as sent. It is for clients that are not a
// fetch.Client (an SDK's) and whose responses are small pages; a body longer than
// maxBody is passed on but not reported. A nil obs returns d.
func Observed(d Doer, obs Observer, maxBody int64) Doer {
	if obs == nil {
		return d
	}
	if maxBody <= 0 {
		maxBody = 64 << 20
	}
	return observed{d: d, obs: obs, max: maxBody}
}

type observed struct {
	d   Doer
	obs Observer
	max int64
}

func (o observed) Do(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("fetch: reading request body: %w", err)
		}
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	at := time.Now()
	resp, err := o.d.Do(req)
	if err != nil {
		return resp, err
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, o.max+1))
	if rerr != nil || int64(len(data)) > o.max {
		// Not reported: what was read is handed back ahead of the rest (or of the
		// read error).
		rest := io.Reader(resp.Body)
		if rerr != nil {
			rest = errReader{rerr}
		}
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(data), rest), resp.Body}
		return resp, nil
	}
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	o.obs.Observe(req.Context(), req.Method, req.URL.String(), reqBody,
		&Response{URL: req.URL.String(), Status: resp.StatusCode, Header: resp.Header, Body: data}, at)
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

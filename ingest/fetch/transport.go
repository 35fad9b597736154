package fetch

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Transport returns an http.RoundTripper that sends every request through c, so that
// another HTTP library (the colly crawler of the page sources) gets the project's
// retries, Retry-After, User-Agent, per-host spacing, body cap, Observer (the raw
// archive), secret redaction and, for GET requests when c has a Cache, conditional
// requests. A 2xx HTML answer comes back decoded to UTF-8 from its declared charset,
// with a Content-Type saying so. Once retries are spent, an error status is returned
// as a response (a crawler reads robots.txt's 404 as "no rules"); a transport error,
// a body over the cap or a cancelled context is an error.
func (c *Client) Transport() http.RoundTripper { return transport{c} }

type transport struct{ c *Client }

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("fetch: reading request body: %w", err)
		}
	}
	var r *Response
	var err error
	if req.Method == http.MethodGet && t.c.Cache != nil {
		r, err = t.c.GetConditional(req.Context(), req.URL.String(), req.Header)
		var se *StatusError
		if err != nil && asStatus(err, &se) {
			r, err = &Response{URL: req.URL.String(), Status: se.Status, Header: http.Header{}}, nil
		}
	} else {
		r, err = t.c.do(req.Context(), req.Method, req.URL.String(), req.Header, body)
		if r != nil {
			err = nil
		}
	}
	if err != nil {
		return nil, err
	}
	if r.Status >= 200 && r.Status < 300 && isHTML(r) {
		if r, err = toUTF8(r); err != nil {
			return nil, err
		}
	}
	hdr := r.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Del("Content-Encoding") // the body is decoded
	hdr.Del("Content-Length")
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status)),
		StatusCode:    r.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hdr,
		Body:          io.NopCloser(bytes.NewReader(r.Body)),
		ContentLength: int64(len(r.Body)),
		Request:       req,
		Uncompressed:  true,
	}, nil
}

// isHTML reports whether a response is a web page: its Content-Type says HTML, or it
// says nothing and the body looks like HTML.
func isHTML(r *Response) bool {
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	if ct == "" {
		ct = strings.ToLower(http.DetectContentType(r.Body))
	}
	return strings.Contains(ct, "html")
}

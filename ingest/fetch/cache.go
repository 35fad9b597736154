package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sync"
)

// Cache keeps the validators (ETag, Last-Modified) and body of GET responses so that
// the next request for the same URL is conditional; a 304 answer is served from the
// cache. A nil *Cache caches nothing.
type Cache struct {
	Dir string
	mu  sync.Mutex
}

type cached struct {
	URL          string      `json:"url"`
	ETag         string      `json:"etag,omitempty"`
	LastModified string      `json:"last_modified,omitempty"`
	Header       http.Header `json:"header"`
	Body         []byte      `json:"body"`
}

func (c *Cache) path(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(c.Dir, hex.EncodeToString(sum[:16])+".json")
}

func (c *Cache) load(url string) (*cached, bool) {
	if c == nil || c.Dir == "" {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	data, err := os.ReadFile(c.path(url))
	if err != nil {
		return nil, false
	}
	var e cached
	if json.Unmarshal(data, &e) != nil || e.URL != url {
		return nil, false
	}
	return &e, true
}

func (c *Cache) store(r *Response) {
	if c == nil || c.Dir == "" {
		return
	}
	etag, lm := r.Header.Get("ETag"), r.Header.Get("Last-Modified")
	if etag == "" && lm == "" {
		return
	}
	data, err := json.Marshal(cached{URL: r.URL, ETag: etag, LastModified: lm, Header: r.Header, Body: r.Body})
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if os.MkdirAll(c.Dir, 0o700) != nil {
		return
	}
	tmp := c.path(r.URL) + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil {
		_ = os.Rename(tmp, c.path(r.URL))
	}
}

// GetConditional fetches url with If-None-Match / If-Modified-Since when the cache holds
// validators for it. A 304 answer returns the cached response with NotModified set.
func (c *Client) GetConditional(ctx context.Context, url string, hdr http.Header) (*Response, error) {
	prev, ok := c.Cache.load(url)
	h := hdr.Clone()
	if h == nil {
		h = http.Header{}
	}
	if ok {
		if prev.ETag != "" {
			h.Set("If-None-Match", prev.ETag)
		}
		if prev.LastModified != "" {
			h.Set("If-Modified-Since", prev.LastModified)
		}
	}
	r, err := c.Get(ctx, url, h)
	if err != nil {
		return nil, err
	}
	if r.Status == http.StatusNotModified {
		if !ok {
			return nil, &StatusError{URL: url, Status: r.Status}
		}
		return &Response{URL: url, Status: http.StatusOK, Header: prev.Header, Body: prev.Body, NotModified: true}, nil
	}
	c.Cache.store(r)
	return r, nil
}

package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/temoto/robotstxt"
)

// ErrRobots is returned when robots.txt disallows a page for gpuprice.
var ErrRobots = errors.New("fetch: disallowed by robots.txt")

// Robots fetches and caches each host's robots.txt once per process.
type Robots struct {
	mu    sync.Mutex
	hosts map[string]*robotstxt.RobotsData
}

// NewRobots returns an empty robots.txt cache.
func NewRobots() *Robots { return &Robots{hosts: map[string]*robotstxt.RobotsData{}} }

// agentToken is the product token robots.txt groups are matched against.
const agentToken = "gpuprice"

func (c *Client) allowed(ctx context.Context, raw string) error {
	if c.Robots == nil {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	key := u.Scheme + "://" + u.Host
	c.Robots.mu.Lock()
	data, ok := c.Robots.hosts[key]
	c.Robots.mu.Unlock()
	if !ok {
		data = c.fetchRobots(ctx, key)
		c.Robots.mu.Lock()
		c.Robots.hosts[key] = data
		c.Robots.mu.Unlock()
	}
	if data == nil {
		return nil
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if !data.TestAgent(path, agentToken) {
		return fmt.Errorf("%w: %s", ErrRobots, raw)
	}
	return nil
}

// fetchRobots returns the host's rules; nil (allow all) when it has none or they
// cannot be read (4xx means none, as robots.txt convention says).
func (c *Client) fetchRobots(ctx context.Context, base string) *robotstxt.RobotsData {
	r, err := c.Get(ctx, base+"/robots.txt", nil)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) && se.Status >= 400 && se.Status < 500 {
			return nil
		}
		c.log("robots.txt not readable; proceeding", "host", base, "error", err.Error())
		return nil
	}
	data, err := robotstxt.FromStatusAndBytes(http.StatusOK, r.Body)
	if err != nil || strings.TrimSpace(string(r.Body)) == "" {
		return nil
	}
	return data
}

// GetPage fetches a web page (not an API): robots.txt is honoured, the request is
// conditional when a Cache is set, and the body comes back in UTF-8 whatever the
// encoding the page declared (Content-Type charset or <meta charset>).
func (c *Client) GetPage(ctx context.Context, url string, hdr http.Header) (*Response, error) {
	if err := c.allowed(ctx, url); err != nil {
		return nil, err
	}
	if hdr == nil {
		hdr = http.Header{}
	}
	if hdr.Get("Accept") == "" {
		hdr.Set("Accept", "text/html,application/xhtml+xml")
	}
	r, err := c.GetConditional(ctx, url, hdr)
	if err != nil {
		return nil, err
	}
	return toUTF8(r)
}

// toUTF8 returns r with its body decoded to UTF-8 (see UTF8) and, when it was in
// another encoding, a copy of its header saying charset=utf-8.
func toUTF8(r *Response) (*Response, error) {
	body, name, err := UTF8(r.Body, r.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("fetch: %s: %w", RedactURL(r.URL), err)
	}
	if name == "utf-8" {
		return r, nil
	}
	out := *r
	out.Body = body
	out.Header = r.Header.Clone()
	out.Header.Set("Content-Type", "text/html; charset=utf-8")
	return &out, nil
}

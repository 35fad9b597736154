package fetch

import (
	"context"
	"net/url"
	"sync"
	"time"
)

// HostLimiter spaces requests to the same host by at least a minimum interval.
type HostLimiter struct {
	interval time.Duration
	mu       sync.Mutex
	next     map[string]time.Time
}

// NewHostLimiter returns a limiter allowing one request per interval per host.
func NewHostLimiter(interval time.Duration) *HostLimiter {
	return &HostLimiter{interval: interval, next: map[string]time.Time{}}
}

// Wait blocks until a request to rawURL's host may be sent, or ctx ends.
func (l *HostLimiter) Wait(ctx context.Context, rawURL string) error {
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		host = u.Host
	}
	l.mu.Lock()
	now := time.Now()
	at := l.next[host]
	if at.Before(now) {
		at = now
	}
	l.next[host] = at.Add(l.interval)
	l.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// MinInterval is the least time between two requests of c to one host (Options.
// MinInterval); 0 when requests are not spaced.
func (c *Client) MinInterval() time.Duration {
	if c.Limiter == nil {
		return 0
	}
	return c.Limiter.interval
}

// Package answer delivers the HTTP API's computed answers: a Cache computes each
// answer once however many clients ask (stale while revalidating, cleared when the
// store changes), each content coding (zstd, gzip) is made once per answer, and
// WriteTagged / WriteUntagged send it with its ETag, Vary and Content-Length, or
// 304. It knows nothing of what an answer says: serve's handlers make them.
package answer

import (
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Answer is a computed response body: its bytes, Content-Type and ETag (empty:
// none), as a handler makes it.
type Answer struct {
	Body        []byte
	ContentType string
	ETag        string
	at          time.Time
	gen         uint64
	// z holds the body compressed, made with the answer in the coding the client
	// that asked for it accepts (withCoding), else once when a client first asks.
	z *compressed
}

// Cache keeps computed answers for a short while and computes each one once
// however many clients ask for it at the same time. Every run of a source clears
// it, so that a collection's prices are served as soon as they are stored.
type Cache struct {
	mu      sync.Mutex
	entries map[string]Answer
	gen     uint64 // bumped by clear: answers computed before are not kept
	flight  singleflight.Group
	max     int
}

func NewCache(max int) *Cache {
	return &Cache{entries: map[string]Answer{}, max: max}
}

// get returns the answer of key no older than ttl, else computes it (once for
// every concurrent caller of the same key) and keeps it. An answer older than ttl
// but younger than twice ttl, and not cleared since, is returned at once while it is
// computed again in the background (stale while revalidating): clients do not all
// wait for a long computation every ttl. Cleared answers (the store changed) are
// never served.
func (c *Cache) Get(key string, ttl time.Duration, compute func() (Answer, error)) (Answer, error) {
	if ttl <= 0 {
		a, err := compute()
		a.z = &compressed{fast: true} // sent once: compressed, if at all, fast
		return a, err
	}
	c.mu.Lock()
	a, ok := c.entries[key]
	gen := c.gen
	c.mu.Unlock()
	age := time.Since(a.at)
	if ok && age < ttl {
		return a, nil
	}
	do := func() (any, error) { return c.compute(key, gen, compute) }
	if ok && age < 2*ttl {
		_ = c.flight.DoChan(key, do) // in the background; joins one under way
		return a, nil
	}
	v, err, _ := c.flight.Do(key, do)
	return v.(Answer), err
}

// compute computes key's answer and keeps it unless the cache was cleared since gen.
func (c *Cache) compute(key string, gen uint64, compute func() (Answer, error)) (Answer, error) {
	a, err := compute()
	if err != nil {
		return a, err
	}
	a.at, a.gen = time.Now(), gen
	if a.z == nil {
		a.z = &compressed{}
	}
	c.mu.Lock()
	if c.gen == gen {
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
		c.entries[key] = a
	}
	c.mu.Unlock()
	return a, nil
}

// clear forgets every answer (a source ran: prices may have changed).
func (c *Cache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

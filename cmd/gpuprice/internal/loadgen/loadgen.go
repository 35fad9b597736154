// Package loadgen drives an HTTP server with a fixed number of concurrent clients for
// a fixed time and reports what it measured: requests per second, latency
// percentiles and every error. `gpuprice loadtest` and the server benchmark use it.
package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Result is what one run measured against one URL.
type Result struct {
	URL      string        `json:"url"`
	Clients  int           `json:"clients"`
	Duration time.Duration `json:"duration"`
	Requests int           `json:"requests"`
	Errors   int           `json:"errors"` // transport errors and non-200 answers
	RPS      float64       `json:"requests_per_second"`
	P50      time.Duration `json:"p50"`
	P90      time.Duration `json:"p90"`
	P99      time.Duration `json:"p99"`
	Max      time.Duration `json:"max"`
	// Bytes is what came over the wire (compressed, when the server compressed);
	// Decoded, the bodies once decompressed.
	Bytes   int64 `json:"bytes"`
	Decoded int64 `json:"decoded_bytes"`
	// Gzipped is how many answers came gzip-compressed.
	Gzipped int `json:"gzipped"`
	// FirstError describes the first error seen, if any.
	FirstError string `json:"first_error,omitempty"`
}

func (r Result) String() string {
	per := func(n int64) int64 {
		if r.Requests == 0 {
			return 0
		}
		return n / int64(r.Requests)
	}
	return fmt.Sprintf("%s: %d clients × %s: %d requests, %d errors, %.0f req/s, p50 %s, p90 %s, p99 %s, max %s; %d gzip answers, %d bytes per answer on the wire, %d decoded",
		r.URL, r.Clients, r.Duration, r.Requests, r.Errors, r.RPS, r.P50.Round(time.Microsecond), r.P90.Round(time.Microsecond),
		r.P99.Round(time.Microsecond), r.Max.Round(time.Microsecond), r.Gzipped, per(r.Bytes), per(r.Decoded))
}

// Run sends GET url from clients goroutines, each waiting for its answer (read to
// the end) before the next request, for d. Requests say Accept-Encoding: gzip, as
// browsers and Go's default client do; gzip answers are decompressed to the end, and
// one that does not decompress, or whose Content-Length is not what came, is an
// error.
func Run(ctx context.Context, url string, clients int, d time.Duration) Result {
	tr := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients, IdleConnTimeout: time.Minute,
		DisableCompression: true} // asked and decoded here, to count both sizes
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu       sync.Mutex
		lat      []time.Duration
		errs     int
		bytes    int64
		decoded  int64
		gzipped  int
		firstErr string
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			var e int
			var n, dec int64
			var gz int
			var first string
			for ctx.Err() == nil {
				t0 := time.Now()
				req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, url, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := hc.Do(req)
				if err == nil {
					var wire, plain int64
					wire, plain, err = readBody(resp)
					resp.Body.Close()
					n += wire
					dec += plain
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
					if err == nil && resp.Header.Get("Content-Encoding") == "gzip" {
						gz++
					}
				}
				mine = append(mine, time.Since(t0))
				if err != nil {
					e++
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += e
			bytes += n
			decoded += dec
			gzipped += gz
			if firstErr == "" {
				firstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	r := Result{URL: url, Clients: clients, Duration: d, Requests: len(lat), Errors: errs, RPS: float64(len(lat)) / el.Seconds(),
		P50: pct(.50), P90: pct(.90), P99: pct(.99), Bytes: bytes, Decoded: decoded, Gzipped: gzipped, FirstError: firstErr}
	if len(lat) > 0 {
		r.Max = lat[len(lat)-1]
	}
	return r
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readBody reads resp's body to the end, decompressing a gzip one, and returns the
// bytes that came over the wire and the decoded bytes.
func readBody(resp *http.Response) (wire, plain int64, err error) {
	cr := &countingReader{r: resp.Body}
	switch enc := resp.Header.Get("Content-Encoding"); enc {
	case "", "identity":
		plain, err = io.Copy(io.Discard, cr)
	case "gzip":
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(cr); err == nil {
			if plain, err = io.Copy(io.Discard, zr); err == nil {
				err = zr.Close()
			}
		}
		if err != nil {
			err = fmt.Errorf("gzip answer: %w", err)
		}
	default:
		err = fmt.Errorf("unasked Content-Encoding %q", enc)
	}
	if err == nil && resp.ContentLength >= 0 && cr.n != resp.ContentLength {
		err = fmt.Errorf("Content-Length %d, %d bytes came", resp.ContentLength, cr.n)
	}
	return cr.n, plain, err
}

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
	Bytes    int64         `json:"bytes"`
	// FirstError describes the first error seen, if any.
	FirstError string `json:"first_error,omitempty"`
}

func (r Result) String() string {
	return fmt.Sprintf("%s: %d clients × %s: %d requests, %d errors, %.0f req/s, p50 %s, p90 %s, p99 %s, max %s",
		r.URL, r.Clients, r.Duration, r.Requests, r.Errors, r.RPS, r.P50.Round(time.Microsecond), r.P90.Round(time.Microsecond),
		r.P99.Round(time.Microsecond), r.Max.Round(time.Microsecond))
}

// Run sends GET url from clients goroutines, each waiting for its answer (read to
// the end) before the next request, for d.
func Run(ctx context.Context, url string, clients int, d time.Duration) Result {
	tr := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu       sync.Mutex
		lat      []time.Duration
		errs     int
		bytes    int64
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
			var n int64
			var first string
			for ctx.Err() == nil {
				t0 := time.Now()
				req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, url, nil)
				resp, err := hc.Do(req)
				if err == nil {
					var c int64
					c, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					n += c
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
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
		P50: pct(.50), P90: pct(.90), P99: pct(.99), Bytes: bytes, FirstError: firstErr}
	if len(lat) > 0 {
		r.Max = lat[len(lat)-1]
	}
	return r
}

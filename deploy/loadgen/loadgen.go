// Package loadgen drives an HTTP server with a fixed number of concurrent clients for
// a fixed time and reports what it measured: requests per second, latency
// percentiles and every error. `gpuprice loadtest` and the server benchmark use it.
package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Result is what one run measured against one URL.
type Result struct {
	URL      string        `json:"url"`
	Clients  int           `json:"clients"`
	Duration time.Duration `json:"duration"`
	// AcceptEncoding is what the requests said in Accept-Encoding.
	AcceptEncoding string        `json:"accept_encoding"`
	Requests       int           `json:"requests"`
	Errors         int           `json:"errors"` // transport errors, non-200 answers and bodies that do not decode
	RPS            float64       `json:"requests_per_second"`
	P50            time.Duration `json:"p50"`
	P90            time.Duration `json:"p90"`
	P99            time.Duration `json:"p99"`
	Max            time.Duration `json:"max"`
	// Bytes is what came over the wire (compressed, when the server compressed);
	// Decoded, the bodies once decompressed.
	Bytes   int64 `json:"bytes"`
	Decoded int64 `json:"decoded_bytes"`
	// Gzipped and Zstd are how many answers came gzip- and zstd-compressed (and
	// decoded).
	Gzipped int `json:"gzipped"`
	Zstd    int `json:"zstd"`
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
	return fmt.Sprintf(
		"%s: %d clients × %s: %d requests, %d errors, %.0f req/s, p50 %s, p90 %s, p99 %s, max %s; Accept-Encoding %q: %d "+
			"zstd and %d gzip answers, %d bytes per answer on the wire, %d decoded",
		r.URL,
		r.Clients,
		r.Duration,
		r.Requests,
		r.Errors,
		r.RPS,
		r.P50.Round(time.Microsecond),
		r.P90.Round(time.Microsecond),
		r.P99.Round(
			time.Microsecond,
		),
		r.Max.Round(time.Microsecond),
		r.AcceptEncoding,
		r.Zstd,
		r.Gzipped,
		per(r.Bytes),
		per(r.Decoded),
	)
}

// DefaultAcceptEncoding is what Run's requests say in Accept-Encoding: the codings
// it decodes, as browsers name zstd and gzip ("gzip, deflate, br, zstd").
const DefaultAcceptEncoding = "zstd, gzip"

// Run sends GET url from clients goroutines, each waiting for its answer (read to
// the end) before the next request, for d, with DefaultAcceptEncoding.
func Run(ctx context.Context, url string, clients int, d time.Duration) Result {
	return RunAccepting(ctx, url, clients, d, DefaultAcceptEncoding)
}

// RunAccepting is Run with the requests' Accept-Encoding ("" sends none). Every
// answer is read to its end and decoded to its end (zstd or gzip: checksums and
// lengths checked); one that does not decode, has bytes after its compressed
// stream, comes in a coding not asked for, or whose Content-Length is not what
// came, is an error.
func RunAccepting(ctx context.Context, url string, clients int, d time.Duration, acceptEncoding string) Result {
	tr := &http.Transport{
		MaxIdleConns:        clients,
		MaxIdleConnsPerHost: clients,
		MaxConnsPerHost:     clients,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true, // asked and decoded here, to count both sizes
		ReadBufferSize:      readBuffer,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu       sync.Mutex
		lat      []time.Duration
		total    Result
		firstErr string
		wg       sync.WaitGroup
	)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			var r Result // this client's counts
			var first string
			var wire bytes.Buffer // this client's, reused for every answer
			for ctx.Err() == nil {
				t0 := time.Now()
				req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, url, nil)
				if acceptEncoding != "" {
					req.Header.Set("Accept-Encoding", acceptEncoding)
				}
				resp, err := hc.Do(req)
				if err == nil {
					err = readBody(resp, &wire, &r)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				mine = append(mine, time.Since(t0))
				if err != nil {
					r.Errors++
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			total.Errors += r.Errors
			total.Bytes += r.Bytes
			total.Decoded += r.Decoded
			total.Gzipped += r.Gzipped
			total.Zstd += r.Zstd
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
	r := total
	r.URL, r.Clients, r.Duration, r.AcceptEncoding = url, clients, d, acceptEncoding
	r.Requests, r.RPS = len(lat), float64(len(lat))/el.Seconds()
	r.P50, r.P90, r.P99, r.FirstError = pct(.50), pct(.90), pct(.99), firstErr
	if len(lat) > 0 {
		r.Max = lat[len(lat)-1]
	}
	return r
}

// readBuffer is the size of the connection's read buffer: a 64 KB answer takes a
// few reads, not sixteen.
const readBuffer = 64 << 10

// Decoders are kept and reused (reset, not allocated again), as a browser keeps
// its inflater: the load generator shares the server's cores, and what it
// allocates per answer is time the server does not get. A compressed answer is
// read whole (tens of KB), then decoded from memory, so a decoder is held only
// while it decodes and the pools stay about as large as the number of cores.
var (
	gzipReaders  sync.Pool // *gzip.Reader
	zstdDecoders = sync.Pool{New: func() any {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(8<<20))
		if err != nil {
			panic(err) // only from bad options
		}
		return d
	}}
)

// readBody reads resp's body to the end into wire (compressed answers) or through
// it (identity ones), decodes it to the end, and adds what came and what it decoded
// to r's counts.
func readBody(resp *http.Response, wire *bytes.Buffer, r *Result) error {
	enc := resp.Header.Get("Content-Encoding")
	wire.Reset()
	var n, plain int64
	var err error
	switch enc {
	case "", "identity":
		n, err = io.CopyBuffer(io.Discard, resp.Body, nil)
		plain = n
	case "gzip", "zstd":
		if n, err = wire.ReadFrom(resp.Body); err != nil {
			break
		}
		src := bytes.NewReader(wire.Bytes())
		if enc == "gzip" {
			plain, err = gunzip(src)
		} else {
			plain, err = unzstd(src)
		}
		if err == nil && src.Len() > 0 {
			err = fmt.Errorf("%d bytes after the compressed stream", src.Len())
		}
		if err != nil {
			err = fmt.Errorf("%s answer: %w", enc, err)
		}
	default:
		err = fmt.Errorf("unasked Content-Encoding %q", enc)
	}
	r.Bytes += n
	r.Decoded += plain
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("Content-Length %d, %d bytes came", resp.ContentLength, n)
	}
	if err == nil && enc == "gzip" {
		r.Gzipped++
	} else if err == nil && enc == "zstd" {
		r.Zstd++
	}
	return err
}

// gunzip decodes one gzip stream from src to its end (CRC-32 and length checked
// against its trailer) and returns the decoded length.
func gunzip(src *bytes.Reader) (int64, error) {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(src)
	} else {
		err = zr.Reset(src)
	}
	if err != nil {
		return 0, err
	}
	defer gzipReaders.Put(zr)
	zr.Multistream(false)
	n, err := io.Copy(io.Discard, zr)
	if err == nil {
		err = zr.Close()
	}
	return n, err
}

// unzstd decodes the zstd frames of src to their end (checksums and content sizes
// checked) and returns the decoded length.
func unzstd(src *bytes.Reader) (int64, error) {
	d := zstdDecoders.Get().(*zstd.Decoder)
	defer zstdDecoders.Put(d)
	if err := d.Reset(src); err != nil {
		return 0, err
	}
	return io.Copy(io.Discard, d)
}

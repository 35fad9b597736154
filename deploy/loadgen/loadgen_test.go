package loadgen

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func TestRunCountsRequestsAndErrors(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%10 == 0 {
			http.Error(w, "nope", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	r := Run(context.Background(), srv.URL, 4, 200*time.Millisecond)
	if r.Requests == 0 || int64(r.Requests) != n.Load() {
		t.Fatalf("requests %d, server saw %d", r.Requests, n.Load())
	}
	if want := r.Requests / 10; r.Errors < want-4 || r.Errors > want+4 || !strings.Contains(r.FirstError, "503") {
		t.Errorf("errors %d of %d (%q), want about one in ten", r.Errors, r.Requests, r.FirstError)
	}
	if r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 || r.RPS <= 0 {
		t.Errorf("figures: %+v", r)
	}
}

func TestRunAsksGzipAndCountsBadBodies(t *testing.T) {
	plain := []byte(strings.Repeat(`{"gpu":"H100","price":2.49},`, 200))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(plain)
	zw.Close()
	good := buf.Bytes()
	var n, asked atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") == "gzip" {
			asked.Add(1)
		}
		w.Header().Set("Content-Encoding", "gzip")
		if n.Add(1)%5 == 0 {
			w.Write(good[:len(good)/2]) // a truncated gzip stream
			return
		}
		w.Write(good)
	}))
	defer srv.Close()
	r := RunAccepting(context.Background(), srv.URL, 4, 200*time.Millisecond, "gzip")
	if r.Requests == 0 || int64(r.Requests) != asked.Load() {
		t.Fatalf("requests %d, %d asked for gzip", r.Requests, asked.Load())
	}
	if want := r.Requests / 5; r.Errors < want-4 || r.Errors > want+4 || !strings.Contains(r.FirstError, "gzip") {
		t.Errorf("errors %d of %d (%q), want about one in five, from gzip", r.Errors, r.Requests, r.FirstError)
	}
	if ok := int64(r.Requests - r.Errors); r.Gzipped != int(ok) || r.Decoded < ok*int64(len(plain)) || r.Bytes >= r.Decoded {
		t.Errorf("gzipped %d, decoded %d, wire %d bytes of %d good answers", r.Gzipped, r.Decoded, r.Bytes, ok)
	}
}

// By default answers are asked in zstd or gzip; a zstd answer is decoded to its end
// (a truncated frame, a frame with a bad checksum or bytes after it are errors), an
// identity answer is read to its end.
func TestRunDecodesZstd(t *testing.T) {
	plain := []byte(strings.Repeat(`{"gpu":"H100","price":2.49},`, 2000))
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	good := enc.EncodeAll(plain, nil)
	corrupt := bytes.Clone(good)
	corrupt[len(corrupt)-1] ^= 0xff // the content checksum
	bad := [][]byte{good[:len(good)/2], corrupt, append(bytes.Clone(good), "junk"...)}
	var n atomic.Int64
	var accept atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept.Store(r.Header.Get("Accept-Encoding"))
		i := n.Add(1)
		if i%7 == 0 {
			w.Write(plain) // identity: also fine
			return
		}
		w.Header().Set("Content-Encoding", "zstd")
		if i%5 == 0 {
			w.Write(bad[(i/5)%3])
			return
		}
		w.Write(good)
	}))
	defer srv.Close()
	r := Run(context.Background(), srv.URL, 4, 300*time.Millisecond)
	if got := accept.Load(); got != DefaultAcceptEncoding || !strings.Contains(DefaultAcceptEncoding, "zstd") {
		t.Errorf("Accept-Encoding %q", got)
	}
	wantErrs, wantZstd := 0, 0
	for i := int64(1); i <= n.Load(); i++ {
		switch {
		case i%7 == 0:
		case i%5 == 0:
			wantErrs++
		default:
			wantZstd++
		}
	}
	if r.Requests == 0 || int64(r.Requests) != n.Load() || r.Errors < wantErrs-4 || r.Errors > wantErrs+4 || !strings.Contains(r.FirstError, "zstd") {
		t.Errorf("%d requests (server saw %d), %d errors (%q), want about %d", r.Requests, n.Load(), r.Errors, r.FirstError, wantErrs)
	}
	ok := int64(r.Requests - r.Errors)
	if r.Zstd < wantZstd-4 || r.Zstd > wantZstd+4 || r.Decoded < ok*int64(len(plain)) || r.Bytes >= r.Decoded {
		t.Errorf("zstd %d, decoded %d, wire %d bytes of %d good answers", r.Zstd, r.Decoded, r.Bytes, ok)
	}
}

package answer

import (
	"bytes"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{
		"":                      false,
		"gzip":                  true,
		"gzip, deflate, br":     true,
		"GZIP":                  true,
		"x-gzip":                true,
		"gzip;q=0":              false,
		"gzip; q=0.0, br":       false,
		"br;q=1.0, gzip;q=0.5":  true,
		"identity":              false,
		"*":                     true,
		"*;q=0":                 false,
		"gzip;q=0, *":           false,
		"br, *;q=0.1":           true,
		"deflate, gzip;q=bogus": false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if ae != "" {
			r.Header.Set("Accept-Encoding", ae)
		}
		if got := acceptsGzip(r); got != want {
			t.Errorf("Accept-Encoding %q: accepts gzip %v, want %v", ae, got, want)
		}
	}
}

func TestETagMatches(t *testing.T) {
	for _, c := range []struct {
		inm, etag string
		want      bool
	}{
		{`"a"`, `"a"`, true},
		{`W/"a"`, `"a"`, true},
		{`"b", W/"a"`, `"a"`, true},
		{`*`, `"a"`, true},
		{`"b"`, `"a"`, false},
		{``, `"a"`, false},
		{`"a"`, ``, false},
	} {
		if got := etagMatches(c.inm, c.etag); got != c.want {
			t.Errorf("If-None-Match %s, ETag %s: %v", c.inm, c.etag, got)
		}
	}
}

func TestNegotiate(t *testing.T) {
	for ae, want := range map[string]coding{
		"":                          identity,
		"gzip":                      codingGzip,
		"zstd":                      codingZstd,
		"gzip, deflate, br, zstd":   codingZstd, // what browsers send
		"gzip, deflate, br":         codingGzip,
		"zstd;q=0.5, gzip":          codingGzip,
		"zstd, gzip;q=0.5":          codingZstd,
		"zstd;q=0, gzip":            codingGzip,
		"ZSTD;Q=1":                  codingZstd,
		"*":                         codingGzip, // zstd only when named
		"*, zstd":                   codingZstd,
		"*;q=0":                     identity,
		"zstd;q=0, *;q=0":           identity,
		"br, identity":              identity,
		"zstd;q=bogus, gzip;q=0.1":  codingGzip,
		"gzip;q=0.8, zstd;q=0.8":    codingZstd,
		"gzip;q=0.9, zstd;q=0.8":    codingGzip,
		"x-gzip;q=0.9, zstd;q=0.8":  codingGzip,
		"identity;q=1, zstd;q=0.01": codingZstd,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if ae != "" {
			r.Header.Set("Accept-Encoding", ae)
		}
		if got := negotiate(r); got != want {
			t.Errorf("Accept-Encoding %q: %q, want %q", ae, got, want)
		}
	}
}

// Every coding decodes to the very bytes of the answer, at every level; zstd frames
// stay within the 8 MB window RFC 9659 allows, even for an answer larger than that.
func TestCompressedRoundTrip(t *testing.T) {
	var big bytes.Buffer
	for i := 0; big.Len() < 9<<20; i++ {
		fmt.Fprintf(&big, `{"gpu":"H100-SXM-80GB","sku":"sku-%d","price_usd_gpu_hour":%d.%04d},`, i, i%7, i%9973)
	}
	for _, c := range []struct {
		body       []byte
		fast, gzip bool // fast: an answer sent once, at the fastest levels
	}{
		{[]byte(strings.Repeat(`{"gpu":"H100","price":2.49},`, 500)), false, true},
		{big.Bytes()[:1<<20], false, true},
		{big.Bytes()[:1<<20], true, true},
		{big.Bytes(), false, false}, // for zstd's window (gzip level 9 of 9 MB takes seconds)
	} {
		body := c.body
		z := &compressed{fast: c.fast}
		if c.gzip {
			gz, err := z.of(codingGzip, body)
			if err != nil || len(gz) >= len(body)/4 {
				t.Fatalf("gzip: %d bytes of %d, %v", len(gz), len(body), err)
			}
			zr, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(zr); err != nil || !bytes.Equal(got, body) {
				t.Errorf("gzip: decodes to %d bytes (%v), want %d", len(got), err, len(body))
			}
		}
		zs, err := z.of(codingZstd, body)
		if err != nil || len(zs) >= len(body)/4 {
			t.Fatalf("zstd: %d bytes of %d, %v", len(zs), len(body), err)
		}
		dec, err := zstd.NewReader(bytes.NewReader(zs), zstd.WithDecoderMaxWindow(8<<20), zstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(dec); err != nil || !bytes.Equal(got, body) {
			t.Errorf("zstd (8 MB window): decodes to %d bytes (%v), want %d", len(got), err, len(body))
		}
		dec.Close()
		if again, _ := z.of(codingZstd, body); &again[0] != &zs[0] {
			t.Error("compressed again: not kept")
		}
	}
}

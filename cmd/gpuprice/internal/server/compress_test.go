package server

import (
	"net/http/httptest"
	"testing"
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

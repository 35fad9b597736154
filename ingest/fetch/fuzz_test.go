package fetch

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzUTF8 feeds arbitrary bodies and Content-Types to the page decoder: it must never
// panic, and whatever it returns after a non-UTF-8 decode is valid UTF-8.
func FuzzUTF8(f *testing.F) {
	f.Add([]byte("<p>Zürich</p>"), "text/html")
	f.Add([]byte("<meta charset=\"iso-8859-1\"><p>Z\xfcrich \x80</p>"), "text/html")
	f.Add([]byte("\xef\xbb\xbf<p>bom</p>"), "text/html; charset=windows-1252")
	f.Add([]byte("\xff\xfe<\x00p\x00>\x00"), "")
	f.Add([]byte("<p>\x81\x8d\x8f</p>"), "text/html; charset=shift_jis")
	f.Fuzz(func(t *testing.T, body []byte, ctype string) {
		out, name, err := UTF8(body, ctype)
		if err != nil {
			return
		}
		if name != "utf-8" && !utf8.Valid(out) {
			t.Fatalf("decoded from %s to invalid UTF-8: %q", name, out)
		}
	})
}

// FuzzRedactURL: a credential-named query parameter never survives redaction.
func FuzzRedactURL(f *testing.F) {
	f.Add("https://h/p?api_key=abc&page=2")
	f.Add("https://u:pw@h/p?X-Amz-Signature=s&token=t")
	f.Add("%zz://bad")
	f.Fuzz(func(t *testing.T, raw string) {
		got := RedactURL(raw)
		u, err := url.Parse(got)
		if err != nil {
			return
		}
		if pw, ok := u.User.Password(); ok && pw != Redacted {
			t.Fatalf("password kept: %q → %q", raw, got)
		}
		for _, p := range strings.Split(u.RawQuery, "&") {
			k, v, ok := strings.Cut(p, "=")
			if dk, err := url.QueryUnescape(k); err == nil {
				k = dk
			}
			if ok && sensitiveParam(k) && v != Redacted {
				t.Fatalf("parameter %q kept: %q → %q", k, raw, got)
			}
		}
	})
}

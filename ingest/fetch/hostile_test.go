package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"
)

func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return b.Bytes()
}

// A gzip bomb sent with Content-Encoding: gzip is decompressed by the transport and
// must be cut at MaxBody, however small it is on the wire.
func TestGzipBombCutAtMaxBody(t *testing.T) {
	bomb := gz(t, make([]byte, 8<<20)) // 8 MiB of zeros, ~8 KiB on the wire
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/encoded" {
			w.Header().Set("Content-Encoding", "gzip")
		} else {
			w.Header().Set("Content-Type", "application/gzip")
		}
		_, _ = w.Write(bomb)
	}))
	defer srv.Close()
	o := fast()
	o.MaxBody = 1 << 20
	c := New(o)
	if len(bomb) > int(o.MaxBody) {
		t.Fatalf("bomb of %d bytes is no bomb", len(bomb))
	}
	if _, err := c.Get(context.Background(), srv.URL+"/encoded", nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Content-Encoding gzip bomb: err = %v, want ErrTooLarge", err)
	}
	// A .gz body is not decoded by the transport: it arrives compressed, under the
	// cap, and opening it with Gunzip under the same cap fails.
	r, err := c.Get(context.Background(), srv.URL+"/file.gz", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Gunzip(r.Body, o.MaxBody); !errors.Is(err, ErrBomb) {
		t.Fatalf(".gz bomb: err = %v, want ErrBomb", err)
	}
	// Nested: a gzip inside a gzip is small once opened, and a bomb once opened again.
	nested := gz(t, bomb)
	inner, err := Gunzip(nested, o.MaxBody)
	if err != nil || !bytes.Equal(inner, bomb) {
		t.Fatalf("outer layer: %v", err)
	}
	if _, err := Gunzip(inner, o.MaxBody); !errors.Is(err, ErrBomb) {
		t.Fatalf("inner layer: err = %v, want ErrBomb", err)
	}
	if out, err := Gunzip(gz(t, []byte("small")), o.MaxBody); err != nil || string(out) != "small" {
		t.Fatalf("small gzip: %q %v", out, err)
	}
}

func TestPagesAreDecodedToUTF8(t *testing.T) {
	latin1 := func(s string) []byte {
		b, err := charmap.ISO8859_1.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cp1252 := func(s string) []byte {
		b, err := charmap.Windows1252.NewEncoder().Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pages := map[string]struct {
		ctype string
		body  []byte
		want  string
	}{
		"/header-latin1": {"text/html; charset=ISO-8859-1", latin1("<p>Zürich: 2,49 EUR/h, café</p>"), "<p>Zürich: 2,49 EUR/h, café</p>"},
		"/meta-cp1252": {"text/html", cp1252(`<html><head><meta charset="windows-1252"></head><body>€2.49 – H100</body></html>`),
			`<html><head><meta charset="windows-1252"></head><body>€2.49 – H100</body></html>`},
		"/http-equiv": {"text/html", latin1(`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><td>1.234,56 Ø</td>`),
			`<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"><td>1.234,56 Ø</td>`},
		"/utf8-undeclared": {"text/html", []byte("<p>€2.49 — Zürich</p>"), "<p>€2.49 — Zürich</p>"},
		// Declares Latin-1 in a meta but is UTF-8 in fact: kept as it is.
		"/meta-lies": {"text/html", []byte(`<meta charset="iso-8859-1"><p>€2.49</p>`), `<meta charset="iso-8859-1"><p>€2.49</p>`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", p.ctype)
		_, _ = w.Write(p.body)
	}))
	defer srv.Close()
	c := New(fast())
	for path, p := range pages {
		_, body := pageGet(t, c, srv.URL+path)
		if string(body) != p.want {
			t.Errorf("%s: body %q, want %q", path, body, p.want)
		}
	}
}

func TestSecretsRedactedFromErrorsAndLogs(t *testing.T) {
	const secret = "sk-live-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("bad key " + r.URL.Query().Get("api_key")))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	o := fast()
	o.Logger = slogTo(&logs)
	c := New(o)
	_, err := c.Get(context.Background(), srv.URL+"/q?page=2&api_key="+secret+"&pageToken=abc", nil)
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
		t.Fatalf("secret leaked: err %v\nlogs %s", err, logs.String())
	}
	if !strings.Contains(err.Error(), "api_key=REDACTED") || !strings.Contains(err.Error(), "pageToken=abc") {
		t.Errorf("error does not name the redacted URL: %v", err)
	}
	// A transport error quotes the URL too.
	_, err = c.Get(context.Background(), "http://127.0.0.1:1/x?key="+secret, nil)
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
		t.Fatalf("secret leaked from a transport error: %v", err)
	}
	for in, want := range map[string]string{
		"https://u:pw@h/p?x=1":                             "https://u:REDACTED@h/p?x=1",
		"https://h/p?b=2&a=1":                              "https://h/p?b=2&a=1",
		"https://h/p?X-Amz-Signature=abc&X-Amz-Date=1":     "https://h/p?X-Amz-Signature=REDACTED&X-Amz-Date=1",
		"https://h/p?access_token=t&pageToken=next&key=k2": "https://h/p?access_token=REDACTED&pageToken=next&key=REDACTED",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	h := RedactHeader(http.Header{"Authorization": {"Bearer x"}, "X-Goog-Api-Key": {"k"}, "Set-Cookie": {"s=1"},
		"Content-Type": {"application/json"}})
	if h.Get("Authorization") != Redacted || h.Get("X-Goog-Api-Key") != Redacted || h.Get("Set-Cookie") != Redacted ||
		h.Get("Content-Type") != "application/json" {
		t.Errorf("RedactHeader: %v", h)
	}
}

// A 429 with Retry-After is waited out before the next try.
func TestRetryAfterWaitedOnTheWire(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		n := len(at)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	defer srv.Close()
	o := fast()
	o.Backoff.Max = 5 * time.Second
	if _, err := New(o).Get(context.Background(), srv.URL, nil); err != nil {
		t.Fatal(err)
	}
	if len(at) != 2 || at[1].Sub(at[0]) < time.Second {
		t.Fatalf("requests at %v: want two, at least Retry-After (1s) apart", at)
	}
}

func slogTo(w *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

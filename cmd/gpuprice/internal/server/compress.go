package server

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// gzipMin is the smallest answer sent gzip-compressed: below it, compressing
// saves less than it costs.
const gzipMin = 1024

// gzipped is an answer's gzip-compressed body, compressed once (by the first client
// that accepts gzip) and kept with the answer it was made from.
type gzipped struct {
	once sync.Once
	body []byte
	err  error
}

func (g *gzipped) of(body []byte) ([]byte, error) {
	g.once.Do(func() {
		var buf bytes.Buffer
		buf.Grow(len(body) / 4)
		zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		if err == nil {
			if _, err = zw.Write(body); err == nil {
				err = zw.Close()
			}
		}
		g.body, g.err = buf.Bytes(), err
	})
	return g.body, g.err
}

// acceptsGzip reports whether the request's Accept-Encoding accepts gzip
// (RFC 9110 §12.5.3): "gzip" (or "x-gzip") with a non-zero q, or "*" with a
// non-zero q when gzip is not named.
func acceptsGzip(r *http.Request) bool {
	gz, star := -1.0, -1.0
	for _, h := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(h, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						q = f
					} else {
						q = 0
					}
				}
			}
			switch name {
			case "gzip", "x-gzip":
				gz = max(gz, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if gz >= 0 {
		return gz > 0
	}
	return star > 0
}

// etagMatches reports whether If-None-Match names etag, with the weak comparison
// RFC 9110 §13.1.2 asks for (W/"x" matches "x"), so that the weak tag of a gzip
// answer revalidates either representation.
func etagMatches(ifNoneMatch, etag string) bool {
	if ifNoneMatch == "" || etag == "" {
		return false
	}
	opaque := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == opaque {
			return true
		}
	}
	return false
}

// answerETag is the ETag of the answer writeAnswer sends r: ans's, made weak (as
// nginx does) when it is sent gzip-compressed, whose bytes differ from the identity
// answer's.
func answerETag(r *http.Request, ans answer) string {
	if ans.etag != "" && sendsGzip(r, ans) && !strings.HasPrefix(ans.etag, "W/") {
		return "W/" + ans.etag
	}
	return ans.etag
}

// sendsGzip reports whether writeAnswer sends r ans gzip-compressed.
func sendsGzip(r *http.Request, ans answer) bool {
	return ans.gz != nil && len(ans.body) >= gzipMin && acceptsGzip(r)
}

// writeAnswer writes ans's body: gzip-compressed (once per answer) when the client
// accepts gzip and the body is large enough, else as it is; always with
// Vary: Accept-Encoding and the Content-Length of what is sent. Headers set before
// (Content-Type, Cache-Control, ETag from answerETag) are kept.
func writeAnswer(w http.ResponseWriter, r *http.Request, ans answer) {
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	body := ans.body
	if sendsGzip(r, ans) {
		if gz, err := ans.gz.of(body); err == nil {
			body = gz
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// writeTagged writes ans with its ETag and cacheControl, or 304 Not Modified when
// the request's If-None-Match holds that tag (weak or strong).
func writeTagged(w http.ResponseWriter, r *http.Request, ans answer, cacheControl string) {
	h := w.Header()
	h.Set("ETag", answerETag(r, ans))
	h.Set("Cache-Control", cacheControl)
	if etagMatches(r.Header.Get("If-None-Match"), ans.etag) {
		h.Set("Vary", "Accept-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeAnswer(w, r, ans)
}

package answer

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// compressMin is the smallest answer sent compressed: below it, compressing saves
// less than it costs.
const compressMin = 1024

// gzipLevel is the gzip level of answers. An answer is compressed once and sent
// many times, and every client inflates it: level 9 makes the JSON list of prices
// 17 % smaller than the default level and inflates about 1.5 times faster (fewer,
// longer matches), for about 25 ms more once per 1.7 MB answer (BENCHMARKS.md,
// "The HTTP server under load").
const gzipLevel = gzip.BestCompression

// zstdWindow is the largest window of the zstd frames sent: RFC 9659 §3 limits the
// "zstd" content coding to 8 MB, which browsers enforce.
const zstdWindow = 8 << 20

// zstdEncoder compresses answers for clients that accept zstd (RFC 8878; Chrome
// asks for it since version 123): about as small as gzip's best level, 6 times cheaper to make,
// and 1.5 to 3 times cheaper to decode. EncodeAll is safe for concurrent use.
var zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression),
	zstd.WithWindowSize(zstdWindow), zstd.WithEncoderCRC(true))

// zstdFast compresses answers that are sent once (compressed.fast).
var zstdFast, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
	zstd.WithWindowSize(zstdWindow), zstd.WithEncoderCRC(true))

// coding is a content coding of an answer.
type coding int

const (
	identity coding = iota
	codingGzip
	codingZstd
)

func (c coding) String() string { return [...]string{"", "gzip", "zstd"}[c] }

// compressed holds an answer's body in each content coding, each made once (when
// the answer is computed for a client that asks for it, else by the first client
// that does) and kept with the answer it was made from. An answer that is not kept
// (the server's cache is off) is sent once: fast compresses it at the fastest
// levels rather than spend per request what a kept answer spends once.
type compressed struct {
	gzip, zstd lazy
	fast       bool
}

type lazy struct {
	once sync.Once
	body []byte
	err  error
}

// of returns body in coding c (made once).
func (z *compressed) of(c coding, body []byte) ([]byte, error) {
	switch c {
	case codingGzip:
		z.gzip.once.Do(func() {
			var buf bytes.Buffer
			buf.Grow(len(body) / 8)
			level := gzipLevel
			if z.fast {
				level = gzip.BestSpeed
			}
			zw, err := gzip.NewWriterLevel(&buf, level)
			if err == nil {
				if _, err = zw.Write(body); err == nil {
					err = zw.Close()
				}
			}
			z.gzip.body, z.gzip.err = buf.Bytes(), err
		})
		return z.gzip.body, z.gzip.err
	case codingZstd:
		z.zstd.once.Do(func() {
			enc := zstdEncoder
			if z.fast {
				enc = zstdFast
			}
			z.zstd.body = enc.EncodeAll(body, make([]byte, 0, len(body)/8))
		})
		return z.zstd.body, z.zstd.err
	}
	return body, nil
}

// withCoding returns a with its body made now in the content coding the request it
// is computed for accepts (when it is large enough): it is then cached compressed,
// and the clients asking for it while it is kept, or while it is recomputed in the
// background, never wait for the compression.
func WithCoding(r *http.Request, a Answer) Answer {
	a.z = &compressed{}
	if c := sendsCoding(r, a); c != identity {
		_, _ = a.z.of(c, a.Body)
	}
	return a
}

// negotiate picks the content coding of an answer to r from its Accept-Encoding
// (RFC 9110 §12.5.3): the accepted coding of highest q among zstd and gzip, zstd on
// a tie (smaller and cheaper to decode); identity when neither is accepted.
func negotiate(r *http.Request) coding {
	gz, zs := acceptQ(r)
	switch {
	case zs > 0 && zs >= gz:
		return codingZstd
	case gz > 0:
		return codingGzip
	}
	return identity
}

// acceptsGzip reports whether the request's Accept-Encoding accepts gzip.
func acceptsGzip(r *http.Request) bool {
	gz, _ := acceptQ(r)
	return gz > 0
}

// acceptQ returns the q values the request's Accept-Encoding gives gzip (or x-gzip)
// and zstd: their own, else that of "*" for gzip (zstd only when named, as it is
// newer), else -1 (not accepted). A q that does not parse is 0.
func acceptQ(r *http.Request) (gz, zs float64) {
	gz, zs, star := -1.0, -1.0, -1.0
	for _, h := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(h, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
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
			case "zstd":
				zs = max(zs, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if gz < 0 {
		gz = star
	}
	return gz, zs
}

// etagMatches reports whether If-None-Match names etag, with the weak comparison
// RFC 9110 §13.1.2 asks for (W/"x" matches "x"), so that the weak tag of a
// compressed answer revalidates every representation.
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

// answerETag is the ETag of ans sent in coding c: ans's, made weak (as nginx does)
// when it is sent compressed, whose bytes differ from the identity answer's.
func answerETag(c coding, ans Answer) string {
	if ans.ETag != "" && c != identity && !strings.HasPrefix(ans.ETag, "W/") {
		return "W/" + ans.ETag
	}
	return ans.ETag
}

// sendsCoding is the content coding writeAnswer sends ans to r in.
func sendsCoding(r *http.Request, ans Answer) coding {
	if ans.z == nil || len(ans.Body) < compressMin {
		return identity
	}
	return negotiate(r)
}

// writeAnswer writes ans's body in the content coding the client prefers among
// zstd and gzip (made once per answer) when it is large enough, else as it is;
// always with Vary: Accept-Encoding and the Content-Length of what is sent. Headers
// set before (Content-Type, Cache-Control, ETag) are kept. The bytes are written
// as they are kept: nothing is copied or encoded per request.
func writeAnswer(w http.ResponseWriter, r *http.Request, c coding, ans Answer) {
	h := w.Header()
	h.Add("Vary", "Accept-Encoding")
	body := ans.Body
	if c != identity {
		if z, err := ans.z.of(c, body); err == nil {
			body = z
			h.Set("Content-Encoding", c.String())
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// writeUntagged writes ans, computed per request or for a short while, with
// Cache-Control: no-cache.
func WriteUntagged(w http.ResponseWriter, r *http.Request, ans Answer) {
	w.Header().Set("Cache-Control", "no-cache")
	writeAnswer(w, r, sendsCoding(r, ans), ans)
}

// writeTagged writes ans with its ETag and cacheControl, or 304 Not Modified when
// the request's If-None-Match holds that tag (weak or strong).
func WriteTagged(w http.ResponseWriter, r *http.Request, ans Answer, cacheControl string) {
	h := w.Header()
	c := sendsCoding(r, ans)
	h.Set("ETag", answerETag(c, ans))
	h.Set("Cache-Control", cacheControl)
	if etagMatches(r.Header.Get("If-None-Match"), ans.ETag) {
		h.Add("Vary", "Accept-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeAnswer(w, r, c, ans)
}

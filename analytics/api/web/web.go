// Package web is gpuprice's web application: the page shell and the JavaScript and
// CSS bundle built from src/ (vanilla ES modules and uPlot, bundled by esbuild; see
// build.sh), embedded in the binary so the page needs no network and no CDN.
//
// FS holds the built files (index.html, app.js, app.css). Handler serves the shell
// at every view path (/, /series, /spreads, /index, /tokens, /terms, /alerts, /sources) and
// the bundle under /assets/, with ETags, and a Content-Security-Policy that lets the
// page load nothing from elsewhere.
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed dist
var dist embed.FS

// FS is the built web app: index.html, app.js, app.css and BUILD.json.
var FS fs.FS = mustSub(dist, "dist")

func mustSub(f fs.FS, dir string) fs.FS {
	s, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return s
}

// Views are the paths answered with the page shell; the app picks the view from
// the path, and its filters from the query string.
var Views = []string{"/", "/series", "/spreads", "/index", "/tokens", "/terms", "/availability", "/alerts", "/sources"}

// CSP is the Content-Security-Policy of every response: scripts, styles, data and
// images from this server only.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

type asset struct {
	body, gz []byte // gz: the body gzip'd, when that is smaller
	ctype    string
	etag     string
}

func newAsset(body []byte, ctype string) asset {
	a := asset{body: body, ctype: ctype, etag: etag(body)}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = zw.Write(body)
	if zw.Close() == nil && b.Len() < len(body) {
		a.gz = b.Bytes()
	}
	return a
}

// Handler serves the app from fsys (normally FS): the shell at each of Views, the
// files of the bundle under /assets/ (the shell names them with a content hash, so
// they are cached for a year), and 404 for anything else.
func Handler(fsys fs.FS) (http.Handler, error) {
	assets := map[string]asset{}
	for _, name := range []string{"app.js", "app.css"} {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("web: %w (run analytics/api/web/build.sh)", err)
		}
		ctype := "text/javascript; charset=utf-8"
		if strings.HasSuffix(name, ".css") {
			ctype = "text/css; charset=utf-8"
		}
		assets[name] = newAsset(b, ctype)
	}
	shell, err := fs.ReadFile(fsys, "index.html")
	if err != nil {
		return nil, fmt.Errorf("web: %w", err)
	}
	for name, a := range assets { // name each asset by its content: a new build is never served stale
		shell = bytes.ReplaceAll(shell, []byte(`"/assets/`+name+`"`), []byte(`"/assets/`+name+`?v=`+a.etag[1:13]+`"`))
	}
	page := newAsset(shell, "text/html; charset=utf-8")
	views := map[string]bool{}
	for _, v := range Views {
		views[v] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		p := r.URL.Path
		if len(p) > 1 {
			p = strings.TrimSuffix(p, "/")
		}
		if views[p] {
			h.Set("Cache-Control", "no-cache")
			serve(w, r, page)
			return
		}
		if dir, name := path.Split(p); dir == "/assets/" {
			if a, ok := assets[name]; ok {
				if r.URL.Query().Get("v") == a.etag[1:13] {
					h.Set("Cache-Control", "public, max-age=31536000, immutable")
				} else {
					h.Set("Cache-Control", "no-cache")
				}
				serve(w, r, a)
				return
			}
		}
		http.NotFound(w, r)
	}), nil
}

func etag(b []byte) string {
	s := sha256.Sum256(b)
	return `"` + hex.EncodeToString(s[:12]) + `"`
}

func serve(w http.ResponseWriter, r *http.Request, a asset) {
	h := w.Header()
	h.Set("ETag", a.etag)
	h.Set("Content-Type", a.ctype)
	h.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if a.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body = a.gz
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// acceptsGzip reports whether an Accept-Encoding header admits gzip.
func acceptsGzip(v string) bool {
	for _, part := range strings.Split(v, ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q = strings.ReplaceAll(strings.TrimSpace(q), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBundleIsCurrent fails when a source of the bundle changed after the
// committed dist/ was built, or dist/ was edited by hand: run ./build.sh and commit
// dist/. It compares hashes with dist/BUILD.json, the record build.mjs wrote; it does
// not rebuild (that needs npm: TestBundleRebuilds).
func TestBundleIsCurrent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("dist", "BUILD.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Inputs, Outputs map[string]string }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	sum := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])
	}
	srcs, _ := filepath.Glob(filepath.Join("src", "*"))
	want := map[string]bool{"package.json": true, "package-lock.json": true, "build.mjs": true}
	for _, s := range srcs {
		want[filepath.ToSlash(s)] = true
	}
	for p := range want {
		if m.Inputs[p] == "" {
			t.Errorf("%s is not in the bundle: run ./build.sh", p)
		} else if m.Inputs[p] != sum(p) {
			t.Errorf("%s changed since the bundle was built: run ./build.sh and commit dist/", p)
		}
	}
	for p := range m.Inputs {
		if !want[p] {
			t.Errorf("the bundle was built from %s, which is gone: run ./build.sh", p)
		}
	}
	for p, h := range m.Outputs {
		if sum(filepath.Join("dist", p)) != h {
			t.Errorf("dist/%s was edited by hand: run ./build.sh", p)
		}
	}
}

// TestBundleRebuilds builds the bundle again from the sources, in a copy of this
// folder, and fails when the outputs differ from the committed dist/. It needs the
// node_modules of ./build.sh (npm ci, which deploy/test.sh runs): without them it is
// skipped, saying so, and fails under CI.
func TestBundleRebuilds(t *testing.T) {
	if _, err := os.Stat("node_modules"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but there are no node_modules: deploy/test.sh runs npm ci here")
		}
		t.Skip("no node_modules: run ./build.sh (npm ci) to rebuild and compare the bundle")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, p := range []string{"package.json", "package-lock.json", "build.mjs", "src"} {
		if out, err := exec.Command("cp", "-R", filepath.Join(here, p), dir).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v: %s", p, err, out)
		}
	}
	if err := os.Symlink(filepath.Join(here, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "build.mjs")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs: %v: %s", err, out)
	}
	for _, f := range []string{"app.js", "app.css", "index.html", "BUILD.json"} {
		got, err := os.ReadFile(filepath.Join(dir, "dist", f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("dist", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("dist/%s differs from a rebuild of the sources: run ./build.sh and commit dist/", f)
		}
	}
}

func TestHandler(t *testing.T) {
	h, err := Handler(FS)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string, hdr ...string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	var shell string
	for _, v := range append(Views, "/series/", "/tokens?params=7e9") {
		resp, body := get(v)
		if resp.StatusCode != 200 || !strings.Contains(body, `<main id="main"`) || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("%s: %d %s %.200s", v, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if resp.Header.Get("Content-Security-Policy") != CSP || resp.Header.Get("ETag") == "" {
			t.Errorf("%s: headers %v", v, resp.Header)
		}
		shell = body
	}
	// Every file the shell loads is served here, named by its content: no CDN.
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(shell, -1)
	loaded := 0
	for _, r := range refs {
		u := r[1]
		if strings.Contains(u, "//") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the shell refers to another host: %s", u)
		}
		if !strings.HasPrefix(u, "/assets/") {
			continue
		}
		loaded++
		if !regexp.MustCompile(`\?v=[0-9a-f]{12}$`).MatchString(u) {
			t.Errorf("asset %s not named by content", u)
		}
		resp, body := get(u)
		if resp.StatusCode != 200 || len(body) < 1000 || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d, %d bytes, %q", u, resp.StatusCode, len(body), resp.Header.Get("Cache-Control"))
		}
		if again, _ := get(u, "If-None-Match", resp.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d, want 304", u, again.StatusCode)
		}
		if stale, _ := get(strings.Split(u, "?")[0] + "?v=000000000000"); stale.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("%s under another version is cached: %q", u, stale.Header.Get("Cache-Control"))
		}
	}
	// gzip when the client takes it, the same bytes as the bundle either way.
	want, _ := fs.ReadFile(FS, "app.js")
	for _, enc := range []string{"gzip, deflate, br", "identity", "gzip;q=0"} {
		req, _ := http.NewRequest("GET", srv.URL+"/assets/app.js", nil)
		req.Header.Set("Accept-Encoding", enc)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = resp.Body
		gz := resp.Header.Get("Content-Encoding") == "gzip"
		if gz != (enc == "gzip, deflate, br") {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", enc, resp.Header.Get("Content-Encoding"))
		}
		if gz {
			if r, err = gzip.NewReader(resp.Body); err != nil {
				t.Fatal(err)
			}
		}
		got, err := io.ReadAll(r)
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Accept-Encoding %q: %d bytes, %v; want the %d bytes of app.js", enc, len(got), err, len(want))
		}
	}
	if loaded != 2 {
		t.Errorf("shell loads %d assets, want app.js and app.css:\n%s", loaded, shell)
	}
	for _, p := range []string{"/nope", "/assets/BUILD.json", "/assets/../index.html", "/index.html"} {
		if resp, _ := get(p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
	resp, err := http.Post(srv.URL+"/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
}

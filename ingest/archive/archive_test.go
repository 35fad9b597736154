package archive

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
)

const secret = "s3cr3t-token-value"

func provider(t *testing.T) *httptest.Server {
	var flaky atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "session="+secret)
		switch r.URL.Path {
		case "/prices":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"page":"` + r.URL.Query().Get("page") + `"}`))
		case "/graphql":
			b, _ := io.ReadAll(r.Body)
			// echoes the credential, as a careless API might
			_, _ = w.Write([]byte(`{"auth":"` + r.Header.Get("Authorization") + `","q":` + string(b) + `}`))
		case "/flaky":
			if flaky.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("recovered"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func client(rt http.RoundTripper) *fetch.Client {
	c := fetch.New(fetch.Options{Timeout: 5 * time.Second,
		Backoff: fetch.Backoff{MaxTries: 3, Initial: time.Millisecond, Max: 5 * time.Millisecond}})
	if rt != nil {
		c.HTTP.Transport = rt
	}
	return c
}

// requests is what a "source" does: two pages, a POST with the key, a retried GET.
func requests(t *testing.T, c *fetch.Client, base string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, u := range []string{base + "/prices?page=1", base + "/prices?page=2&api_key=" + secret, base + "/flaky"} {
		r, err := c.Get(ctx, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(r.Body))
	}
	r, err := c.Do(ctx, http.MethodPost, base+"/graphql", http.Header{"Authorization": {"Bearer " + secret}}, []byte(`{"query":"gpuTypes"}`))
	if err != nil {
		t.Fatal(err)
	}
	return append(out, string(r.Body))
}

func TestRecordThenReplay(t *testing.T) {
	srv := provider(t)
	dir := filepath.Join(t.TempDir(), "run1")
	observed := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	rec, err := Create(dir, "run-1", observed, []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	c := client(nil)
	c.Observer = rec.Source("demo", SourceInfo{ObservedAt: observed, Endpoint: srv.URL + "/prices"})
	live := requests(t, c, srv.URL)
	if err := rec.Close(observed.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(dir, "again", observed, nil); err == nil {
		t.Error("Create over an existing archive succeeded")
	}

	// No secret anywhere in the archive, compressed bodies included.
	err = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		if strings.HasSuffix(p, ".gz") {
			data, err = fetch.Gunzip(data, 1<<20)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s holds the secret:\n%s", p, data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := a.Manifest
	if m.RunID != "run-1" || !m.Sources["demo"].ObservedAt.Equal(observed) || len(m.Entries) != 5 {
		t.Fatalf("manifest %+v", m)
	}
	if e := m.Entries[0]; e.Source != "demo" || e.Method != "GET" || e.Status != 200 || e.Header.Get("Set-Cookie") != fetch.Redacted ||
		e.Header.Get("Content-Type") != "application/json" || e.At.IsZero() {
		t.Errorf("entry %+v", e)
	}
	if !strings.Contains(m.Entries[1].URL, "api_key=REDACTED") || m.Entries[2].Status != 503 || m.Entries[3].Status != 200 {
		t.Errorf("entries %+v", m.Entries)
	}
	if string(m.Entries[4].RequestBody) != `{"query":"gpuTypes"}` {
		t.Errorf("request body %q", m.Entries[4].RequestBody)
	}

	// Replay through the same requests, the server gone: same bodies, the retry
	// served in order, credentials in the echoed body redacted.
	srv.Close()
	replayed := requests(t, client(a), srv.URL)
	for i := range live {
		want := strings.ReplaceAll(live[i], secret, fetch.Redacted)
		if replayed[i] != want {
			t.Errorf("request %d: replayed %q, recorded %q", i, replayed[i], want)
		}
	}
	if _, err := client(a).Get(context.Background(), srv.URL+"/prices?page=3", nil); err == nil {
		t.Error("a request not in the archive was answered")
	}
	if ms := a.Misses(); len(ms) != 1 || !strings.HasSuffix(ms[0], "/prices?page=3") {
		t.Errorf("misses %v", ms)
	}

	// A damaged body is refused, not served.
	body := filepath.Join(dir, filepath.FromSlash(m.Entries[0].File))
	data, _ := os.ReadFile(body)
	broken := append([]byte(nil), data...)
	broken[len(broken)-5] ^= 0xff
	os.WriteFile(body, broken, 0o644)
	if _, err := a.Body(m.Entries[0]); err == nil {
		t.Error("damaged body read without error")
	}
}

func TestOpenRefusesNonArchive(t *testing.T) {
	if _, err := Open(t.TempDir()); err == nil {
		t.Fatal("empty directory opened as an archive")
	}
}

// fakeS3 takes path-style PutObject requests.
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte
	order   []string
	auth    []string
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut {
		http.Error(w, "only PUT", http.StatusMethodNotAllowed)
		return
	}
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.objects[r.URL.Path] = b
	f.order = append(f.order, r.URL.Path)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	w.Header().Set("ETag", `"x"`)
}

func TestUploadToS3(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	fake := &fakeS3{objects: map[string][]byte{}}
	s3srv := httptest.NewServer(fake)
	defer s3srv.Close()

	srv := provider(t)
	dir := t.TempDir()
	rec, err := Create(dir, "run-42", time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := client(nil)
	c.Observer = rec.Source("demo", SourceInfo{ObservedAt: time.Now()})
	if _, err := c.Get(context.Background(), srv.URL+"/prices?page=1", nil); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(time.Now()); err != nil {
		t.Fatal(err)
	}
	cfg := S3Config{Bucket: "prices", Prefix: "archive/", Region: "eu-west-1", Endpoint: s3srv.URL, PathStyle: true}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	n, err := Upload(context.Background(), dir, cfg)
	if err != nil || n != 3 {
		t.Fatalf("uploaded %d: %v", n, err)
	}
	want := []string{"/prices/archive/run-42/responses/000001.gz", "/prices/archive/run-42/responses/000001.json", "/prices/archive/run-42/manifest.json"}
	if strings.Join(fake.order, " ") != strings.Join(want, " ") {
		t.Fatalf("objects put %v, want %v (manifest last)", fake.order, want)
	}
	local, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	if !bytes.Equal(fake.objects[want[2]], local) {
		t.Error("uploaded manifest differs from the local one")
	}
	if !strings.Contains(fake.auth[0], "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(fake.auth[0], "/eu-west-1/s3/") {
		t.Errorf("request not signed with the chain's credentials: %q", fake.auth[0])
	}
	if err := (S3Config{Prefix: "x"}).Validate(); err == nil {
		t.Error("prefix without bucket accepted")
	}
}

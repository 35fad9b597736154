package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/gpuprice/gpuprice/analytics/api"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/store"
)

// hostileVast serves the Vast answer of scrapers/vast/testdata/hostile: issue 29's
// corpus (textsafe.Hostile) in every host-written string, H100 offers at $0.50-$0.90
// per GPU-hour, and one offer at a negative price (quarantined).
func hostileVast(t *testing.T) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "scrapers", "vast", "testdata", "hostile", "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// vastOnlyConfig writes a configuration with the Vast source alone at endpoint, and
// extra appended.
func vastOnlyConfig(t *testing.T, dir, endpoint, extra string) string {
	t.Helper()
	text := fmt.Sprintf("data_dir: %s\nhttp: {timeout: 5s, retries: 1}\nsources:\n  vast: {endpoint: '%s', schedule: '%s'}\n"+
		"  fx: {enabled: false}\n  azure: {enabled: false}\n  lambda: {enabled: false}\n", dir, endpoint, neverSchedule)
	for _, n := range disabledOthers() {
		text += "  " + n + ": {enabled: false}\n"
	}
	p := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(p, []byte(text+extra), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 29, finding 3: with `sources.vast.endpoint: http://user:pass@host/?api_key=k3y-sEcReT-4242` (a value no name of a variable contains)
// the manifest of `collect --record` (and its archive.s3 upload) kept both secrets,
// quarantined rows kept the raw source_url, and /api/v1/quarantine served them
// without a token. Now the manifest, quarantined rows, run records and every API
// answer pass the redaction of the logs, and quarantine needs the admin token.
func TestEndpointCredentialsAppearNowhere(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv(api.TokenEnv, "admin-token-for-the-test")
	var mu sync.Mutex
	uploaded := map[string][]byte{}
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		uploaded[r.URL.Path] = b
		mu.Unlock()
		w.Header().Set("ETag", `"x"`)
	}))
	defer s3.Close()
	vast := hostileVast(t)
	endpoint := strings.Replace(vast.URL, "http://", "http://user:pass@", 1) + "/?api_key=k3y-sEcReT-4242"
	dir := t.TempDir()
	cfg := vastOnlyConfig(t, dir, endpoint, fmt.Sprintf(
		"archive: {s3: {bucket: arch, endpoint: '%s', path_style: true, region: eu-west-1}}\n", s3.URL))
	dsn := "duckdb://" + filepath.Join(dir, "store.duckdb")

	var all bytes.Buffer
	gp := func(args ...string) {
		var out, errb bytes.Buffer
		code := cli.Main(context.Background(), append([]string{"--config", cfg, "--store", dsn, "--log-level", "debug"}, args...), &out, &errb)
		fmt.Fprintf(&all, "$ gpuprice %s (exit %d)\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	archiveDir := filepath.Join(dir, "archive")
	gp("collect", "--record", archiveDir)
	for _, c := range [][]string{{"runs"}, {"runs", "--format", "json"}, {"quarantine", "--format", "json"},
		{"sources"}, {"config"}, {"prices", "--format", "csv"}, {"prices", "--format", "json"}} {
		gp(c...)
	}
	// The archive replays with its endpoint redacted: requests are keyed by redacted URLs.
	var rp bytes.Buffer
	if code := cli.Main(context.Background(), []string{"--config", cfg, "--store", dsn, "reparse", archiveDir}, &rp, &rp); code != 0 &&
		code != cli.ExitPartial {
		t.Errorf("reparse of the redacted archive: exit %d\n%s", code, rp.String())
	}
	if !regexp.MustCompile(`vast +(ok|degraded) +[1-9]`).MatchString(rp.String()) {
		t.Errorf("reparse did not replay the vast answer:\n%s", rp.String())
	}
	all.Write(rp.Bytes())
	if !strings.Contains(all.String(), "uploaded ") || !strings.Contains(all.String(), "rows quarantined") {
		t.Fatalf("the collection did not run as the test needs (an upload, a quarantined row):\n%s", all.String())
	}
	secretFree := func(where, text string) {
		t.Helper()
		for _, s := range []string{"k3y-sEcReT-4242", "user:pass@", "user%3Apass"} {
			if strings.Contains(text, s) {
				i := strings.Index(text, s)
				t.Errorf("%s keeps %q: …%s…", where, s, text[max(0, i-80):min(len(text), i+40)])
			}
		}
	}
	secretFree("command output and logs", all.String())
	manifest, err := os.ReadFile(filepath.Join(archiveDir, "manifest.json"))
	if err != nil || !strings.Contains(string(manifest), `"endpoint": "http://user:REDACTED@`) {
		t.Fatalf("manifest: %v\n%s", err, manifest)
	}
	secretFree("manifest.json", string(manifest))
	mu.Lock()
	for k, v := range uploaded {
		secretFree("uploaded "+k, string(v))
	}
	if len(uploaded) == 0 {
		t.Error("nothing was uploaded")
	}
	mu.Unlock()

	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs(context.Background(), "", 0)
	q, _ := st.Quarantine(context.Background(), 0)
	obs, _ := st.Observations(context.Background(), store.Filter{})
	st.Close()
	if len(q) == 0 || !strings.Contains(q[0].Raw, "source_url") || len(obs) == 0 {
		t.Fatalf("the store holds %d quarantined rows and %d observations: the test does not exercise them", len(q), len(obs))
	}
	stored, _ := json.Marshal([]any{runs, q, obs})
	secretFree("stored rows", string(stored))

	// Every API answer; quarantine only with the token.
	base, stop := startServe(t, "--config", cfg, "--store", dsn)
	defer stop()
	if code, _ := get(t, base+"/api/v1/quarantine"); code != http.StatusUnauthorized {
		t.Errorf("/api/v1/quarantine without the token: %d, want 401", code)
	}
	for _, path := range []string{"/api/v1/quarantine", "/api/v1/quarantine?format=csv", "/api/v1/runs", "/api/v1/sources",
		"/api/v1/prices", "/api/v1/prices?format=csv", "/api/prices", "/api/runs", "/openapi.json"} {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer admin-token-for-the-test")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", path, resp.StatusCode, b)
		}
		secretFree(path, string(b))
	}
}

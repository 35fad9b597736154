package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/store"
)

// registeredSources lists every source `gpuprice sources` shows.
func registeredSources(t *testing.T) []string {
	t.Helper()
	var buf bytes.Buffer
	cli.Main(context.Background(), []string{"sources", "--store", "duckdb://" + filepath.Join(t.TempDir(), "s.duckdb")}, &buf, &buf)
	var out []string
	for _, line := range strings.Split(buf.String(), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 0 && !strings.HasPrefix(line, "time=") {
			out = append(out, f[0])
		}
	}
	if len(out) < 5 {
		t.Fatalf("sources: %s", buf.String())
	}
	return out
}

// A known secret in every variable gpuprice reads must appear in no output, log line
// or stored row, even at debug level, even when a provider echoes it back.
func TestSecretsAppearNowhere(t *testing.T) {
	secrets := map[string]string{
		"RUNPOD_API_KEY":               "rp-SECRET-4f1d2c9e8b7a",
		"GPUPRICE_GCP_API_KEY":         "AIzaSECRET-gcp-77c1e0",
		"GPUPRICE_CLICKHOUSE_PASSWORD": "ch-SECRET-p@ss/w0rd",
		"AWS_SECRET_ACCESS_KEY":        "aws-SECRET-wJalrXUtnFEMI/K7MDENG",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDSECRETTEST")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	// The GCP key comes from a file, as a mounted secret would.
	keyFile := filepath.Join(t.TempDir(), "gcp-key")
	if err := os.WriteFile(keyFile, []byte(secrets["GPUPRICE_GCP_API_KEY"]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUPRICE_GCP_API_KEY", "")
	t.Setenv("GPUPRICE_GCP_API_KEY_FILE", keyFile)

	var mu sync.Mutex
	received := map[string]bool{}
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization") + " " + r.Header.Get("X-Goog-Api-Key")
		mu.Lock()
		for k, v := range secrets {
			if strings.Contains(auth, v) {
				received[k] = true
			}
		}
		mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", token="`+auth+`"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"errors":[{"message":"invalid credentials %s for %s"}],"error":{"message":"API key not valid: %s"}}`, auth, r.URL, auth)
	}))
	defer echo.Close()
	fail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "internal error; you sent %s %s", r.Header.Get("Authorization"), r.Header.Get("X-Goog-Api-Key"))
	}))
	defer fail.Close()
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()

	dir := t.TempDir()
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "data_dir: %s\nhttp: {timeout: 1s, retries: 2}\ningest: {source_timeout: 3s}\nsources:\n", dir)
	fmt.Fprintf(&cfg, "  fx: {endpoint: %s/fx}\n", fail.URL)
	for i, name := range registeredSources(t) {
		switch name {
		case "runpod", "gcp":
			fmt.Fprintf(&cfg, "  %s: {endpoint: %s/%s}\n", name, echo.URL, name)
		case "aws":
			fmt.Fprintf(&cfg, "  aws: {endpoint: %s/aws/region_index.json, options: {pricing_endpoint: %s, ec2_endpoint: %s, spot_feed: %s/spot.js, spot_advisor: \"off\"}}\n",
				fail.URL, echo.URL, echo.URL, hang.URL)
		default:
			base := fail.URL
			if i%2 == 1 {
				base = hang.URL
			}
			fmt.Fprintf(&cfg, "  %s: {endpoint: %s/%s}\n", name, base, name)
		}
	}
	cfgPath := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := "duckdb://" + filepath.Join(dir, "gpuprice.duckdb")

	var all bytes.Buffer
	gp := func(args ...string) int {
		var out, errb bytes.Buffer
		code := cli.Main(context.Background(), append([]string{"--config", cfgPath, "--log-level", "debug"}, args...), &out, &errb)
		fmt.Fprintf(&all, "$ gpuprice %s (exit %d)\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		return code
	}
	gp("--store", dsn, "collect")
	gp("--store", dsn, "collect", "--record", filepath.Join(dir, "archive"))
	gp("--store", dsn, "runs", "--limit", "0")
	gp("--store", dsn, "quarantine", "--limit", "0")
	gp("--store", dsn, "config")
	gp("--store", dsn, "spool", "status")
	gp("config", "--store", "clickhouse://gpuprice@127.0.0.1:9/prices")
	gp("runs", "--store", "clickhouse://gpuprice@127.0.0.1:1/prices?dial_timeout=200ms")

	for _, k := range []string{"RUNPOD_API_KEY", "GPUPRICE_GCP_API_KEY"} {
		if !received[k] {
			t.Errorf("%s never reached the provider: the test does not exercise it", k)
		}
	}
	if !strings.Contains(all.String(), "level=DEBUG") || !strings.Contains(all.String(), "failed") {
		t.Fatalf("the commands did not run as expected:\n%s", all.String())
	}
	leaks := func(where, text string) {
		t.Helper()
		for k, v := range secrets {
			for _, form := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
				if strings.Contains(text, form) {
					t.Errorf("%s leaks %s (%q)", where, k, form)
				}
			}
		}
	}
	leaks("command output", all.String())

	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), "", 0)
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs: %d %v", len(runs), err)
	}
	q, _ := st.Quarantine(context.Background(), 0)
	obs, _ := st.Observations(context.Background(), store.Filter{})
	leaks("stored rows", fmt.Sprintf("%+v %+v %+v", runs, q, obs))

	// And the archive the second collect recorded.
	err = filepath.Walk(filepath.Join(dir, "archive"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, _ := os.ReadFile(p)
		if strings.HasSuffix(p, ".gz") {
			data = gunzip(t, data)
		}
		leaks(p, string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		t.Logf("output:\n%s", all.String())
	}
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	out, err := fetch.Gunzip(data, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

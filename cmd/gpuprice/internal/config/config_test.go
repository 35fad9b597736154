package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gpuprice.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestArchiveS3Keys(t *testing.T) {
	c, err := Load(write(t, "archive:\n  s3: {bucket: prices, prefix: raw, region: eu-west-1, endpoint: http://127.0.0.1:9000, path_style: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Archive.S3; !s.Enabled() || s.Bucket != "prices" || !s.PathStyle || s.ObjectKey("run-1", "manifest.json") != "raw/run-1/manifest.json" {
		t.Errorf("archive.s3 = %+v", s)
	}
	for body, want := range map[string]string{
		"archive:\n  s3: {prefix: raw}\n":                        "bucket is required",
		"archive:\n  s3: {bucket: b, endpoint: ftp://x}\n":       "not an http(s) URL",
		"archive:\n  s3: {bucket: b, access_key: AKIA}\n":        "access_key",
		"archive:\n  s3: {bucket: b, secret_access_key: x}\n":    "secret_access_key",
		"http: {max_body_bytes: 0}\n":                            "max_body_bytes must be positive",
		"store: clickhouse://u:hunter2@db:9000/x\n":              "holds a password",
		"sources:\n  runpod: {endpoint: 'file:///etc/passwd'}\n": "not an http(s) URL",
		"sources:\n  runpod: {expect_rows: -1}\n":                "sources.runpod.expect_rows: -1",
	} {
		_, err := Load(write(t, body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", body, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: error prints the password: %v", body, err)
		}
	}
}

func TestSecretFilesAndRedaction(t *testing.T) {
	const pw = "p@ss word/42"
	f := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(f, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvClickHousePassword, "")
	t.Setenv(EnvClickHousePassword+"_FILE", f)
	t.Setenv("MY_SERVICE_API_KEY", "k-123456789")
	t.Setenv("SHORT_TOKEN", "abc") // too short to redact: would mask ordinary text
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv(EnvClickHousePassword) != pw {
		t.Fatalf("%s_FILE not read: %q", EnvClickHousePassword, os.Getenv(EnvClickHousePassword))
	}
	dsn, err := c.StoreDSN("clickhouse://gp@db:9000/prices")
	if err != nil || !strings.Contains(dsn, "p%40ss%20word%2F42") {
		t.Fatalf("DSN %q %v", dsn, err)
	}
	c.Store = dsn
	out := c.Redacted()
	if strings.Contains(out, "p%40ss") || strings.Contains(out, pw) || !strings.Contains(out, "REDACTED") {
		t.Errorf("config output leaks the password:\n%s", out)
	}
	for _, in := range []string{"dial " + dsn, "key k-123456789 refused", "auth " + pw} {
		if got := c.Redactor().Redact(in); strings.Contains(got, "p%40ss") || strings.Contains(got, pw) || strings.Contains(got, "k-123456789") {
			t.Errorf("Redact(%q) = %q", in, got)
		}
	}
	if got := c.Redactor().Redact("abc def"); got != "abc def" {
		t.Errorf("short value redacted: %q", got)
	}
	t.Setenv("GPUPRICE_STORE_FILE", filepath.Join(t.TempDir(), "missing"))
	t.Setenv("GPUPRICE_STORE", "")
	if _, err := Load(""); err == nil || !strings.Contains(err.Error(), "GPUPRICE_STORE_FILE") {
		t.Errorf("missing secret file: %v", err)
	}
}

func TestAlertsSection(t *testing.T) {
	t.Setenv("MY_HOOK_URL", "https://hooks.example.test/services/T0/B0/sekret-123")
	c, err := Load(write(t, `alerts:
  schedule: "*/5 * * * *"
  repeat_interval: 6h
  rules:
    - {name: h100-premium-shift, kind: spread_shift, gpu: H100-SXM-80GB, pricing: on_demand, window: 7d, threshold_pct: 10}
    - {name: spot-swing, kind: spot_move, gpu: H100-SXM-80GB, window: 24h, threshold_pct: 15}
    - {name: cheap-h100, kind: price_below, gpu: H100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: 2.0}
    - {name: source-down, kind: source_failed, runs: 3}
  notifiers:
    - {name: ops-webhook, kind: webhook, url_env: MY_HOOK_URL}
    - {name: am, kind: alertmanager, url: "http://alertmanager:9093"}
    - {name: log, kind: log}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Alerts.Rules) != 4 || c.Alerts.RepeatInterval != 6*time.Hour || c.Alerts.ScheduleSpec() != "*/5 * * * *" {
		t.Errorf("alerts = %+v", c.Alerts)
	}
	// The notifier's variable is a secret now: redacted wherever printed.
	if got := c.Redactor().Redact("POST https://hooks.example.test/services/T0/B0/sekret-123 failed"); strings.Contains(got, "sekret") {
		t.Errorf("webhook URL not redacted: %q", got)
	}
	if out := c.Redacted(); !strings.Contains(out, "url_env: MY_HOOK_URL") || !strings.Contains(out, "window: 7d") {
		t.Errorf("config output:\n%s", out)
	}
	p, err := c.AlertStatePath()
	if err != nil || filepath.Base(p) != "alerts-state.json" {
		t.Errorf("state path %q %v", p, err)
	}
	for body, want := range map[string]string{
		"alerts:\n  rules: [{name: x, kind: spread_shift, threshold_pct: 5}]\n  notifiers: [{name: l, kind: log}]\n  bogus: 1\n": "field bogus not found",
		"alerts:\n  rules: [{name: x, kind: spread_shift, window: 7x, threshold_pct: 5}]\n":                                      "use e.g. 7d",
		"alerts:\n  notifiers: [{name: s, kind: slack, url: 'https://hooks.slack.com/services/T/B/tok'}]\n":                      "config: alerts.notifiers[0] (s).url",
		"alerts:\n  rules: [{name: x, kind: spot_move}]\n  notifiers: [{name: l, kind: log}]\n":                                  "config: alerts.rules[0] (x): give threshold_pct",
	} {
		_, err := Load(write(t, body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", body, err, want)
		}
	}
}

// TestSampleConfigLoads loads deploy/gpuprice.example.yaml, whose sources section is
// generated from the source registry: the sample must be a valid configuration.
func TestSampleConfigLoads(t *testing.T) {
	c, err := Load(filepath.Join("..", "..", "..", "..", "deploy", "gpuprice.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Sources) < 13 || !c.Sources["vast"].IsEnabled() || c.Sources["vast"].Schedule != "*/10 * * * *" {
		t.Errorf("sources = %+v, want every source (and fx) with its defaults", c.Sources)
	}
}

func TestServePublicURL(t *testing.T) {
	c, err := Load(write(t, "serve: {public_url: \"https://gpuprice.example.com/app\"}\n"))
	if err != nil || c.Serve.PublicURL != "https://gpuprice.example.com/app" {
		t.Fatalf("%+v %v", c.Serve, err)
	}
	c, err = Load(write(t, "serve: {idle_timeout: 300ms, write_timeout: 5s, read_timeout: 1m, read_header_timeout: 2s, max_header_bytes: 8192}\n"))
	if err != nil || c.Serve.IdleTimeout != 300*time.Millisecond || c.Serve.WriteTimeout != 5*time.Second || c.Serve.ReadTimeout != time.Minute ||
		c.Serve.ReadHeaderTimeout != 2*time.Second || c.Serve.MaxHeaderBytes != 8192 {
		t.Fatalf("%+v %v", c.Serve, err)
	}
	for body, want := range map[string]string{
		"serve: {public_url: gpuprice.example.com}\n":                   "not an http(s) URL",
		"serve: {public_url: \"ftp://gpuprice.example.com\"}\n":         "not an http(s) URL",
		"serve: {public_url: \"https://u:hunter2@gpuprice.example\"}\n": "no credentials",
		"serve: {public_url: \"https://gpuprice.example/?a=1\"}\n":      "no credentials, query or fragment",
		"serve: {listen: \":8080\"}\n":                                  "listen",
		"serve: {idle_timeout: -1s}\n":                                  "serve.idle_timeout: -1s is negative",
		"serve: {max_header_bytes: 100000000}\n":                        "serve.max_header_bytes",
	} {
		_, err := Load(write(t, body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err %v, want %q", body, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: error prints the password: %v", body, err)
		}
	}
}

// A DSN whose parameters are not in alphabetical order holds no password; endpoints'
// credential parameters (api_key, key, access_token, sig) never reach `gpuprice config`.
func TestDSNOrderAndEndpointRedaction(t *testing.T) {
	c, err := Load(write(t, "store: clickhouse://db:9000/prices?read_timeout=30s&compress=true\n"+
		"sources:\n  gcp: {endpoint: 'https://cloudbilling.googleapis.com/v1/services?key=AIzaSECRET1&pageSize=5000'}\n"+
		"  vast: {endpoint: 'https://console.vast.ai/api/v0/bundles?api_key=vastSECRET2'}\n"+
		"  azure: {endpoint: 'https://prices.azure.com/api/retail/prices?access_token=azSECRET3&sig=sigSECRET4'}\n"))
	if err != nil {
		t.Fatalf("a DSN with unsorted parameters is refused: %v", err)
	}
	out := c.Redacted()
	for _, secret := range []string{"AIzaSECRET1", "vastSECRET2", "azSECRET3", "sigSECRET4"} {
		if strings.Contains(out, secret) {
			t.Errorf("gpuprice config prints %s:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "read_timeout=30s&compress=true") || !strings.Contains(out, "pageSize=5000") {
		t.Errorf("redaction changed what is not secret:\n%s", out)
	}
	if _, err := Load(write(t, "store: clickhouse://db:9000/prices?read_timeout=30s&password=hunter2\n")); err == nil || !strings.Contains(err.Error(), "holds a password") {
		t.Errorf("password parameter accepted: %v", err)
	}
}

// TestRedactorBuiltOnce: Load builds the redactor once from the environment; a
// secret set afterwards is not looked for (the environment is not scanned per call).
func TestRedactorBuiltOnce(t *testing.T) {
	t.Setenv("GPUPRICE_TEST_API_KEY", "first-secret-value")
	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	r := c.Redactor()
	if r != c.Redactor() {
		t.Error("Redactor is built again on every call")
	}
	t.Setenv("GPUPRICE_TEST_API_KEY", "second-secret-value")
	if got := r.Redact("a first-secret-value b second-secret-value"); got != "a REDACTED b second-secret-value" {
		t.Errorf("Redact = %q", got)
	}
}

// TestErrorsNameTheKey: yaml's errors name Go types; Load's name the key and the line.
func TestErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"ingest:\n  source_timeout: 5x\n", `line 2: ingest.source_timeout: "5x" is not a duration`},
		{"http:\n  timeout: 5s\n  retries: many\n", `line 3: http.retries: "many" is not a whole number`},
		{"log_level: info\ningest:\n  batch_sise: 10\n", `line 3: ingest.batch_sise: unknown key (field batch_sise not found; known here: batch_size, flush_interval`},
		{"sources:\n  vast:\n    enabeld: true\n", `line 3: sources.vast.enabeld: unknown key (field enabeld not found; known here: enabled, endpoint, schedule, options, expect_rows)`},
		{"http: 5\n", `line 1: http: "5" is not a mapping of keys to values`},
		{"log_level: info\ningest:\n  batch_size: 1\n flush_interval: 2s\n", `line 4: did not find expected key (line 4 is " flush_interval: 2s"`},
		{"log_level: info\nfx: {EUR: 1.1\nstore: x\n", `line 2: did not find expected ',' or '}'`},
		{"log_level: info\nhttp:\n\ttimeout: 5s\n", `line 3: found character that cannot start any token`},
	} {
		p := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(p, []byte(c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.yaml, err, c.want)
		}
	}
}

func TestParseMemoryLimit(t *testing.T) {
	for s, want := range map[string]int64{"64MiB": 64 << 20, "1GiB": 1 << 30, "1048576": 1 << 20, "512KiB": 512 << 10, " 2 GiB ": 2 << 30, "off": 0, "100B": 100} {
		if got, err := ParseMemoryLimit(s); err != nil || got != want {
			t.Errorf("%q: %d (%v), want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"64MB", "lots", "-1MiB", "0", ""} {
		if _, err := ParseMemoryLimit(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("memory_limit: 64MB\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "memory_limit") {
		t.Errorf("memory_limit: 64MB loaded: %v", err)
	}
}

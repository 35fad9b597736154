package secrets

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValues: registered variables, variables named like secrets and a DSN's password
// are secrets, each also in its URL-escaped forms; short values and other variables
// are not.
func TestValues(t *testing.T) {
	Register("GPUPRICE_TEST_NOTIFIER_URL")
	RegisterDSN("GPUPRICE_TEST_DSN")
	t.Setenv("GPUPRICE_TEST_NOTIFIER_URL", "https://hooks.example.test/T0/sekret")
	t.Setenv("GPUPRICE_TEST_DSN", "clickhouse://u:p%40ssword@db:9000/x")
	t.Setenv("SOME_VENDOR_API_KEY", "k-123 456")
	t.Setenv("SHORT_TOKEN", "abc")
	t.Setenv("GPUPRICE_TEST_PLAIN", "not a secret at all")
	r := NewRedactor()
	for in, want := range map[string]string{
		"post https://hooks.example.test/T0/sekret failed": "post REDACTED failed",
		"dial p@ssword":               "dial REDACTED",
		"p%40ssword in a URL":         "REDACTED in a URL",
		"key k-123 456 and k-123+456": "key REDACTED and REDACTED",
		"abc stays":                   "abc stays",
		"not a secret at all":         "not a secret at all",
	} {
		if got := r.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	vs := r.Secrets()
	for i := 1; i < len(vs); i++ {
		if len(vs[i]) > len(vs[i-1]) {
			t.Fatalf("Secrets not longest first: %q before %q", vs[i-1], vs[i])
		}
	}
	// A Redactor reads the environment once, when built; a new one reads it as it is now.
	t.Setenv("SOME_VENDOR_API_KEY", "later-value-1")
	if got := r.Redact("later-value-1"); got != "later-value-1" {
		t.Errorf("a built Redactor read the environment again: %q", got)
	}
	if got := NewRedactor().Redact("later-value-1"); got != "REDACTED" {
		t.Errorf("a new Redactor does not read the environment as it is now: %q", got)
	}
	var none *Redactor
	if none.Redact("x k-123 456 https://u:pw@h/") != "x k-123 456 https://u:REDACTED@h/" || none.Secrets() != nil {
		t.Errorf("a nil redactor masks URLs' passwords only: %q", none.Redact("x k-123 456 https://u:pw@h/"))
	}
}

// TestLoadFiles: NAME_FILE sets NAME (trailing newline cut) unless NAME is set; a
// missing file is an error naming the variable.
func TestLoadFiles(t *testing.T) {
	Register("GPUPRICE_TEST_FILE_SECRET", "GPUPRICE_TEST_SET_SECRET")
	f := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(f, []byte("from-the-file\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GPUPRICE_TEST_FILE_SECRET", "")
	t.Setenv("GPUPRICE_TEST_FILE_SECRET_FILE", f)
	t.Setenv("GPUPRICE_TEST_SET_SECRET", "already")
	t.Setenv("GPUPRICE_TEST_SET_SECRET_FILE", f)
	if err := LoadFiles(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("GPUPRICE_TEST_FILE_SECRET"); got != "from-the-file" {
		t.Errorf("file not read: %q", got)
	}
	if got := os.Getenv("GPUPRICE_TEST_SET_SECRET"); got != "already" {
		t.Errorf("a set variable was overwritten: %q", got)
	}
	if NewRedactor().Redact("x from-the-file") != "x REDACTED" {
		t.Error("a secret read from a file is not redacted")
	}
	t.Setenv("GPUPRICE_TEST_FILE_SECRET", "")
	t.Setenv("GPUPRICE_TEST_FILE_SECRET_FILE", filepath.Join(t.TempDir(), "missing"))
	if err := LoadFiles(); err == nil || !strings.Contains(err.Error(), "GPUPRICE_TEST_FILE_SECRET_FILE") {
		t.Errorf("missing file: %v", err)
	}
}

// TestLogger: the message, string attributes, groups, errors and values of
// WithAttrs are redacted; other values pass as they are.
func TestLogger(t *testing.T) {
	t.Setenv("GPUPRICE_TEST_LOG_TOKEN", "tok-secret-1")
	var buf bytes.Buffer
	l := Logger(slog.New(slog.NewTextHandler(&buf, nil)), NewRedactor())
	if Logger(l, nil) != l {
		t.Error("a redacting logger was wrapped again")
	}
	l.With("url", "https://x/?api_key=tok-secret-1").WithGroup("g").Info("sent tok-secret-1",
		"err", errors.New("401 for tok-secret-1"), "n", 42, slog.Group("h", "auth", "Bearer tok-secret-1"))
	out := buf.String()
	if strings.Contains(out, "tok-secret-1") {
		t.Errorf("secret logged: %s", out)
	}
	for _, want := range []string{"msg=\"sent REDACTED\"", "g.n=42", "g.err=\"401 for REDACTED\"", "g.h.auth=\"Bearer REDACTED\""} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing from %s", want, out)
		}
	}
	if Logger(nil, nil) != nil {
		t.Error("a nil logger became one")
	}
}

func BenchmarkRedact(b *testing.B) {
	b.Setenv("GPUPRICE_BENCH_API_KEY", "bench-secret-value")
	r := NewRedactor()
	line := "level=DEBUG msg=response url=https://api.example.com/v1/prices?page=2 status=200 bytes=48213 duration=81ms"
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Redact(line)
	}
}

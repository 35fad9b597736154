package config

import (
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
)

// SecretEnv lists the environment variables that hold secrets gpuprice uses. Each may
// instead be given as a file: NAME_FILE=/run/secrets/x (see LoadSecretFiles). Besides
// these, any variable whose name ends in _API_KEY, _PASSWORD, _SECRET,
// _SECRET_ACCESS_KEY or _TOKEN counts as a secret for redaction.
var SecretEnv = []string{
	EnvClickHousePassword,
	"RUNPOD_API_KEY",
	"GPUPRICE_GCP_API_KEY",
	"AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN",
}

var secretSuffixes = []string{"_API_KEY", "_PASSWORD", "_SECRET", "_SECRET_ACCESS_KEY", "_TOKEN", "_APIKEY"}

// minSecretLen is the shortest value redacted: shorter ones would mask ordinary text.
const minSecretLen = 4

// LoadSecretFiles reads NAME_FILE for every NAME of SecretEnv (and GPUPRICE_STORE)
// that is not set itself, and sets NAME to the file's content without its trailing
// newline, so that secrets can be mounted as files (Docker and Kubernetes secrets)
// and the rest of gpuprice reads them from the environment as usual.
func LoadSecretFiles() error {
	for _, name := range append([]string{EnvStore}, SecretEnv...) {
		path := os.Getenv(name + "_FILE")
		if path == "" || os.Getenv(name) != "" {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("config: %s_FILE: %w", name, err)
		}
		if err := os.Setenv(name, strings.TrimRight(string(data), "\r\n")); err != nil {
			return fmt.Errorf("config: %s_FILE: %w", name, err)
		}
	}
	return nil
}

// Secrets returns the secret values set in the environment (SecretEnv, variables
// named like secrets, the password of a DSN in GPUPRICE_STORE), each also in its URL-
// escaped forms, longest first, for redaction.
func Secrets() []string {
	set := map[string]bool{}
	add := func(v string) {
		if len(v) < minSecretLen {
			return
		}
		set[v] = true
		set[url.QueryEscape(v)] = true
		set[url.PathEscape(v)] = true
		set[url.UserPassword("u", v).String()[2:]] = true
	}
	for _, name := range SecretEnv {
		add(os.Getenv(name))
	}
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		for _, suf := range secretSuffixes {
			if strings.HasSuffix(strings.ToUpper(name), suf) {
				add(v)
			}
		}
	}
	if dsn := os.Getenv(EnvStore); dsn != "" {
		if u, err := url.Parse(dsn); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok {
				add(pw)
			}
		}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// Redact replaces every secret of Secrets in s by REDACTED.
func Redact(s string) string {
	for _, v := range Secrets() {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "REDACTED")
		}
	}
	return s
}

package config

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// SecretEnv lists the environment variables that hold secrets gpuprice uses besides
// the sources' credentials, which each source names itself (scrapers.Info.SecretEnv,
// see secretNames). Each may instead be given as a file: NAME_FILE=/run/secrets/x
// (see LoadSecretFiles). Besides these, any variable whose name ends in _API_KEY,
// _PASSWORD, _SECRET, _SECRET_ACCESS_KEY or _TOKEN counts as a secret for redaction.
var SecretEnv = []string{EnvClickHousePassword}

// secretNames is SecretEnv and every registered source's credential variables.
func secretNames() []string {
	out := slices.Clone(SecretEnv)
	for _, n := range scrapers.SecretEnv() {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

var secretSuffixes = []string{"_API_KEY", "_PASSWORD", "_SECRET", "_SECRET_ACCESS_KEY", "_TOKEN", "_APIKEY"}

// minSecretLen is the shortest value redacted: shorter ones would mask ordinary text.
const minSecretLen = 4

// LoadSecretFiles reads NAME_FILE for every NAME of SecretEnv (and GPUPRICE_STORE)
// that is not set itself, and sets NAME to the file's content without its trailing
// newline, so that secrets can be mounted as files (Docker and Kubernetes secrets)
// and the rest of gpuprice reads them from the environment as usual.
func LoadSecretFiles() error {
	for _, name := range append([]string{EnvStore}, secretNames()...) {
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
	for _, name := range secretNames() {
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

// Redactor masks secret values in text: the environment's secrets, and every URL's
// password and credential parameters (schemas.RedactText: an endpoint written in the
// configuration with user:pass@ or ?api_key=). It reads the environment once, when
// it is built (NewRedactor, or Load for the configuration's Redactor), and each
// Redact is then one pass of a strings.Replacer and of RedactText over the text:
// cheap enough for every log line. A nil *Redactor masks URLs' secrets only.
type Redactor struct {
	secrets []string
	r       *strings.Replacer
}

// NewRedactor builds a Redactor of the environment's secrets as they are now
// (Secrets).
func NewRedactor() *Redactor {
	secrets := Secrets()
	pairs := make([]string, 0, 2*len(secrets))
	for _, v := range secrets { // longest first: a secret containing another wins
		pairs = append(pairs, v, "REDACTED")
	}
	return &Redactor{secrets: secrets, r: strings.NewReplacer(pairs...)}
}

// Redact replaces every secret in s by REDACTED. It is the one redaction of
// everything gpuprice logs, stores (run errors, quarantined rows) and answers (the
// API, the archive's manifest).
func (r *Redactor) Redact(s string) string {
	if r != nil && len(r.secrets) > 0 {
		s = r.r.Replace(s)
	}
	return schemas.RedactText(s)
}

// Secrets returns the values the Redactor masks, longest first (the raw archive
// masks them in what it writes).
func (r *Redactor) Secrets() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.secrets)
}

// Package secrets is gpuprice's one handling of secrets: which environment variables
// hold them (every source's credentials, which each source names, and those the
// binary registers), their values mounted as files (NAME_FILE), and their redaction
// in everything gpuprice logs, stores or answers (Redactor, Handler).
package secrets

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

var registry struct {
	sync.Mutex
	names []string // variables holding a secret, besides the sources'
	dsns  []string // variables holding a URL whose password is a secret
}

// Register names variables that hold secrets besides the sources' credentials
// (scrapers.Info.SecretEnv): the store's password, the alert notifiers' URLs. Each
// may instead be given as a file (LoadFiles). Besides these, any variable whose name
// ends in _API_KEY, _APIKEY, _PASSWORD, _SECRET, _SECRET_ACCESS_KEY or _TOKEN counts
// as a secret for redaction.
func Register(names ...string) { register(&registry.names, names) }

// RegisterDSN names variables that hold a URL (a store DSN) whose password is a
// secret; they too may be given as a file.
func RegisterDSN(names ...string) { register(&registry.dsns, names) }

func register(to *[]string, names []string) {
	registry.Lock()
	defer registry.Unlock()
	for _, n := range names {
		if !slices.Contains(*to, n) {
			*to = append(*to, n)
		}
	}
}

// Names are the registered variables and every registered source's credential
// variables (not the DSN variables).
func Names() []string {
	registry.Lock()
	out := slices.Clone(registry.names)
	registry.Unlock()
	for _, n := range scrapers.SecretEnv() {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func dsnNames() []string {
	registry.Lock()
	defer registry.Unlock()
	return slices.Clone(registry.dsns)
}

var suffixes = []string{"_API_KEY", "_PASSWORD", "_SECRET", "_SECRET_ACCESS_KEY", "_TOKEN", "_APIKEY"}

// minLen is the shortest value redacted: shorter ones would mask ordinary text.
const minLen = 4

// LoadFiles reads NAME_FILE for every registered NAME (Names and the DSN variables)
// that is not set itself, and sets NAME to the file's content without its trailing
// newline, so that secrets can be mounted as files (Docker and Kubernetes secrets)
// and the rest of gpuprice reads them from the environment as usual.
func LoadFiles() error {
	for _, name := range append(dsnNames(), Names()...) {
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

// Values returns the secret values set in the environment (Names, variables named
// like secrets, the password of a URL in a DSN variable), each also in its URL-
// escaped forms, longest first, for redaction.
func Values() []string {
	set := map[string]bool{}
	add := func(v string) {
		if len(v) < minLen {
			return
		}
		set[v] = true
		set[url.QueryEscape(v)] = true
		set[url.PathEscape(v)] = true
		set[url.UserPassword("u", v).String()[2:]] = true
	}
	for _, name := range Names() {
		add(os.Getenv(name))
	}
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		for _, suf := range suffixes {
			if strings.HasSuffix(strings.ToUpper(name), suf) {
				add(v)
			}
		}
	}
	for _, name := range dsnNames() {
		if u, err := url.Parse(os.Getenv(name)); err == nil && u.User != nil {
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
// it is built (NewRedactor), and each Redact is then one pass of a strings.Replacer
// and of RedactText over the text: cheap enough for every log line. A nil *Redactor
// masks URLs' secrets only.
type Redactor struct {
	secrets []string
	r       *strings.Replacer
}

// NewRedactor builds a Redactor of the environment's secrets as they are now
// (Values).
func NewRedactor() *Redactor {
	secrets := Values()
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

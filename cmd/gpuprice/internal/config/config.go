// Package config loads and validates gpuprice's one YAML configuration file. Defaults
// come first, then the file (unknown keys are errors), then Validate (fields only, no
// network). Secrets are never read from the file: they come from the environment or
// from files named by NAME_FILE variables (ingest/secrets), whose Redactor masks
// them in anything printed.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/analytics/digest"
	"github.com/gpuprice/gpuprice/ingest/archive"
	"github.com/gpuprice/gpuprice/ingest/schedule"
	"github.com/gpuprice/gpuprice/ingest/secrets"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

// FXSource is the name of the exchange-rate source under sources: (not a price source).
const FXSource = "fx"

// Closest is the nearest candidate within two edits of name, "" when none is: the
// "did you mean" of a misspelled key or flag (schemas.Near).
func Closest(name string, candidates []string) string {
	if near := schemas.Near(name, candidates); len(near) > 0 {
		return near[0]
	}
	return ""
}

// Environment variables.
const (
	EnvStore              = "GPUPRICE_STORE"               // store DSN; wins over the file
	EnvClickHousePassword = "GPUPRICE_CLICKHOUSE_PASSWORD" // put into a clickhouse DSN
	EnvDataDir            = "GPUPRICE_DATA_DIR"            // where the embedded store and spool live
	// The alert notifiers' URLs in the sample configuration (secrets: a Slack
	// webhook URL embeds a token). Notifiers may name other variables with url_env;
	// Load registers those as secrets too.
	EnvAlertWebhookURL = "GPUPRICE_ALERT_WEBHOOK_URL"
	EnvSlackWebhookURL = "GPUPRICE_SLACK_WEBHOOK_URL"
)

func init() {
	secrets.Register(EnvClickHousePassword, EnvAlertWebhookURL, EnvSlackWebhookURL)
	secrets.RegisterDSN(EnvStore)
}

// Config is the whole configuration.
type Config struct {
	// Store is the store DSN: clickhouse://host:9000/db or duckdb:///path/file.duckdb
	// (default: the embedded DuckDB file in the data directory). $GPUPRICE_STORE and
	// --store win over it; it must not hold a password.
	Store string `yaml:"store"`
	// DataDir holds the embedded store, the spool and the alert state (default
	// $GPUPRICE_DATA_DIR, else $XDG_DATA_HOME/gpuprice, else ~/.local/share/gpuprice).
	DataDir string `yaml:"data_dir"`
	// LogLevel is debug, info, warn or error (--log-level wins).
	LogLevel string `yaml:"log_level"`
	// MemoryLimit is the Go runtime's soft memory limit, as GOMEMLIMIT writes it
	// (64MiB, 1GiB) or off; $GOMEMLIMIT wins over it. Default: 48MiB for collect and
	// reparse, none for the other commands. It bounds Go's memory, not DuckDB's
	// (docs/operator-guide.md, "Memory").
	MemoryLimit string `yaml:"memory_limit"`
	// HTTP configures the one HTTP client every source uses.
	HTTP HTTP `yaml:"http"`
	// Ingest configures normalisation, the plausibility and suspect gates and batching.
	Ingest Ingest `yaml:"ingest"`
	// Spool configures the batches kept on disk while the store is unreachable.
	Spool Spool `yaml:"spool"`
	// Archive configures the raw response archive of collect --record.
	Archive Archive `yaml:"archive"`
	// FX are static exchange rates, USD per unit by ISO 4217 code, for prices published
	// in other currencies (the ECB's daily rates win when they can be fetched).
	FX map[string]float64 `yaml:"fx"`
	// Providers override a provider's tier (hyperscaler, specialist, marketplace) or
	// default interconnect.
	Providers map[string]ProviderEntry `yaml:"providers"`
	// Sources configure each source by its name (gpuprice sources lists them); fx is
	// the exchange-rate source.
	Sources map[string]Source `yaml:"sources"`
	// Alerts are the alert rules and notifiers (docs/alerts.md).
	Alerts alert.Config `yaml:"alerts"`
	// Digest is the weekly digest: the GPUs followed and when serve sends it
	// (docs/alerts.md, "Weekly digest").
	Digest digest.Config `yaml:"digest"`

	redactor *secrets.Redactor // built once by Load

	Serve Serve `yaml:"serve"`
}

// Serve configures what `serve` publishes.
type Serve struct {
	// PublicURL is where users reach the web app (e.g. https://gpuprice.example.com,
	// behind a proxy): alert notifications link to a series' view under it. Empty:
	// no links.
	PublicURL string `yaml:"public_url"`
	// ReadHeaderTimeout bounds how long a client may take to send a request's header (0: 10s).
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds how long a client may take to send a whole request (0: 30s).
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds how long an answer may take to be read: a client reading
	// slower is cut (0: 2m; POST /api/v1/collect waits for its collection).
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection idle for so long (0: 2m).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// MaxHeaderBytes caps a request's header; larger ones are answered 431 (0: 64 KiB).
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// MaxConnsPerClient caps the connections one client address holds open (0: 64;
	// -1: no cap, for a server behind a proxy, where every client has its address).
	MaxConnsPerClient int `yaml:"max_conns_per_client"`
	// AllowedHosts are the Host header values answered (a name alone also with the
	// port); others get 421. Empty: localhost, 127.0.0.1 and [::1] when listening on
	// loopback, any otherwise; ["*"]: any.
	AllowedHosts []string `yaml:"allowed_hosts"`
}

// HTTP configures the shared fetch client.
type HTTP struct {
	Timeout      time.Duration `yaml:"timeout"`        // per request
	UserAgent    string        `yaml:"user_agent"`     // User-Agent header of every request (default: gpuprice's own)
	MaxBodyBytes int64         `yaml:"max_body_bytes"` // a larger response fails the source; counted after gzip decoding
	// Retries is the tries per request (the first counts); 429 and 5xx are retried
	// with backoff, Retry-After honoured.
	Retries     int           `yaml:"retries"`
	MinInterval time.Duration `yaml:"min_interval"` // least time between two requests to one host (0s: none)
	// CacheDir keeps the ETag and Last-Modified of pages and the ECB rates, so that
	// the next request is conditional and a 304 is answered from the cache; "" (the
	// default) sends every request whole. collect --record never uses it: an archive
	// holds whole answers.
	CacheDir string `yaml:"cache_dir"`
}

// Ingest configures normalisation, gates and batching.
type Ingest struct {
	BatchSize     int           `yaml:"batch_size"`     // rows per store write; 0: the store's own
	FlushInterval time.Duration `yaml:"flush_interval"` // rows are written at least this often
	// BatchBytes bounds a collection's batches by the memory their rows hold, as
	// estimated per row: a batch is written at batch_size rows or batch_bytes bytes,
	// whichever comes first. 0: the store's own (DuckDB 8 MiB, ClickHouse 64 MiB);
	// -1: no bound.
	BatchBytes int `yaml:"batch_bytes"`
	// MinUSDGPUHour is the plausibility gate's floor: a price under it per GPU-hour
	// is quarantined.
	MinUSDGPUHour float64 `yaml:"min_usd_gpu_hour"`
	// MaxUSDGPUHour is the plausibility gate's ceiling: a price over it per GPU-hour
	// is quarantined.
	MaxUSDGPUHour float64       `yaml:"max_usd_gpu_hour"`
	SourceTimeout time.Duration `yaml:"source_timeout"` // a source still running after this is cut off (0: never)
	// Suspect is the relative gate: a price far from the median of its current peers
	// is held in quarantine as suspect (gpuprice quarantine release frees it).
	Suspect Suspect `yaml:"suspect"`
}

// Suspect configures the relative gate of live collections: a price under Below or
// over Above times the median of its current peers (same canonical GPU, pricing
// kind and scope) is quarantined as suspect, once MinPeers peers exist.
type Suspect struct {
	Below    float64 `yaml:"below"`     // held when the price is under this fraction of its peers' median
	Above    float64 `yaml:"above"`     // held when the price is over this multiple of its peers' median
	MinPeers int     `yaml:"min_peers"` // with fewer current peers a price is not judged
	Disabled bool    `yaml:"disabled"`  // turns the suspect gate off
}

// Spool configures the on-disk spool used while the store is unreachable.
type Spool struct {
	Dir      string `yaml:"dir"`       // default <data_dir>/spool
	MaxBytes int64  `yaml:"max_bytes"` // the spool refuses batches beyond this size (the run is then failed: rows lost)
}

// Archive configures the raw response archive of `collect --record`.
type Archive struct {
	// S3 uploads each recorded archive when a bucket is set; credentials come from
	// the AWS default chain.
	S3 archive.S3Config `yaml:"s3"`
}

// ProviderEntry overrides the provider catalog.
type ProviderEntry struct {
	Tier         string `yaml:"tier"`         // hyperscaler, specialist or marketplace
	Interconnect string `yaml:"interconnect"` // the provider's default interconnect (docs/gpu-catalog.md)
}

// Source configures one source.
type Source struct {
	Enabled *bool `yaml:"enabled"` // false leaves the source out of collect and serve (default true)
	// Endpoint is the source's first URL: a mirror, a proxy or a recording (default:
	// the provider's own).
	Endpoint string `yaml:"endpoint"`
	Schedule string `yaml:"schedule"` // cron spec on which serve runs the source (default: the source's own)
	// Options are the source's own options (deploy/gpuprice.example.yaml lists them
	// per source).
	Options map[string]any `yaml:"options"`
	// ExpectRows is the fewest accepted rows a routine answer has here: below it the run
	// is degraded (coverage). 0: the source's own minimum; set it for a mirror or an
	// account that sees part of the provider's catalog.
	ExpectRows int `yaml:"expect_rows"`
}

// IsEnabled reports whether the source runs (default true).
func (s Source) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// Default returns the configuration used when no file is given.
func Default() Config {
	return Config{
		LogLevel: "info",
		HTTP:     HTTP{Timeout: 30 * time.Second, MaxBodyBytes: 64 << 20, Retries: 4, MinInterval: 250 * time.Millisecond},
		Ingest: Ingest{BatchSize: 0, FlushInterval: 2 * time.Second, MinUSDGPUHour: 0.01,
			MaxUSDGPUHour: 150, SourceTimeout: 10 * time.Minute,
			Suspect: Suspect{Below: 0.25, Above: 4, MinPeers: 3}},
		Spool: Spool{MaxBytes: 1 << 30},
	}
}

// Load reads the file at path over the defaults and validates the result. An empty
// path gives the defaults.
func Load(path string) (Config, error) {
	c := Default()
	if err := secrets.LoadFiles(); err != nil {
		return c, err
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("config: %w", err)
		}
		if err := decode(bytes.NewReader(data), &c); err != nil {
			return c, fmt.Errorf("config: %s: %w", path, explainDecodeError(data, err))
		}
	}
	// The notifiers' URL variables are secrets whatever their names, even when the
	// file fails validation (its errors must not print them).
	secrets.Register(c.Alerts.SecretEnv()...)
	if err := secrets.LoadFiles(); err != nil {
		return c, err
	}
	c.redactor = secrets.NewRedactor()
	if err := c.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

func decode(r io.Reader, c *Config) error {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Validate checks every field; it does no network I/O.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("config: "+format, args...)) }
	if c.Store != "" {
		if !strings.Contains(c.Store, "://") {
			bad("store: %q is not a DSN (clickhouse://host:9000/db or duckdb:///path/file.duckdb)", store.Redact(c.Store))
		} else if hasPassword(c.Store) {
			bad("store: the DSN holds a password; put secrets in the environment (%s or %s), never in the file", EnvStore,
				EnvClickHousePassword)
		}
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("log_level: %q is not one of debug, info, warn, error", c.LogLevel)
	}
	if c.MemoryLimit != "" {
		if _, err := ParseMemoryLimit(c.MemoryLimit); err != nil {
			bad("memory_limit: %v", err)
		}
	}
	if c.HTTP.Timeout <= 0 {
		bad("http.timeout must be positive")
	}
	if c.HTTP.MaxBodyBytes <= 0 {
		bad("http.max_body_bytes must be positive")
	}
	if c.HTTP.Retries < 1 {
		bad("http.retries must be at least 1 (the first try counts)")
	}
	if c.HTTP.MinInterval < 0 {
		bad("http.min_interval must not be negative")
	}
	if c.Ingest.BatchSize < 0 {
		bad("ingest.batch_size must not be negative (0: the store's own size)")
	}
	if c.Ingest.BatchBytes < -1 {
		bad("ingest.batch_bytes must be -1 (no bound), 0 (the store's own) or positive")
	}
	if c.Ingest.FlushInterval <= 0 {
		bad("ingest.flush_interval must be positive")
	}
	if sp := c.Ingest.Suspect; !(sp.Below > 0 && sp.Below < 1) || !(sp.Above > 1) || sp.MinPeers < 1 {
		bad("ingest.suspect: below (%g) must be in (0, 1), above (%g) over 1 and min_peers (%d) at least 1", sp.Below,
			sp.Above, sp.MinPeers)
	}
	if c.Ingest.MinUSDGPUHour < 0 || c.Ingest.MaxUSDGPUHour <= c.Ingest.MinUSDGPUHour {
		bad("ingest: min_usd_gpu_hour (%g) must be ≥ 0 and below max_usd_gpu_hour (%g)", c.Ingest.MinUSDGPUHour,
			c.Ingest.MaxUSDGPUHour)
	}
	if c.Ingest.SourceTimeout < 0 {
		bad("ingest.source_timeout must not be negative")
	}
	if c.Spool.MaxBytes <= 0 {
		bad("spool.max_bytes must be positive")
	}
	if err := c.Archive.S3.Validate(); err != nil {
		bad("%v", err)
	}
	for cur, r := range c.FX {
		if len(cur) != 3 || strings.ToUpper(cur) != cur {
			bad("fx: %q is not an ISO 4217 code like EUR", cur)
		}
		if r <= 0 {
			bad("fx.%s: rate %g must be positive (USD per unit)", cur, r)
		}
	}
	for name, p := range c.Providers {
		if p.Tier != "" && !schemas.ValidTier(p.Tier) {
			bad("providers.%s.tier: %q is not hyperscaler, specialist or marketplace", name, p.Tier)
		}
		if p.Interconnect != "" && !schemas.ValidInterconnect(p.Interconnect) {
			bad("providers.%s.interconnect: %q is not a known interconnect", name, p.Interconnect)
		}
	}
	known := scrapers.Names() // empty when no source is linked in (this package's tests)
	for name, s := range c.Sources {
		if len(known) > 0 && name != FXSource && !slices.Contains(known, name) {
			hint := ""
			if m := Closest(name, append(known, FXSource)); m != "" {
				hint = fmt.Sprintf("did you mean %s? ", m)
			}
			bad("sources.%s: no such source (%sknown: %s, %s)", name, hint, strings.Join(known, ", "), FXSource)
			continue
		}
		if s.ExpectRows < 0 {
			bad("sources.%s.expect_rows: %d: give the fewest rows of a routine answer (0: the source's own minimum)",
				name, s.ExpectRows)
		}
		if s.Endpoint != "" && !strings.HasPrefix(s.Endpoint, "http://") && !strings.HasPrefix(s.Endpoint, "https://") {
			bad("sources.%s.endpoint: %q is not an http(s) URL", name, s.Endpoint)
		}
		if s.Schedule != "" {
			if err := schedule.Check(s.Schedule); err != nil {
				bad("sources.%s.schedule: %v", name, err)
			}
		}
	}
	for name, d := range map[string]time.Duration{"read_header_timeout": c.Serve.ReadHeaderTimeout,
		"read_timeout":  c.Serve.ReadTimeout,
		"write_timeout": c.Serve.WriteTimeout, "idle_timeout": c.Serve.IdleTimeout} {
		if d < 0 {
			bad("serve.%s: %s is negative", name, d)
		}
	}
	if c.Serve.MaxHeaderBytes < 0 || c.Serve.MaxHeaderBytes > 16<<20 {
		bad("serve.max_header_bytes: %d: from 0 (the default, 64 KiB) to 16 MiB", c.Serve.MaxHeaderBytes)
	}
	if u := c.Serve.PublicURL; u != "" {
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			bad("serve.public_url: %q is not an http(s) URL", u)
		} else if pu.User != nil || pu.RawQuery != "" || pu.Fragment != "" {
			bad("serve.public_url: give the web app's root URL, with no credentials, query or fragment")
		}
	}
	if err := c.Digest.Validate(c.Alerts.Notifiers); err != nil {
		errs = append(errs, err)
	}
	if err := c.Alerts.Validate(); err != nil {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				bad("%w", e)
			}
		} else {
			bad("%w", err)
		}
	}
	return errors.Join(errs...)
}

func hasPassword(dsn string) bool {
	return store.Redact(dsn) != dsn
}

// Redactor is the one redactor of the environment's secrets, built by Load after the
// secret files and the notifiers' URL variables are read; pass it to whatever prints
// or stores text. A Config not made by Load has one built from the environment now.
func (c Config) Redactor() *secrets.Redactor {
	if c.redactor == nil {
		return secrets.NewRedactor()
	}
	return c.redactor
}

// ProviderCatalog returns the default provider catalog with the file's overrides applied.
func (c Config) ProviderCatalog() schemas.ProviderCatalog {
	cat := schemas.DefaultProviders()
	for name, p := range c.Providers {
		e := cat.Lookup(name)
		e.Name = name
		if p.Tier != "" {
			e.Tier = p.Tier
		}
		if p.Interconnect != "" {
			e.Interconnect = p.Interconnect
		}
		cat[name] = e
	}
	return cat
}

// DataDirPath is where the embedded store and the spool live: data_dir, else
// $GPUPRICE_DATA_DIR, else $XDG_DATA_HOME/gpuprice, else ~/.local/share/gpuprice.
func (c Config) DataDirPath() (string, error) {
	if c.DataDir != "" {
		return c.DataDir, nil
	}
	if d := os.Getenv(EnvDataDir); d != "" {
		return d, nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "gpuprice"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config: no data directory: set %s: %w", EnvDataDir, err)
	}
	return filepath.Join(home, ".local", "share", "gpuprice"), nil
}

// StoreDSN returns the DSN to open: flag, else $GPUPRICE_STORE, else the file's store,
// else the embedded DuckDB file in the data directory. A clickhouse DSN gets the
// password from $GPUPRICE_CLICKHOUSE_PASSWORD when set.
func (c Config) StoreDSN(flag string) (string, error) {
	dsn := flag
	if dsn == "" {
		dsn = os.Getenv(EnvStore)
	}
	if dsn == "" {
		dsn = c.Store
	}
	if dsn == "" {
		dir, err := c.DataDirPath()
		if err != nil {
			return "", err
		}
		dsn = "duckdb://" + filepath.ToSlash(filepath.Join(dir, "gpuprice.duckdb"))
	}
	if pw := os.Getenv(EnvClickHousePassword); pw != "" && strings.HasPrefix(dsn, "clickhouse://") {
		dsn = withPassword(dsn, pw)
	}
	return dsn, nil
}

// AlertStatePath is the alert state file: alerts.state_file, else
// <data_dir>/alerts-state.json.
func (c Config) AlertStatePath() (string, error) {
	if c.Alerts.StateFile != "" {
		return c.Alerts.StateFile, nil
	}
	dir, err := c.DataDirPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "alerts-state.json"), nil
}

// SpoolDir returns the spool directory.
func (c Config) SpoolDir() (string, error) {
	if c.Spool.Dir != "" {
		return c.Spool.Dir, nil
	}
	dir, err := c.DataDirPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "spool"), nil
}

// Redacted returns the configuration as YAML with secrets masked, for `gpuprice config`:
// the store DSN's password, credential-like source endpoint parameters, and any
// secret value of the environment (Secrets) wherever it appears.
func (c Config) Redacted() string { return c.RedactedNotes(nil) }

// RedactedNotes is Redacted with a comment after the keys notes names by their
// dotted path (ingest.batch_size: "the store's own"), for values whose meaning the
// value alone does not say.
func (c Config) RedactedNotes(notes map[string]string) string {
	c.Store = store.Redact(c.Store)
	if len(c.Sources) > 0 {
		src := make(map[string]Source, len(c.Sources))
		for name, sc := range c.Sources {
			if sc.Endpoint != "" {
				sc.Endpoint = store.Redact(sc.Endpoint)
			}
			src[name] = sc
		}
		c.Sources = src
	}
	var doc yaml.Node
	if err := doc.Encode(c); err != nil {
		return fmt.Sprintf("config: %v", err)
	}
	annotate(&doc, "", notes)
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return fmt.Sprintf("config: %v", err)
	}
	return c.Redactor().Redact(string(out))
}

// annotate sets the line comment of every mapping key under n whose dotted path
// (below prefix) notes names.
func annotate(n *yaml.Node, prefix string, notes map[string]string) {
	if len(notes) == 0 || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		path := prefix + n.Content[i].Value
		if note, ok := notes[path]; ok {
			if v := n.Content[i+1]; v.Kind != yaml.ScalarNode && len(v.Content) == 0 {
				v.LineComment = note // after the {} or []
			} else {
				n.Content[i].LineComment = note
			}
		}
		annotate(n.Content[i+1], path+".", notes)
	}
}

// ParseMemoryLimit reads a memory limit as GOMEMLIMIT writes it: a number of bytes
// with an optional unit (B, KiB, MiB, GiB, TiB), or "off" (0: no limit).
func ParseMemoryLimit(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "off" {
		return 0, nil
	}
	num, mult := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size such as 64MiB, 1GiB or off", s)
	}
	return n * mult, nil
}

// Package scrapers defines what a price source is and keeps the registry of them.
// Each source lives in its own package under scrapers/<name>/ and is the one home of
// its provider's facts: it registers itself from init() with an Info that holds the
// provider's tier and default interconnect, the pricing kinds it publishes, its
// defaults (endpoint, schedule), the naming rules the canonicaliser needs for the
// provider's GPU names, its sample configuration and its README row.
// scrapers/all blank-imports every one; the README source table and the sources
// section of deploy/gpuprice.example.yaml are generated from this registry
// (go generate ./scrapers/all), and a test fails when they drift.
package scrapers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
)

// Emitter receives what a source collects. Emit hands over one raw observation;
// ingest normalises it and applies the plausibility gates.
type Emitter interface {
	Emit(o schemas.Observation)
}

// SignalEmitter is an Emitter that also takes risk and availability signals
// (schemas.Signal): the run of a collection that stores them. A source that reads
// signals apart from its price rows (a capacity endpoint, the depth of a whole
// marketplace answer) sends them through EmitSignals; a signal a price row carries
// is read by Info.Signals instead.
type SignalEmitter interface {
	EmitSignal(s schemas.Signal)
}

// EmitSignals sends sigs to e when e takes signals, and reports whether it does (a
// caller collecting only rows does not; a run whose store keeps no signals takes
// them and drops them).
func EmitSignals(e Emitter, sigs ...schemas.Signal) bool {
	se, ok := e.(SignalEmitter)
	if !ok {
		return false
	}
	for _, s := range sigs {
		se.EmitSignal(s)
	}
	return true
}

// EmitterFunc adapts a function to Emitter.
type EmitterFunc func(o schemas.Observation)

// Emit calls f(o).
func (f EmitterFunc) Emit(o schemas.Observation) { f(o) }

// Source collects prices from one provider. Collect emits every row it finds and
// returns an error when it could not read all that it should have (rows already emitted
// are kept; the run is then recorded degraded or failed).
type Source interface {
	Collect(ctx context.Context, e Emitter) error
}

// Expectation is what a source declares it must see in a healthy run (the coverage
// guard): falling short marks the run degraded with what is missing.
type Expectation struct {
	MinRows int      // at least this many accepted rows
	SKUs    []string // SKUs that must appear
	// Models are GPU models (the first part of a catalog name: "H100" for
	// H100-SXM-80GB) of which at least MinModels must have an accepted row. A source
	// whose offers come and go with its stock (RunPod) cannot promise any one SKU,
	// but an answer that prices few of its major models is not a routine one.
	Models    []string
	MinModels int
}

// Model is the GPU model of a catalog GPU name, the part before its first "-"
// ("H100" for H100-SXM-80GB), which Expectation.Models name.
func Model(gpu string) string {
	m, _, _ := strings.Cut(gpu, "-")
	return m
}

// Expecter is an optional ability of a Source.
type Expecter interface {
	Expect() Expectation
}

// Config is what a factory gets to build a source.
type Config struct {
	Name     string
	Endpoint string         // the first URL to request; "" means the source's default
	Options  map[string]any // source-specific settings from the config file
	Client   *fetch.Client
	Logger   *slog.Logger // never nil
	Now      func() time.Time
	// Secrets holds the values of the source's Info.SecretEnv variables that are set
	// (read by the caller from the environment or NAME_FILE): sources never read the
	// environment themselves.
	Secrets map[string]string
}

// Secret returns the value of the secret variable name, "" when it is not set.
func (c Config) Secret(name string) string { return c.Secrets[name] }

// DecodeOptions decodes c.Options into v (a pointer to a struct with json tags),
// rejecting keys v does not have.
func (c Config) DecodeOptions(v any) error {
	if len(c.Options) == 0 {
		return nil
	}
	data, err := json.Marshal(c.Options)
	if err != nil {
		return fmt.Errorf("%s: options: %w", c.Name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: options: %w", c.Name, err)
	}
	return nil
}

// EndpointOr returns the configured endpoint, or def.
func (c Config) EndpointOr(def string) string {
	if c.Endpoint != "" {
		return c.Endpoint
	}
	return def
}

// Factory builds a source from its config. It validates options without network I/O.
type Factory func(Config) (Source, error)

// Info describes a source for `gpuprice sources`, the scheduler, the provider catalog,
// the canonicaliser and the generated documentation.
type Info struct {
	Name            string   // registry name, also the config key sources.<name>
	Provider        string   // provider written on its rows
	Method          string   // api, scrape
	Pricing         []string // pricing kinds it publishes
	Credentials     string   // "" when none are needed, else what (from the environment)
	DefaultEndpoint string
	Schedule        string // default cron schedule
	Description     string

	// The provider's facts (schemas.RegisterProvider): its tier and the interconnect
	// of its multi-GPU SKUs when a row does not state one, and what the canonicaliser
	// must know about its GPU names.
	Tier         string
	Interconnect string
	Naming       schemas.Naming

	// SecretEnv are the environment variables holding the source's credentials; the
	// caller reads them (NAME_FILE too) into Config.Secrets and redacts their values.
	SecretEnv []string
	// SampleOptions is the YAML of sources.<name>.options for the sample configuration
	// (every option, commented where it is not the default), like telegraf's
	// sample.conf; "" for a source without options.
	SampleOptions string
	// Doc is the source's row of the README source table.
	Doc Doc
	// QuarantineShare is the share of a run's priced rows (accepted + quarantined)
	// that may be quarantined — unreadable, failing a gate, held as suspect, or a
	// placeholder the provider is known to publish — before the run is degraded:
	// what the source's normal answers carry. 0: any quarantined row degrades the
	// run. Rows the provider says are not offered are no problem and never count.
	QuarantineShare float64
	// Signals, when set, reads the risk and availability signals a row of the source
	// carries (RunPod: each GPU type's stock per cloud), offered or not: ingest
	// stores them beside the prices, one per series and time (docs/risk.md).
	Signals func(o schemas.Observation) []schemas.Signal
}

// Doc is a source's row of the README source table: what it reads and what it
// publishes, in a few words each ("—" for a kind it does not publish).
type Doc struct {
	ProviderTitle string // "Google Cloud"
	Method        string // "Retail Prices API (JSON, paged)"
	OnDemand      string
	Spot          string
	Reserved      string // reserved terms and commitments
	Credentials   string // "none", "`RUNPOD_API_KEY` (optional)"
}

type entry struct {
	info    Info
	factory Factory
}

var (
	mu       sync.RWMutex
	registry = map[string]entry{}
)

// Register adds a source and registers its provider's facts with the canonicaliser and
// the provider catalog (schemas.RegisterProvider). It panics on an empty name or
// provider, a nil factory, a duplicate, or an invalid tier or interconnect.
func Register(info Info, f Factory) {
	if info.Name == "" {
		panic("scrapers: Register with empty name")
	}
	if f == nil {
		panic("scrapers: Register " + info.Name + " with nil factory")
	}
	if info.Provider == "" {
		panic("scrapers: Register " + info.Name + " without a provider")
	}
	if info.QuarantineShare < 0 || info.QuarantineShare >= 1 {
		panic(
			fmt.Sprintf(
				"scrapers: Register %s with QuarantineShare %g, not in [0, 1)",
				info.Name,
				info.QuarantineShare,
			),
		)
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[info.Name]; dup {
		panic("scrapers: Register called twice for " + info.Name)
	}
	schemas.RegisterProvider(
		schemas.Provider{Name: info.Provider, Tier: info.Tier, Interconnect: info.Interconnect},
		info.Naming,
	)
	registry[info.Name] = entry{info, f}
}

// SecretEnv returns the credential variables of every registered source, sorted.
func SecretEnv() []string {
	mu.RLock()
	defer mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	for _, e := range registry {
		for _, v := range e.info.SecretEnv {
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Names returns the registered source names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns a source's info and factory.
func Lookup(name string) (Info, Factory, bool) {
	mu.RLock()
	defer mu.RUnlock()
	e, ok := registry[name]
	return e.info, e.factory, ok
}

// Rejecter is an optional ability of an Emitter: a source hands over a record it found
// but could not read (a malformed row), so that it is quarantined with the reason
// instead of lost.
type Rejecter interface {
	Reject(raw string, reason string)
}

// Reject quarantines raw through e when e can, and reports whether it could.
func Reject(e Emitter, raw, reason string) bool {
	if r, ok := e.(Rejecter); ok {
		r.Reject(raw, reason)
		return true
	}
	return false
}

// Secrets returns the values of the source's SecretEnv variables that getenv finds
// set, for Config.Secrets (callers pass os.Getenv after reading NAME_FILE variables).
func (i Info) Secrets(getenv func(string) string) map[string]string {
	var out map[string]string
	for _, name := range i.SecretEnv {
		if v := getenv(name); v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = v
		}
	}
	return out
}

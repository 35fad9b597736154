package ingest

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/scrapers"
)

// ErrUnknownSource is the error of NewJob for a name no source registered.
var ErrUnknownSource = errors.New("no such source")

// SourceSpec is what a registered source is built with.
type SourceSpec struct {
	Endpoint string         // the first URL to request; "" means the source's default
	Options  map[string]any // the source's options from the config file (or an archive)
	Client   *fetch.Client
	Logger   *slog.Logger // scoped with the source's name by NewJob; nil means discard
	// Now is the source's clock (fixed at the recorded time for a recording or a
	// reparse); nil means time.Now.
	Now func() time.Time
	// Getenv gives the values of the source's secret variables (Info.SecretEnv):
	// sources never read the environment themselves. nil means none is set.
	Getenv func(string) string
	// ExpectRows, when > 0, is the fewest accepted rows a routine answer of this
	// deployment has (sources.<name>.expect_rows): it replaces the source's own
	// coverage minimum, for a mirror or an account that sees part of the catalog.
	// The source's other expectations (SKUs, models) stand.
	ExpectRows int
}

// NewJob builds the registered source name from spec: the one factory of sources,
// used by collect, serve and reparse. An unregistered name is an ErrUnknownSource
// that lists the known ones.
func NewJob(name string, spec SourceSpec) (Job, error) {
	info, factory, ok := scrapers.Lookup(name)
	if !ok {
		return Job{}, fmt.Errorf("%w %s (known: %s)", ErrUnknownSource, name, strings.Join(scrapers.Names(), ", "))
	}
	if spec.Logger == nil {
		spec.Logger = slog.New(slog.DiscardHandler)
	}
	if spec.Now == nil {
		spec.Now = time.Now
	}
	if spec.Getenv == nil {
		spec.Getenv = func(string) string { return "" }
	}
	src, err := factory(scrapers.Config{
		Name: name, Endpoint: spec.Endpoint, Options: spec.Options, Client: spec.Client,
		Logger: spec.Logger.With("source", name), Now: spec.Now,
		Secrets: info.Secrets(spec.Getenv),
	})
	if err != nil {
		return Job{}, err
	}
	if spec.ExpectRows > 0 {
		src = expectRows{Source: src, rows: spec.ExpectRows}
	}
	return Job{Name: name, Source: src}, nil
}

// expectRows is a source whose coverage minimum the configuration sets.
type expectRows struct {
	scrapers.Source
	rows int
}

// Expect is the source's expectation with the configured minimum of rows.
func (s expectRows) Expect() scrapers.Expectation {
	var e scrapers.Expectation
	if x, ok := s.Source.(scrapers.Expecter); ok {
		e = x.Expect()
	}
	e.MinRows = s.rows
	return e
}

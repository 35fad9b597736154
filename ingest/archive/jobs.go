package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// JobOptions configure the sources Jobs builds.
type JobOptions struct {
	Timeout   time.Duration // per request
	UserAgent string
	MaxBody   int64 // response body cap, as when collecting
	Retries   int   // tries per request; at least 10, to cover every recorded retry
	Logger    *slog.Logger
	// Getenv gives the secrets a source's mode may depend on (runpod's API key):
	// a source takes its recorded mode only when the same variable is set.
	Getenv func(string) string
}

// Jobs builds the archived sources (only the named ones when only is not empty),
// each with the endpoint and options it was recorded with, a clock fixed at its
// recorded observation time (so rebuilt rows replace the recorded run's), and a
// client answered by the archive alone: no request leaves the machine. Requests the
// archive cannot answer are listed by Misses.
func (a *Archive) Jobs(only []string, o JobOptions) ([]ingest.Job, error) {
	names := make([]string, 0, len(a.Manifest.Sources))
	for n := range a.Manifest.Sources {
		if n != FXSource {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(only) > 0 {
		for _, n := range only {
			if _, ok := a.Manifest.Sources[n]; !ok {
				return nil, fmt.Errorf("source %s is not in the archive (it has: %s)", n, strings.Join(names, ", "))
			}
		}
		names = only
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("archive: the archive in %s records no source", a.Dir)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	client := a.client(o)
	prov := a.provenanceByURL()
	var jobs []ingest.Job
	var errs []error
	for _, n := range names {
		info := a.Manifest.Sources[n]
		observed := info.ObservedAt
		job, err := ingest.NewJob(n, ingest.SourceSpec{Endpoint: info.Endpoint, Options: info.Options, Client: client,
			Logger: o.Logger, Now: func() time.Time { return observed }, Getenv: o.Getenv})
		if errors.Is(err, ingest.ErrUnknownSource) {
			errs = append(errs, fmt.Errorf("archive: archived source %s is not a known source (known: %s)",
				n, strings.Join(scrapers.Names(), ", ")))
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		src := job.Source
		if info.ExpectRows > 0 || a.Manifest.Origin != "" {
			src = recordedSource{
				Source: src,
				expect: info.ExpectRows,
				origin: a.Manifest.Origin,
				prov:   prov,
				count:  a.countProvenance,
			}
		}
		jobs = append(jobs, ingest.Job{Name: n, Source: src})
	}
	return jobs, errors.Join(errs...)
}

// client is a fetch client answered by the archive alone. Answers come from disk:
// retries need no waiting, a Retry-After is not honoured again, and the tries cover
// every recorded retry.
func (a *Archive) client(o JobOptions) *fetch.Client {
	client := fetch.New(fetch.Options{
		Timeout: o.Timeout, UserAgent: o.UserAgent, MaxBody: o.MaxBody,
		Backoff: fetch.Backoff{MaxTries: max(o.Retries, 10), Initial: time.Millisecond, Max: 10 * time.Millisecond},
		Logger:  o.Logger,
	})
	client.HTTP.Transport = a
	return client
}

// FXRates returns the ECB reference rates the archive recorded, as an
// ingest.FXConfig.Refresh answered from the archive (no network), or nil when the
// archive holds none (then rates come from the store, or the ECB).
func (a *Archive) FXRates(o JobOptions) func(context.Context) ([]schemas.FXRate, error) {
	info, ok := a.Manifest.Sources[FXSource]
	if !ok {
		return nil
	}
	return ingest.ECBRates(a.client(o), info.Endpoint)
}

// provenanceByURL maps the redacted URL of every response that carries a provenance
// to it; a URL answered by responses of different provenance gets the least faithful.
func (a *Archive) provenanceByURL() map[string]string {
	rank := map[string]int{ProvenanceVerbatim: 1, ProvenanceRetyped: 2, ProvenanceConstructed: 3}
	m := map[string]string{}
	for _, e := range a.Manifest.Entries {
		if e.Provenance != "" && rank[e.Provenance] >= rank[m[e.URL]] {
			m[e.URL] = e.Provenance
		}
	}
	return m
}

// countProvenance counts one row of a recorded example under the provenance of its
// response.
func (a *Archive) countProvenance(kind string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.provRows == nil {
		a.provRows = map[string]int{}
	}
	a.provRows[kind]++
}

// ProvenanceRows counts the priced rows the sources of a recorded example gave, by
// the provenance of the response each was parsed from (the one its source_url
// names): ProvenanceVerbatim, ProvenanceRetyped, ProvenanceConstructed, or "" for a
// row whose response states none. Empty for a collection's archive.
func (a *Archive) ProvenanceRows() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]int, len(a.provRows))
	for k, v := range a.provRows {
		out[k] = v
	}
	return out
}

// recordedSource is an archived source reparsed from a recorded example: its rows
// are marked with the archive's origin and the provenance of their response
// (offers without a price left out), and its coverage guard is the row count
// recorded with the example (when there is one).
type recordedSource struct {
	scrapers.Source
	expect int
	origin string
	prov   map[string]string // redacted response URL → provenance
	count  func(kind string)
}

// Collect runs the source, marking every row.
func (s recordedSource) Collect(ctx context.Context, e scrapers.Emitter) error {
	if s.origin == "" {
		return s.Source.Collect(ctx, e)
	}
	return s.Source.Collect(ctx, originEmitter{e: e, origin: s.origin, prov: s.prov, count: s.count})
}

// Expect is the recorded coverage guard, else the source's own.
func (s recordedSource) Expect() scrapers.Expectation {
	if s.expect > 0 {
		return scrapers.Expectation{MinRows: s.expect}
	}
	if x, ok := s.Source.(scrapers.Expecter); ok {
		return x.Expect()
	}
	return scrapers.Expectation{}
}

// Unpriced reports whether o is an offer listed without a price: a note in its
// place ("Contact sales", "Pre order") or a bare 0 (RunPod's price of a cloud without
// the GPU). A collection counts the provider's own "not available" markers and a
// bare 0 as not offered and quarantines any other note; a recorded example leaves
// them out, as its coverage guard does (every row of an example is a price).
func Unpriced(o schemas.Observation) bool { return o.PriceNative == 0 }

// originEmitter sets schemas.AttrOrigin on every priced row (Unpriced rows are left
// out), and schemas.AttrProvenance to the provenance of the response the row's
// source_url names, counting it; rejects are passed on.
type originEmitter struct {
	e      scrapers.Emitter
	origin string
	prov   map[string]string
	count  func(kind string)
}

// EmitSignal forwards s to the emitter it wraps, when that takes signals.
func (m originEmitter) EmitSignal(s schemas.Signal) { scrapers.EmitSignals(m.e, s) }

func (m originEmitter) Emit(o schemas.Observation) {
	if Unpriced(o) {
		return
	}
	attrs := make(map[string]string, len(o.Attrs)+2)
	for k, v := range o.Attrs {
		attrs[k] = v
	}
	attrs[schemas.AttrOrigin] = m.origin
	kind := m.prov[fetch.RedactURL(o.SourceURL)]
	if kind != "" {
		attrs[schemas.AttrProvenance] = kind
	}
	if m.count != nil {
		m.count(kind)
	}
	o.Attrs = attrs
	m.e.Emit(o)
}

// Reject quarantines through the wrapped emitter (ingest's runs always can).
func (m originEmitter) Reject(raw, reason string) { scrapers.Reject(m.e, raw, reason) }

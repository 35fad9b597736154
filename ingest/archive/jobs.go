package archive

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/fetch"
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
		names = append(names, n)
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
	// Answers come from disk: retries need no waiting, a Retry-After is not honoured
	// again, and the tries cover every recorded retry.
	client := fetch.New(fetch.Options{
		Timeout: o.Timeout, UserAgent: o.UserAgent, MaxBody: o.MaxBody,
		Backoff: fetch.Backoff{MaxTries: max(o.Retries, 10), Initial: time.Millisecond, Max: 10 * time.Millisecond},
		Logger:  o.Logger,
	})
	client.HTTP.Transport = a
	var jobs []ingest.Job
	var errs []error
	for _, n := range names {
		sinfo, factory, ok := scrapers.Lookup(n)
		if !ok {
			errs = append(errs, fmt.Errorf("archive: archived source %s is not a known source (known: %s)", n, strings.Join(scrapers.Names(), ", ")))
			continue
		}
		info := a.Manifest.Sources[n]
		observed := info.ObservedAt
		src, err := factory(scrapers.Config{
			Name: n, Endpoint: info.Endpoint, Options: info.Options, Client: client,
			Logger: o.Logger.With("source", n), Now: func() time.Time { return observed },
			Secrets: sinfo.Secrets(o.Getenv),
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		jobs = append(jobs, ingest.Job{Name: n, Source: src})
	}
	return jobs, errors.Join(errs...)
}

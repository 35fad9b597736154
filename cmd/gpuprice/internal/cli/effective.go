package cli

import (
	"github.com/gpuprice/gpuprice/analytics/api"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/config"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/fx"
)

// effectiveConfig is the configuration in effect, for `gpuprice config`: every value
// a command would use, with the defaults filled in where the file leaves them unset
// (the store's DSN, the data, spool and alert state paths, the User-Agent, serve's
// limits, every source with its schedule and endpoint), and a note on the keys whose
// unset value means something the value does not say.
func (a *app) effectiveConfig() (config.Config, map[string]string, error) {
	c := a.cfg
	var err error
	if c.Store, err = c.StoreDSN(a.storeDSN); err != nil {
		return c, nil, err
	}
	if c.Spool.Dir, err = c.SpoolDir(); err != nil {
		return c, nil, err
	}
	if c.Alerts.StateFile, err = c.AlertStatePath(); err != nil {
		return c, nil, err
	}
	if c.DataDir, err = c.DataDirPath(); err != nil {
		return c, nil, err
	}
	if c.HTTP.UserAgent == "" {
		c.HTTP.UserAgent = fetch.DefaultUserAgent
	}
	sv, d := &c.Serve, api.DefaultHTTPLimits
	for _, f := range []struct{ v, def *int64 }{
		{(*int64)(&sv.ReadHeaderTimeout), (*int64)(&d.ReadHeaderTimeout)},
		{(*int64)(&sv.ReadTimeout), (*int64)(&d.ReadTimeout)},
		{(*int64)(&sv.WriteTimeout), (*int64)(&d.WriteTimeout)},
		{(*int64)(&sv.IdleTimeout), (*int64)(&d.IdleTimeout)},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if sv.MaxHeaderBytes <= 0 {
		sv.MaxHeaderBytes = d.MaxHeaderBytes
	}
	if sv.MaxConnsPerClient == 0 {
		sv.MaxConnsPerClient = api.DefaultMaxConnsPerClient
	}
	sources := make(map[string]config.Source, len(scrapers.Names()))
	for _, n := range scrapers.Names() {
		info, _, _ := scrapers.Lookup(n)
		sc := c.Sources[n]
		enabled := sc.IsEnabled()
		sc.Enabled = &enabled
		if sc.Schedule == "" {
			sc.Schedule = info.Schedule
		}
		if sc.Endpoint == "" {
			sc.Endpoint = info.DefaultEndpoint
		}
		sources[n] = sc
	}
	fxc := c.Sources[fxSourceName]
	fxEnabled := fxc.IsEnabled()
	fxc.Enabled = &fxEnabled
	if fxc.Endpoint == "" {
		fxc.Endpoint = fx.History90Endpoint
	}
	sources[fxSourceName] = fxc
	c.Sources = sources
	notes := map[string]string{
		"memory_limit":               "unset: 48MiB for collect and reparse, none for the other commands",
		"http.cache_dir":             "unset: no cache, every request is sent whole",
		"ingest.batch_size":          "0: the store's own (DuckDB 122880 rows, ClickHouse 50000)",
		"ingest.batch_bytes":         "0: the store's own (DuckDB 8 MiB, ClickHouse 64 MiB)",
		"ingest.source_timeout":      "0s would be: never cut off",
		"http.min_interval":          "least time between two requests to one host",
		"archive.s3.bucket":          "unset: recorded archives stay on disk",
		"fx":                         "static rates, USD per unit; the ECB's daily rates win when they can be fetched",
		"serve.public_url":           "unset: alert notifications carry no links",
		"serve.allowed_hosts":        "unset: localhost, 127.0.0.1 and [::1] when listening on loopback, any otherwise",
		"serve.max_conns_per_client": "per client address; -1: no cap",
		"sources.fx.schedule":        "the ECB's rates are fetched with every collection",
	}
	if a.cfg.MemoryLimit != "" {
		delete(notes, "memory_limit")
	}
	return c, notes, nil
}

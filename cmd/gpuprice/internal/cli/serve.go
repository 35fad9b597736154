package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/analytics/api"
	"github.com/gpuprice/gpuprice/analytics/api/web"
	"github.com/gpuprice/gpuprice/analytics/report"
	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/schedule"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

func init() { addCommand((*app).serveCmd) }

// fxRefreshEvery bounds how often the long-running service asks the ECB for rates
// (the ECB publishes once a working day).
const fxRefreshEvery = time.Hour

func (a *app) serveCmd() *cobra.Command {
	var listen string
	var runNow bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run every enabled source on its schedule and serve prices, /metrics and a web page",
		Long: `serve is the long-running service: each enabled source runs on its own cron
schedule (sources.<name>.schedule, else the source's default; see ` + "`gpuprice sources`" + `),
a run still going when its next turn comes is skipped, spooled batches are replayed
before every run, and ECB rates are refreshed at most hourly. With alert rules
configured, they are evaluated on alerts.schedule (default every 15 minutes) and
after the first collections of --run-now, as ` + "`gpuprice alerts`" + ` does. With
digest.schedule set, the weekly digest (` + "`gpuprice digest`" + `) is sent on it to the
webhook and Slack notifiers.

HTTP endpoints (bound to 127.0.0.1:8080 unless --listen says otherwise):
  /                  the web app (/page: a plain HTML table of the cheapest offers and the last runs)
  /api/v1/...        JSON API: prices, series, volatility, spreads, tokens, history, index, alerts,
                     sources, runs, quarantine, gpus, fx; parameters named like the CLI's flags,
                     ?format=csv where a table fits (see docs/api.md)
  /openapi.json      the API's OpenAPI 3 document
  /mcp               the read-only MCP tools over streamable HTTP (what ` + "`gpuprice mcp`" + ` serves on stdio)
  POST /api/v1/collect?source=NAME
                     run a source now; needs "Authorization: Bearer $GPUPRICE_API_TOKEN"
                     (off unless GPUPRICE_API_TOKEN is set for serve)
  /api/prices, /api/runs   the first API (aliases)
  /metrics           Prometheus metrics: runs, rows, durations, spool, cheapest $/GPU-hour per
                     provider and region, index, spreads
  /healthz           200 when the store answers

While serve holds the embedded DuckDB store, the CLI's read commands ask this server
(its address is in <data_dir>/serve.json).`,
		Example: `  gpuprice serve --listen :8080 --run-now`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), listen, runNow)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to serve HTTP on")
	cmd.Flags().BoolVar(&runNow, "run-now", false, "run every enabled source once at start, then on schedule")
	return cmd
}

func (a *app) serve(ctx context.Context, listen string, runNow bool) error {
	st, deferred, err := a.openStoreToWrite(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	spool, err := a.spool()
	if err != nil {
		return err
	}
	jobs, err := a.jobs(nil)
	if err != nil {
		return err
	}
	runner, err := a.runner(st)
	if err != nil {
		return err
	}
	runner.FX.MaxAge = fxRefreshEvery
	runner.MigrateFirst = deferred
	sv := a.cfg.Serve
	cfg := api.Config{Web: web.FS, HTTP: api.HTTPLimits{ReadHeaderTimeout: sv.ReadHeaderTimeout,
		ReadTimeout:  sv.ReadTimeout,
		WriteTimeout: sv.WriteTimeout, IdleTimeout: sv.IdleTimeout, MaxHeaderBytes: sv.MaxHeaderBytes,
		MaxConnsPerClient: sv.MaxConnsPerClient}, AllowedHosts: sv.AllowedHosts, PublicURL: sv.PublicURL}
	if dsn, err := a.cfg.StoreDSN(a.storeDSN); err == nil {
		cfg.StoreName = report.CiteStore(dsn)
	}
	for _, j := range jobs {
		info, _, _ := scrapers.Lookup(j.Name)
		spec := info.Schedule
		if c := a.cfg.Sources[j.Name].Schedule; c != "" {
			spec = c
		}
		cfg.Jobs = append(cfg.Jobs, api.Job{Source: j.Name, Schedule: spec})
	}
	reader, err := a.reader(st)
	if err != nil {
		return err
	}
	cfg.CollectToken = os.Getenv(api.TokenEnv)
	cfg.CollectTimeout = a.cfg.Ingest.SourceTimeout
	deps := api.Deps{
		Store:  st,
		Reader: reader,
		// The one ingest.Runner of the service: spool replay, FX (refreshed at most
		// every fxRefreshEvery), collection, run records and the bars over the span.
		RunSources: schedule.Collect(runner, jobs, ingest.Options{FX: ingest.FXEager}),
		SpoolRows:  spool.Rows,
		Ready:      runner.Ready,
		Recover:    runner.Recover,
		Redact:     a.redactor().Redact,
		Log:        a.log,
	}
	// Of serve processes sharing a store, one evaluates the alerts and sends the
	// digest: hold says whether this one does (hold is nil when neither is set).
	var hold func(ctx context.Context) error
	if len(a.cfg.Alerts.Rules) > 0 || a.cfg.Digest.Schedule != "" {
		statePath, err := a.cfg.AlertStatePath()
		if err != nil {
			return err
		}
		// Of two serve processes sharing the state file, one evaluates and notifies;
		// the other stands by (and takes over when the first exits).
		leader := alert.NewLeader(statePath)
		defer leader.Release()
		// Of serve processes sharing the store (whatever their state files), the
		// holder of the store's "alerts" lease evaluates; it renews the lease while it
		// runs and gives it up on exit, and another takes over once it is released
		// or expires.
		lease := alert.NewStoreLease(st, a.log)
		if lease != nil {
			go lease.Keep(ctx)
			defer lease.Release()
		}
		hold = func(ctx context.Context) error {
			if err := leader.Acquire(); err != nil {
				return err
			}
			if lease != nil {
				return lease.Hold(ctx)
			}
			return nil
		}
	}
	if len(a.cfg.Alerts.Rules) > 0 {
		if _, err := a.alertEngine(); err != nil { // notifiers' URLs set: fail at start, not at the first turn
			return err
		}
		cfg.AlertsSchedule = a.cfg.Alerts.ScheduleSpec()
		deps.EvaluateAlerts = func(ctx context.Context) (alert.Report, error) {
			if err := hold(ctx); err != nil {
				return alert.Report{}, err
			}
			return a.evaluateAlerts(ctx, st, time.Now().UTC(), false)
		}
		reader.DryRunAlerts = func(ctx context.Context, at time.Time) (alert.Report, error) {
			return a.evaluateAlerts(ctx, st, at, true)
		}
	}
	if a.cfg.Digest.Schedule != "" {
		send, err := a.digestSender(reader, hold)
		if err != nil {
			return err
		}
		cfg.DigestSchedule, deps.SendDigest = a.cfg.Digest.Schedule, send
	}
	srv, err := api.New(cfg, deps)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if dir, err := a.cfg.DataDirPath(); err == nil {
		dsn, _ := a.cfg.StoreDSN(a.storeDSN)
		remove, err := api.WriteAddress(dir, api.Address{URL: api.URLOf(ln.Addr()), Store: store.Redact(dsn),
			PID: os.Getpid(), StartedAt: time.Now().UTC()})
		if err != nil {
			a.log.Warn("server address not recorded: CLI commands cannot reach this server while it holds the store", "error",
				err.Error())
		} else {
			defer remove()
		}
	}
	// Said once the address file is written: whoever reads this line finds the server.
	fmt.Fprintf(a.stdout, "gpuprice serving on http://%s\n", ln.Addr())
	err = srv.Serve(ctx, ln, runNow)
	var stopped *api.Stopped
	if errors.As(err, &stopped) {
		// Stopped by a signal: exit ExitInterrupted (130), as collect does, so that a
		// supervisor or script sees the service did not end on its own; the runs
		// cut short are in the store as "interrupted" with their counts.
		if stopped.Lost() {
			return fmt.Errorf("%w: %w: %s", ErrInterrupted, ErrRowsLost, stopped.Error())
		}
		return fmt.Errorf("%w: %s", ErrInterrupted, stopped.Error())
	}
	return err
}

// runningServer returns the URL of the running `gpuprice serve` that recorded its
// address in the data directory for the same store.
func (a *app) runningServer() (string, bool) {
	dir, err := a.cfg.DataDirPath()
	if err != nil {
		return "", false
	}
	addr, err := api.ReadAddress(dir)
	if err != nil {
		return "", false
	}
	dsn, err := a.cfg.StoreDSN(a.storeDSN)
	if err != nil || store.Redact(dsn) != addr.Store {
		return "", false
	}
	return addr.URL, true
}

// APIRoutes lists the server's API routes (method, path), for the OpenAPI test.
func APIRoutes() [][2]string { return api.Routes() }

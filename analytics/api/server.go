// Package api is gpuprice's long-running service: it runs every enabled source on
// its cron schedule and evaluates the alert rules on theirs (through ingest/schedule,
// which it reacts to with its caches and metrics), and serves the HTTP API,
// Prometheus metrics and the web page.
//
// Everything it works with is injected (Deps): the store it reads, the one call that
// runs sources now (the pipeline: spool replay, FX, collection, run record, bars),
// the alert evaluation, the spool's size and a logger. The command line (`gpuprice
// serve`) builds those from the configuration; tests build them from real parts.
package api

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/analytics/answer"
	"github.com/gpuprice/gpuprice/analytics/digest"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/ingest/schedule"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// CheckEvery is how often the server asks the store whether another process wrote
// (store.ChangeMarker), to refresh its snapshot of the current prices.
var CheckEvery = 5 * time.Second

// TokenEnv is the environment variable whose value POST /api/v1/collect requires as
// a bearer token.
const TokenEnv = "GPUPRICE_API_TOKEN"

// Job is one scheduled source.
type Job = schedule.Job

// Config is what the server is told to do.
type Config struct {
	// Config are the jobs and the alerts' and digest's schedules.
	schedule.Config
	// PublicURL is the web app's root (serve.public_url): the digest's sections
	// link to their charts under it ("": no links).
	PublicURL string
	// Stale is how far behind its provider's newest observation a series may be and
	// still count as on offer (analytics.CurrentOnly); 0 means analytics.StaleAfter.
	Stale time.Duration
	// CollectToken, when set, is the bearer token POST /api/v1/collect needs (from
	// TokenEnv); without it the endpoint is off. It is never logged.
	CollectToken string
	// CollectTimeout bounds how long POST /api/v1/collect may take to answer
	// (the sources' own timeout); 0 means 10 minutes.
	CollectTimeout time.Duration
	// CacheTTL is how long an API answer is kept and served to every client that
	// asks the same (0: not kept); BarsCacheTTL the same for answers computed from
	// bars (also their Cache-Control max-age). Every run of a source clears them.
	// New sets 10 s and 60 s when both are zero; negative means not kept.
	CacheTTL, BarsCacheTTL time.Duration
	// Web, when set, is the web application served at / (its index.html and assets);
	// the server-rendered page then stays at /page. Without it / is that page.
	Web fs.FS
	// StoreName is how /api/v1/report cites the store (buyer.CiteStore: no path,
	// no password).
	StoreName string
	// HTTP are the HTTP server's timeouts and header limit (zero fields: the
	// defaults).
	HTTP HTTPLimits
	// AllowedHosts are the Host header values answered (a name alone allows it with
	// the listening port too); others get 421. None: localhost, 127.0.0.1 and [::1]
	// when listening on loopback (against DNS rebinding), any otherwise; "*": any.
	AllowedHosts []string
}

// RunFunc runs the named sources now, through the whole pipeline, and returns their
// run records (one per source); schedule.Collect makes one of an ingest.Runner.
type RunFunc = schedule.RunFunc

// Deps are the server's collaborators.
type Deps struct {
	Store store.Store
	// Reader computes the API's reports (the CLI's code, over the same store).
	Reader *query.Reader
	// RunSources runs sources now: every scheduled turn and --run-now call it.
	RunSources RunFunc
	// EvaluateAlerts evaluates the alert rules as of now and notifies; nil when no
	// rules are configured.
	EvaluateAlerts func(ctx context.Context) (alert.Report, error)
	// SendDigest builds the weekly digest as of now and sends it to its notifiers
	// (digest.Send); nil when digest.schedule is not set.
	SendDigest func(ctx context.Context) ([]digest.Delivery, error)
	// SpoolRows reports how many rows wait in the on-disk spool; nil leaves the
	// gauge out.
	SpoolRows func() (int, error)
	// Ready reports whether the store is reachable and migrated (migrating it when
	// it was away at start); nil: the store is taken as migrated. /readyz answers
	// 503 while it fails.
	Ready func(ctx context.Context) error
	// Recover rebuilds the bars of the runs killed before their end and records them
	// as interrupted (ingest.Runner.Recover); Serve calls it at start. nil: none.
	Recover func(ctx context.Context) ([]schemas.Run, error)
	// Redact is the redaction of the logs, applied to every answer's body; nil:
	// URLs' credentials only (schemas.RedactText).
	Redact func(string) string
	Log    *slog.Logger
}

// Server is the service. Build it with New.
type Server struct {
	cfg     Config
	st      store.Store
	reader  *query.Reader
	alerts  func(ctx context.Context) (alert.Report, error)
	digest  func(ctx context.Context) ([]digest.Delivery, error)
	spool   func() (int, error)
	ready   func(ctx context.Context) error
	redact  func(string) string
	log     *slog.Logger
	metrics *serverMetrics
	sched   *schedule.Service // the runs of the sources, the alerts and the digest on their schedules
	handler http.Handler
	cache   *answer.Cache
	snap    *query.Current // the current prices, refreshed after runs and on others' writes
	busy    chan struct{}  // a slot per answer computed at once (MaxComputing)
}

// New checks the configuration (every schedule must parse) and builds the server.
func New(cfg Config, d Deps) (*Server, error) {
	if d.Store == nil || d.RunSources == nil || d.Reader == nil {
		return nil, errors.New("server: a store, a report reader and a RunSources function are required")
	}
	if cfg.CacheTTL == 0 && cfg.BarsCacheTTL == 0 {
		cfg.CacheTTL, cfg.BarsCacheTTL = 10*time.Second, time.Minute
	}
	if cfg.CollectTimeout == 0 {
		cfg.CollectTimeout = 10 * time.Minute
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Redact == nil {
		d.Redact = schemas.RedactText
	}
	if cfg.Stale == 0 {
		cfg.Stale = analytics.StaleAfter
	}
	s := &Server{cfg: cfg, st: d.Store, reader: d.Reader, alerts: d.EvaluateAlerts, digest: d.SendDigest,
		spool: d.SpoolRows, ready: d.Ready, redact: d.Redact, log: d.Log, cache: answer.NewCache(2000),
		snap: query.NewCurrent(d.Store), busy: make(chan struct{}, MaxComputing)}
	if d.Reader.Current == nil {
		d.Reader.Current = s.snap
	}
	sd := schedule.Deps{RunSources: d.RunSources, Runs: d.Store, Recover: d.Recover, Ran: s.ran,
		Last:      func(r schemas.Run) { s.metrics.observeRun(r, false) },
		Recovered: func(r schemas.Run) { s.metrics.runs.WithLabelValues(r.Source, r.Status).Inc() },
		Changed:   s.changed, Log: d.Log}
	if s.alerts != nil {
		sd.EvaluateAlerts = s.evaluateAlerts
	}
	if s.digest != nil {
		sd.SendDigest = s.sendDigest
	}
	var err error
	s.sched, err = schedule.New(cfg.Config, sd)
	if err != nil {
		return nil, err
	}
	s.metrics = newMetrics(s)
	s.handler = shed(s.routes(), MaxInFlight)
	return s, nil
}

// Handler is the HTTP handler of every endpoint.
func (s *Server) Handler() http.Handler { return s.handler }

// ShutdownTimeout bounds a shutdown: the HTTP requests under way are answered and
// the collections cut short flush or spool what they read (ingest.FinalWriteTimeout)
// within it.
var ShutdownTimeout = 45 * time.Second

// Stopped is Serve's error when its context ended (SIGTERM, Ctrl-C): the service
// stopped as asked, naming the collections it cut short.
type Stopped = schedule.Stopped

// Serve serves HTTP on ln and runs the schedule until ctx is done; with runNow every
// job runs once at start (and the alerts are evaluated once those runs are in).
//
// When ctx ends it stops accepting connections and starting runs, cuts the
// collections under way (each stops reading, flushes or spools what it read with a
// fresh bounded context, and records its run as interrupted), answers the requests
// under way, and returns a *Stopped naming the collections it cut, all within
// ShutdownTimeout.
func (s *Server) Serve(ctx context.Context, ln net.Listener, runNow bool) error {
	runCtx, err := s.sched.Start(ctx, runNow)
	if err != nil {
		return err
	}
	defer s.sched.Stop()
	// The current prices are read before the first request asks, and again whenever
	// another process writes to the store.
	go func() { _ = s.snap.Refresh(runCtx) }()
	go s.snap.Watch(ctx, CheckEvery, s.changed)
	srv := NewHTTPServer(checkHost(s.handler, hostAllowlist(s.cfg.AllowedHosts, ln.Addr())), s.cfg.HTTP)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limitListener(ln, s.cfg.HTTP)) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			serveErr = fmt.Errorf("serve: %w", err)
		}
	}
	s.sched.Stop() // no new runs; the runs under way stop reading and keep what they read
	s.log.Info("shutting down: no new connections; collections under way stop and keep what they read")
	shut, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	shutErr := make(chan error, 1)
	go func() { shutErr <- srv.Shutdown(shut) }() // stops accepting at once
	cut := s.sched.Wait(shut)
	if err := <-shutErr; err != nil && serveErr == nil {
		serveErr = err
	}
	if serveErr == nil && ctx.Err() != nil {
		return &Stopped{Interrupted: cut}
	}
	return serveErr
}

// HTTPLimits bound what one client may hold of the server: how long it may take to
// send its request's header and body, how long the server keeps writing to a
// client that does not read, how long an idle keep-alive connection stays open,
// and how large a request's header may be (larger: 431). A zero field takes
// DefaultHTTPLimits' value.
type HTTPLimits struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	// WriteTimeout bounds the writing of one answer, from the end of its request's
	// header: a client reading too slowly is cut there. POST /api/v1/collect
	// extends it to the collection's own timeout.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no new request for so
	// long.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's header (Go's server allows 4 KB more before
	// answering 431 Request Header Fields Too Large).
	MaxHeaderBytes int
	// MaxConnsPerClient caps the connections one client address holds open at once
	// (0: DefaultMaxConnsPerClient; negative: no cap, e.g. behind a proxy).
	MaxConnsPerClient int
}

// DefaultHTTPLimits are the limits of a server configured with none.
var DefaultHTTPLimits = HTTPLimits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      2 * time.Minute,
	IdleTimeout:       2 * time.Minute,
	MaxHeaderBytes:    64 << 10,
}

// orDefaults returns l with its zero fields set from DefaultHTTPLimits.
func (l HTTPLimits) orDefaults() HTTPLimits {
	d := DefaultHTTPLimits
	pick := func(v, def time.Duration) time.Duration {
		if v > 0 {
			return v
		}
		return def
	}
	l.ReadHeaderTimeout = pick(l.ReadHeaderTimeout, d.ReadHeaderTimeout)
	l.ReadTimeout = pick(l.ReadTimeout, d.ReadTimeout)
	l.WriteTimeout = pick(l.WriteTimeout, d.WriteTimeout)
	l.IdleTimeout = pick(l.IdleTimeout, d.IdleTimeout)
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return l
}

// NewHTTPServer is the http.Server the service listens with: bounded header, body,
// write and idle times and header size (HTTPLimits; zero fields are the defaults),
// so a slow or hostile client cannot hold a connection open.
func NewHTTPServer(h http.Handler, l HTTPLimits) *http.Server {
	l = l.orDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}

// ran reacts to a run of sources (schedule.Deps.Ran): new prices, runs and bars, so
// the snapshot is read again (even when the run was cut by a shutdown, within a
// bounded time), what was computed is forgotten, and the source metrics are set
// from the run records.
func (s *Server) ran(ctx context.Context, runs []schemas.Run) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	if err := s.snap.Refresh(rctx); err != nil {
		s.log.Warn("current prices not refreshed after the run", "error", err.Error())
	}
	cancel()
	s.changed()
	s.metrics.observeCollection(len(runs), schedule.Failed(runs))
	for _, r := range runs {
		s.metrics.observeRun(r, true)
	}
}

// changed forgets every answer computed from what the store held before.
func (s *Server) changed() {
	s.cache.Clear()
	s.metrics.market.Invalidate()
}

// evaluateAlerts evaluates the alert rules (through Deps.EvaluateAlerts) and updates
// the alert metrics; the schedule calls it, one evaluation at a time.
func (s *Server) evaluateAlerts(ctx context.Context) {
	rep, err := s.alerts(ctx)
	if errors.Is(err, alert.ErrStandingBy) {
		s.log.Info("alerts not evaluated here: another serve process evaluates them (standing by)")
		return
	}
	if err != nil {
		s.metrics.alertFailed.WithLabelValues("").Inc()
		s.log.Error("alerts not evaluated", "error", err.Error())
		return
	}
	for _, r := range rep.Rules {
		if r.Error != "" {
			s.metrics.alertFailed.WithLabelValues("").Inc()
			s.log.Error("alert rule not evaluated", "rule", r.Rule, "error", r.Error)
			continue
		}
		n := 0
		for _, in := range r.Instances {
			if in.Firing {
				n++
			}
		}
		s.metrics.alertFiring.WithLabelValues(r.Rule).Set(float64(n))
	}
	for _, d := range rep.Deliveries {
		if d.Error != "" {
			s.metrics.alertFailed.WithLabelValues(d.Notifier).Inc()
		} else {
			s.log.Info("alerts sent", "notifier", d.Notifier, "firing", d.Firing, "resolved", d.Resolved)
		}
	}
}

// sendDigest builds the weekly digest and sends it (Deps.SendDigest), logging each
// delivery; a failed one is logged and counted, and the next turn sends again.
func (s *Server) sendDigest(ctx context.Context) {
	ds, err := s.digest(ctx)
	if errors.Is(err, alert.ErrStandingBy) {
		s.log.Info("digest not sent here: another serve process sends it (standing by)")
		return
	}
	for _, d := range ds {
		if d.Error != "" {
			s.metrics.alertFailed.WithLabelValues(d.Notifier).Inc()
			s.log.Error("digest not sent", "notifier", d.Notifier, "error", s.redact(d.Error))
		} else {
			s.log.Info("digest sent", "notifier", d.Notifier)
		}
	}
	if err != nil && len(ds) == 0 {
		s.metrics.alertFailed.WithLabelValues("").Inc()
		s.log.Error("digest not built", "error", s.redact(err.Error()))
	}
}

// current reads the latest prices of f's series still on offer.
func (s *Server) current(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	rows, err := s.snap.Latest(ctx, f)
	if err != nil {
		return nil, err
	}
	return analytics.CurrentOnly(rows, s.cfg.Stale), nil
}

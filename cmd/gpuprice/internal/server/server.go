// Package server is gpuprice's long-running service: it runs every enabled source on
// its cron schedule, evaluates the alert rules on theirs, and serves the HTTP API,
// Prometheus metrics and the web page.
//
// Everything it works with is injected (Deps): the store it reads, the one call that
// runs sources now (the pipeline: spool replay, FX, collection, run record, bars),
// the alert evaluation, the spool's size and a logger. The command line (`gpuprice
// serve`) builds those from the configuration; tests build them from real parts.
package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/analytics/answer"
	"github.com/gpuprice/gpuprice/analytics/digest"
	"github.com/gpuprice/gpuprice/analytics/query"
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
type Job struct {
	Source   string
	Schedule string // cron spec or descriptor (@hourly); "" means @hourly
}

// Config is what the server is told to do.
type Config struct {
	Jobs []Job
	// AlertsSchedule is the cron spec of alert evaluations; "" or a nil
	// Deps.EvaluateAlerts means alerts are not evaluated.
	AlertsSchedule string
	// DigestSchedule is the cron spec on which the weekly digest is sent; "" or a
	// nil Deps.SendDigest means it is not.
	DigestSchedule string
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
// run records (one per source). It must be safe to call concurrently for different
// sources.
type RunFunc func(ctx context.Context, sources []string) []schemas.Run

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
	cfg      Config
	st       store.Store
	reader   *query.Reader
	run      RunFunc
	alerts   func(ctx context.Context) (alert.Report, error)
	digest   func(ctx context.Context) ([]digest.Delivery, error)
	spool    func() (int, error)
	ready    func(ctx context.Context) error
	recover  func(ctx context.Context) ([]schemas.Run, error)
	redact   func(string) string
	log      *slog.Logger
	metrics  *serverMetrics
	alertMu  sync.Mutex // one evaluation at a time: they share the state file
	stopping atomic.Bool
	runMu    sync.Mutex
	running  map[string]bool // sources with a run under way
	// interrupted are the runs cut short by a shutdown, for Serve's error.
	interrupted []schemas.Run
	runCtx      context.Context // the context of runs: outlives a request, ends after shutdown's grace
	handler     http.Handler
	cache       *answer.Cache
	snap        *query.Current // the current prices, refreshed after runs and on others' writes
	busy        chan struct{}  // a slot per answer computed at once (MaxComputing)
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
	s := &Server{cfg: cfg, st: d.Store, reader: d.Reader, run: d.RunSources, alerts: d.EvaluateAlerts,
		digest: d.SendDigest, spool: d.SpoolRows, ready: d.Ready, recover: d.Recover,
		redact:  d.Redact,
		log:     d.Log,
		running: map[string]bool{}, runCtx: context.Background(), cache: answer.NewCache(2000),
		snap: query.NewCurrent(d.Store), busy: make(chan struct{}, MaxComputing)}
	if d.Reader.Current == nil {
		d.Reader.Current = s.snap
	}
	if _, err := s.schedule(context.Background()); err != nil {
		return nil, err
	}
	s.metrics = newMetrics(s)
	s.handler = shed(s.routes(), MaxInFlight)
	return s, nil
}

// Handler is the HTTP handler of every endpoint.
func (s *Server) Handler() http.Handler { return s.handler }

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// schedule builds the cron scheduler of the jobs and the alert evaluations.
func (s *Server) schedule(ctx context.Context) (*cron.Cron, error) {
	l := cronLogger{s.log}
	sched := cron.New(cron.WithParser(cronParser), cron.WithChain(cron.Recover(l), cron.SkipIfStillRunning(l)))
	for _, j := range s.cfg.Jobs {
		spec := j.Schedule
		if spec == "" {
			spec = "@hourly"
		}
		if _, err := sched.AddFunc(spec, func() { s.RunSources(ctx, j.Source) }); err != nil {
			return nil, fmt.Errorf("sources.%s.schedule %q: %w", j.Source, spec, err)
		}
	}
	if s.alerts != nil && s.cfg.AlertsSchedule != "" {
		if _, err := sched.AddFunc(s.cfg.AlertsSchedule, func() { s.EvaluateAlerts(ctx) }); err != nil {
			return nil, fmt.Errorf("alerts.schedule %q: %w", s.cfg.AlertsSchedule, err)
		}
	}
	if s.digest != nil && s.cfg.DigestSchedule != "" {
		if _, err := sched.AddFunc(s.cfg.DigestSchedule, func() { s.SendDigest(ctx) }); err != nil {
			return nil, fmt.Errorf("digest.schedule %q: %w", s.cfg.DigestSchedule, err)
		}
	}
	return sched, nil
}

// ShutdownTimeout bounds a shutdown: the HTTP requests under way are answered and
// the collections cut short flush or spool what they read (ingest.FinalWriteTimeout)
// within it.
var ShutdownTimeout = 45 * time.Second

// Stopped is Serve's error when its context ended (SIGTERM, Ctrl-C): the service
// stopped as asked. Interrupted are the collections it cut short; what they had
// read is stored or spooled, and their run records say "interrupted" with their
// counts.
type Stopped struct {
	Interrupted []schemas.Run
}

func (e *Stopped) Error() string {
	if len(e.Interrupted) == 0 {
		return "serve: stopped; no collection was running"
	}
	var parts []string
	for _, r := range e.Interrupted {
		parts = append(parts, fmt.Sprintf("%s (%d accepted: %d stored, %d spooled, %d lost)", r.Source,
			r.RowsAccepted, r.RowsStored, r.RowsSpooled, r.RowsLost))
	}
	return "serve: stopped; collections cut short: " + strings.Join(parts, ", ")
}

// Serve serves HTTP on ln and runs the schedule until ctx is done; with runNow every
// job runs once at start (and the alerts are evaluated once those runs are in).
//
// When ctx ends it stops accepting connections and starting runs, cuts the
// collections under way (each stops reading, flushes or spools what it read with a
// fresh bounded context, and records its run as interrupted), answers the requests
// under way, and returns a *Stopped naming the collections it cut, all within
// ShutdownTimeout.
func (s *Server) Serve(ctx context.Context, ln net.Listener, runNow bool) error {
	runCtx, stopRuns := context.WithCancel(ctx)
	defer stopRuns()
	s.runMu.Lock()
	s.runCtx = runCtx
	s.runMu.Unlock()
	sched, err := s.schedule(runCtx)
	if err != nil {
		return err
	}
	for _, j := range s.cfg.Jobs {
		s.log.Info("source scheduled", "source", j.Source, "schedule", j.Schedule)
	}
	if s.alerts != nil && s.cfg.AlertsSchedule != "" {
		s.log.Info("alerts scheduled", "schedule", s.cfg.AlertsSchedule)
	}
	if s.digest != nil && s.cfg.DigestSchedule != "" {
		s.log.Info("digest scheduled", "schedule", s.cfg.DigestSchedule)
	}
	s.metrics.restore(ctx)
	var first sync.WaitGroup
	if s.recover != nil {
		// Runs a kill cut short (their record still says started): their bars are
		// rebuilt and their records say interrupted, without holding up the start.
		first.Add(1)
		go func() {
			defer first.Done()
			s.recoverKilled(runCtx)
		}()
	}
	// The current prices are read before the first request asks, and again whenever
	// another process writes to the store.
	go func() { _ = s.snap.Refresh(runCtx) }()
	go s.snap.Watch(ctx, CheckEvery, s.changed)
	srv := NewHTTPServer(checkHost(s.handler, hostAllowlist(s.cfg.AllowedHosts, ln.Addr())), s.cfg.HTTP)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(limitListener(ln, s.cfg.HTTP)) }()
	sched.Start()
	if runNow {
		first.Add(1)
		go func() {
			defer first.Done()
			var collected sync.WaitGroup
			for _, j := range s.cfg.Jobs {
				collected.Add(1)
				go func() { defer collected.Done(); s.RunSources(runCtx, j.Source) }()
			}
			collected.Wait() // alerts once the first collections are in
			s.EvaluateAlerts(runCtx)
		}()
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			serveErr = fmt.Errorf("serve: %w", err)
		}
	}
	s.runMu.Lock()
	s.stopping.Store(true) // no new runs
	s.runMu.Unlock()
	stopRuns() // the runs under way stop reading and keep what they read
	s.log.Info("shutting down: no new connections; collections under way stop and keep what they read")
	shut, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
	defer cancel()
	shutErr := make(chan error, 1)
	go func() { shutErr <- srv.Shutdown(shut) }() // stops accepting at once
	stopped := sched.Stop()
	first.Wait()
	select {
	case <-stopped.Done():
	case <-shut.Done():
	}
	s.waitRuns(shut)
	if err := <-shutErr; err != nil && serveErr == nil {
		serveErr = err
	}
	if serveErr == nil && ctx.Err() != nil {
		s.runMu.Lock()
		cut := slices.Clone(s.interrupted)
		s.runMu.Unlock()
		return &Stopped{Interrupted: cut}
	}
	return serveErr
}

// recoverKilled recovers the runs killed before their end (Deps.Recover): each is
// counted as interrupted and sets its source's gauges.
func (s *Server) recoverKilled(ctx context.Context) {
	killed, err := s.recover(ctx)
	if err != nil {
		s.log.Warn("killed runs not all recovered; the next run tries again", "error", err.Error())
	}
	for _, r := range killed {
		s.metrics.runs.WithLabelValues(r.Source, r.Status).Inc()
		if last, err := s.st.Runs(ctx, r.Source, 1); err == nil && len(last) > 0 && last[0].RunID == r.RunID {
			s.metrics.observeRun(r, false)
		}
	}
	if len(killed) > 0 {
		s.changed()
	}
}

// waitRuns waits until no run is under way, or ctx ends.
func (s *Server) waitRuns(ctx context.Context) {
	for {
		s.runMu.Lock()
		n := len(s.running)
		s.runMu.Unlock()
		if n == 0 || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
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

// RunSources runs the named sources now (through Deps.RunSources) and updates the
// source metrics from their run records.
func (s *Server) RunSources(ctx context.Context, sources ...string) []schemas.Run {
	if ctx.Err() != nil || s.stopping.Load() {
		return nil
	}
	sources, _ = s.claim(sources)
	if len(sources) == 0 {
		return nil
	}
	defer s.release(sources)
	runs := s.run(ctx, sources)
	// New prices, runs and bars: the snapshot is read again (even when the run was
	// cut by a shutdown, within a bounded time) and what was computed is forgotten.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	if err := s.snap.Refresh(rctx); err != nil {
		s.log.Warn("current prices not refreshed after the run", "error", err.Error())
	}
	cancel()
	s.changed()
	failed := 0
	for _, r := range runs {
		if r.Status == schemas.RunFailed {
			failed++
		}
	}
	s.metrics.observeCollection(len(runs), failed)
	switch {
	case len(runs) > 0 && failed == len(runs):
		s.log.Error("every source of the run failed", "sources", len(runs))
	case failed > 0:
		s.log.Warn("sources of the run failed", "failed", failed, "sources", len(runs))
	}
	for _, r := range runs {
		s.metrics.observeRun(r, true)
		if r.Status == schemas.RunInterrupted {
			s.runMu.Lock()
			s.interrupted = append(s.interrupted, r)
			s.runMu.Unlock()
		}
	}
	return runs
}

// changed forgets every answer computed from what the store held before.
func (s *Server) changed() {
	s.cache.Clear()
	s.metrics.market.Invalidate()
}

// claim marks the sources as running and returns them, leaving out (busy) those
// with a run under way: one run of a source at a time, scheduled or asked for.
func (s *Server) claim(sources []string) (free, busy []string) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if s.stopping.Load() {
		return nil, nil // shutting down: no new run
	}
	for _, n := range sources {
		if s.running[n] || slices.Contains(free, n) {
			busy = append(busy, n)
			continue
		}
		s.running[n] = true
		free = append(free, n)
	}
	return free, busy
}

func (s *Server) release(sources []string) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	for _, n := range sources {
		delete(s.running, n)
	}
}

// runNow runs sources for the API in the runs' context (a client hanging up does
// not cut a collection), and says which were already running.
func (s *Server) runNow(sources []string) ([]schemas.Run, []string) {
	free, busy := s.claim(sources)
	s.release(free)
	if len(free) == 0 {
		return nil, busy
	}
	s.runMu.Lock()
	ctx := s.runCtx
	s.runMu.Unlock()
	return s.RunSources(ctx, free...), busy
}

// EvaluateAlerts evaluates the alert rules (through Deps.EvaluateAlerts) and updates
// the alert metrics. It does nothing without rules.
func (s *Server) EvaluateAlerts(ctx context.Context) {
	if s.alerts == nil || ctx.Err() != nil {
		return
	}
	s.alertMu.Lock()
	defer s.alertMu.Unlock()
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

// SendDigest builds the weekly digest and sends it (Deps.SendDigest), logging each
// delivery; a failed one is logged and counted, and the next turn sends again.
func (s *Server) SendDigest(ctx context.Context) {
	if s.digest == nil || ctx.Err() != nil {
		return
	}
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

type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug("cron: "+msg, kv...) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append(kv, "error", err.Error())...)
}

// current reads the latest prices of f's series still on offer.
func (s *Server) current(ctx context.Context, f store.Filter) ([]schemas.Observation, error) {
	rows, err := s.snap.Latest(ctx, f)
	if err != nil {
		return nil, err
	}
	return analytics.CurrentOnly(rows, s.cfg.Stale), nil
}

// Package schedule is the write side of the long-running service (`gpuprice serve`):
// it runs every scheduled source on its cron schedule, one run of a source at a time
// (scheduled or asked for), evaluates the alerts and sends the digest on theirs,
// recovers the runs a kill cut short, and at shutdown cuts the runs under way and
// names them (Stopped).
//
// What runs is injected (the pipeline as a RunFunc, the alert evaluation and the
// digest as plain funcs), and so are the caller's reactions to runs (its caches and
// metrics, through the hooks of Deps): the package reads only run records and
// imports nothing above ingest.
package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Job is one scheduled source.
type Job struct {
	Source   string
	Schedule string // cron spec or descriptor (@hourly); "" means @hourly
}

// Config is what is scheduled.
type Config struct {
	Jobs []Job
	// AlertsSchedule is the cron spec of alert evaluations; "" or a nil
	// Deps.EvaluateAlerts means alerts are not evaluated.
	AlertsSchedule string
	// DigestSchedule is the cron spec on which the weekly digest is sent; "" or a
	// nil Deps.SendDigest means it is not.
	DigestSchedule string
}

// RunFunc runs the named sources now, through the whole pipeline, and returns their
// run records (one per source). It must be safe to call concurrently for different
// sources.
type RunFunc func(ctx context.Context, sources []string) []schemas.Run

// Collect is the RunFunc of a runner: the named sources among jobs (other names are
// left out) collected through r with o.
func Collect(r *ingest.Runner, jobs []ingest.Job, o ingest.Options) RunFunc {
	byName := map[string]ingest.Job{}
	for _, j := range jobs {
		byName[j.Name] = j
	}
	return func(ctx context.Context, sources []string) []schemas.Run {
		var run []ingest.Job
		for _, n := range sources {
			if j, ok := byName[n]; ok {
				run = append(run, j)
			}
		}
		if len(run) == 0 {
			return nil
		}
		res := r.Collect(ctx, run, o)
		runs := make([]schemas.Run, len(res))
		for i, x := range res {
			runs[i] = x.Run
		}
		return runs
	}
}

// RunReader reads a source's last runs, newest first (store.Store has it).
type RunReader interface {
	Runs(ctx context.Context, source string, limit int) ([]schemas.Run, error)
}

// Deps are the service's collaborators and hooks; every func but RunSources may be
// nil.
type Deps struct {
	// RunSources runs sources now: every scheduled turn and every Run or RunNow.
	RunSources RunFunc
	// Runs reads the runs of the store (the gauges' start, the recovered runs).
	Runs RunReader
	// EvaluateAlerts evaluates the alert rules as of now and notifies; it reports
	// its own outcome. One evaluation runs at a time.
	EvaluateAlerts func(ctx context.Context)
	// SendDigest builds the weekly digest as of now and sends it.
	SendDigest func(ctx context.Context)
	// Recover rebuilds the bars of the runs killed before their end and records them
	// as interrupted (ingest.Runner.Recover); Start calls it.
	Recover func(ctx context.Context) ([]schemas.Run, error)
	// Ran is told of every run of sources once it is over, with its records, while
	// its sources are still held (before the next run of them may start).
	Ran func(ctx context.Context, runs []schemas.Run)
	// Last is told of a source's last run as known at start: from the store for
	// every scheduled source, and each recovered run that is its source's last.
	Last func(r schemas.Run)
	// Recovered is told of every run Recover recovered; Changed then once, when
	// there was one.
	Recovered func(r schemas.Run)
	// Changed is told that the store holds other runs and bars than before.
	Changed func()
	Log     *slog.Logger
}

// Service runs the schedule. Build it with New; Start it once.
type Service struct {
	cfg      Config
	d        Deps
	log      *slog.Logger
	alertMu  sync.Mutex // one evaluation at a time: they share the state file
	stopping atomic.Bool
	mu       sync.Mutex
	running  map[string]bool // sources with a run under way
	// interrupted are the runs cut short by a shutdown, for Stopped.
	interrupted []schemas.Run
	runCtx      context.Context // the context of runs: outlives a request, ends at Stop
	stopRuns    context.CancelFunc
	cron        *cron.Cron
	first       sync.WaitGroup // the recovery and the runs of runNow
}

// New checks the configuration (every schedule must parse) and builds the service.
func New(cfg Config, d Deps) (*Service, error) {
	if d.RunSources == nil {
		return nil, errors.New("schedule: a RunSources function is required")
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, d: d, log: d.Log, running: map[string]bool{}, runCtx: context.Background(),
		stopRuns: func() {}}
	if _, err := s.schedule(context.Background()); err != nil {
		return nil, err
	}
	return s, nil
}

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Check says whether spec is a schedule the service runs on: a five-field cron spec
// or a descriptor (@hourly, @every 10m).
func Check(spec string) error {
	_, err := cronParser.Parse(spec)
	return err
}

// schedule builds the cron scheduler of the jobs, the alert evaluations and the
// digest.
func (s *Service) schedule(ctx context.Context) (*cron.Cron, error) {
	l := cronLogger{s.log}
	sched := cron.New(cron.WithParser(cronParser), cron.WithChain(cron.Recover(l), cron.SkipIfStillRunning(l)))
	for _, j := range s.cfg.Jobs {
		spec := j.Schedule
		if spec == "" {
			spec = "@hourly"
		}
		if _, err := sched.AddFunc(spec, func() { s.Run(ctx, j.Source) }); err != nil {
			return nil, fmt.Errorf("sources.%s.schedule %q: %w", j.Source, spec, err)
		}
	}
	if s.alerts() {
		if _, err := sched.AddFunc(s.cfg.AlertsSchedule, func() { s.evaluateAlerts(ctx) }); err != nil {
			return nil, fmt.Errorf("alerts.schedule %q: %w", s.cfg.AlertsSchedule, err)
		}
	}
	if s.digest() {
		if _, err := sched.AddFunc(s.cfg.DigestSchedule, func() { s.sendDigest(ctx) }); err != nil {
			return nil, fmt.Errorf("digest.schedule %q: %w", s.cfg.DigestSchedule, err)
		}
	}
	return sched, nil
}

func (s *Service) alerts() bool { return s.d.EvaluateAlerts != nil && s.cfg.AlertsSchedule != "" }
func (s *Service) digest() bool { return s.d.SendDigest != nil && s.cfg.DigestSchedule != "" }

// Start starts the schedule under ctx and returns the context of the runs (it ends
// with ctx or at Stop). It sets the gauges of the scheduled sources from their last
// stored runs (Deps.Last), recovers the killed runs in the background, and with
// runNow runs every job once at start (and evaluates the alerts once those runs are
// in).
func (s *Service) Start(ctx context.Context, runNow bool) (context.Context, error) {
	runCtx, stopRuns := context.WithCancel(ctx)
	sched, err := s.schedule(runCtx)
	if err != nil {
		stopRuns()
		return nil, err
	}
	s.mu.Lock()
	s.runCtx, s.stopRuns, s.cron = runCtx, stopRuns, sched
	s.mu.Unlock()
	for _, j := range s.cfg.Jobs {
		s.log.Info("source scheduled", "source", j.Source, "schedule", j.Schedule)
	}
	if s.alerts() {
		s.log.Info("alerts scheduled", "schedule", s.cfg.AlertsSchedule)
	}
	if s.digest() {
		s.log.Info("digest scheduled", "schedule", s.cfg.DigestSchedule)
	}
	s.restore(ctx)
	if s.d.Recover != nil {
		// Runs a kill cut short (their record still says started): their bars are
		// rebuilt and their records say interrupted, without holding up the start.
		s.first.Add(1)
		go func() {
			defer s.first.Done()
			s.recoverKilled(runCtx)
		}()
	}
	sched.Start()
	if runNow {
		s.first.Add(1)
		go func() {
			defer s.first.Done()
			var collected sync.WaitGroup
			for _, j := range s.cfg.Jobs {
				collected.Add(1)
				go func() { defer collected.Done(); s.Run(runCtx, j.Source) }()
			}
			collected.Wait() // alerts once the first collections are in
			s.evaluateAlerts(runCtx)
		}()
	}
	return runCtx, nil
}

// Stop starts no new run (scheduled or asked for) and cuts the runs under way:
// each stops reading and keeps what it read.
func (s *Service) Stop() {
	s.mu.Lock()
	s.stopping.Store(true) // no new runs
	stopRuns := s.stopRuns
	s.mu.Unlock()
	stopRuns()
}

// Stopping reports whether Stop was called.
func (s *Service) Stopping() bool { return s.stopping.Load() }

// Wait, after Stop, stops the schedule and waits until the recovery, the runs of
// runNow, the scheduled turns and every run under way are over, or ctx ends; it
// returns the runs a shutdown cut short.
func (s *Service) Wait(ctx context.Context) []schemas.Run {
	s.mu.Lock()
	sched := s.cron
	s.mu.Unlock()
	if sched != nil {
		stopped := sched.Stop()
		s.first.Wait()
		select {
		case <-stopped.Done():
		case <-ctx.Done():
		}
	}
	s.waitRuns(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.interrupted)
}

// restore tells Deps.Last of the last stored run of every scheduled source, so that
// the gauges set from them survive a restart.
func (s *Service) restore(ctx context.Context) {
	if s.d.Runs == nil || s.d.Last == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for _, j := range s.cfg.Jobs {
		runs, err := s.d.Runs.Runs(ctx, j.Source, 1)
		if err != nil {
			s.log.Warn("metrics: last run not readable", "source", j.Source, "error", err.Error())
			return
		}
		if len(runs) > 0 {
			s.d.Last(store.Judged(runs, time.Now())[0])
		}
	}
}

// recoverKilled recovers the runs killed before their end (Deps.Recover): each is
// told to Deps.Recovered, and to Deps.Last when it is its source's last run; a
// line "killed runs recovered" is logged once all are told.
func (s *Service) recoverKilled(ctx context.Context) {
	killed, err := s.d.Recover(ctx)
	if err != nil {
		s.log.Warn("killed runs not all recovered; the next run tries again", "error", err.Error())
	}
	for _, r := range killed {
		if s.d.Recovered != nil {
			s.d.Recovered(r)
		}
		if s.d.Runs == nil || s.d.Last == nil {
			continue
		}
		if last, err := s.d.Runs.Runs(ctx, r.Source, 1); err == nil && len(last) > 0 && last[0].RunID == r.RunID {
			s.d.Last(r)
		}
	}
	if len(killed) > 0 && s.d.Changed != nil {
		s.d.Changed()
	}
	if len(killed) > 0 {
		// After Recovered and Changed: what reads the metrics or the answers after
		// this line sees the recovered runs.
		s.log.Info("killed runs recovered", "runs", len(killed))
	}
}

// waitRuns waits until no run is under way, or ctx ends.
func (s *Service) waitRuns(ctx context.Context) {
	for {
		s.mu.Lock()
		n := len(s.running)
		s.mu.Unlock()
		if n == 0 || ctx.Err() != nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Run runs the named sources now (through Deps.RunSources), leaving out those with
// a run under way, and tells Deps.Ran of their run records. It runs nothing once
// ctx ended or Stop was called.
func (s *Service) Run(ctx context.Context, sources ...string) []schemas.Run {
	if ctx.Err() != nil || s.stopping.Load() {
		return nil
	}
	sources, _ = s.claim(sources)
	if len(sources) == 0 {
		return nil
	}
	defer s.release(sources)
	runs := s.d.RunSources(ctx, sources)
	if s.d.Ran != nil {
		s.d.Ran(ctx, runs)
	}
	failed := Failed(runs)
	switch {
	case len(runs) > 0 && failed == len(runs):
		s.log.Error("every source of the run failed", "sources", len(runs))
	case failed > 0:
		s.log.Warn("sources of the run failed", "failed", failed, "sources", len(runs))
	}
	for _, r := range runs {
		if r.Status == schemas.RunInterrupted {
			s.mu.Lock()
			s.interrupted = append(s.interrupted, r)
			s.mu.Unlock()
		}
	}
	return runs
}

// Failed counts the failed runs among runs.
func Failed(runs []schemas.Run) int {
	n := 0
	for _, r := range runs {
		if r.Status == schemas.RunFailed {
			n++
		}
	}
	return n
}

// claim marks the sources as running and returns them, leaving out (busy) those
// with a run under way: one run of a source at a time, scheduled or asked for.
func (s *Service) claim(sources []string) (free, busy []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
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

func (s *Service) release(sources []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range sources {
		delete(s.running, n)
	}
}

// RunNow runs sources as asked (the API) in the runs' context, so that a client
// hanging up does not cut a collection, and says which were already running (busy,
// not run).
func (s *Service) RunNow(sources []string) (runs []schemas.Run, busy []string) {
	free, busy := s.claim(sources)
	s.release(free)
	if len(free) == 0 {
		return nil, busy
	}
	s.mu.Lock()
	ctx := s.runCtx
	s.mu.Unlock()
	return s.Run(ctx, free...), busy
}

// evaluateAlerts evaluates the alert rules (Deps.EvaluateAlerts), one evaluation at
// a time; it does nothing without them or once ctx ended.
func (s *Service) evaluateAlerts(ctx context.Context) {
	if s.d.EvaluateAlerts == nil || ctx.Err() != nil {
		return
	}
	s.alertMu.Lock()
	defer s.alertMu.Unlock()
	s.d.EvaluateAlerts(ctx)
}

// sendDigest sends the digest (Deps.SendDigest); it does nothing without one or
// once ctx ended.
func (s *Service) sendDigest(ctx context.Context) {
	if s.d.SendDigest == nil || ctx.Err() != nil {
		return
	}
	s.d.SendDigest(ctx)
}

// Stopped is the service's error when its context ended (SIGTERM, Ctrl-C): it
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

// Lost reports whether a run cut short lost rows (neither stored nor spooled).
func (e *Stopped) Lost() bool {
	return slices.ContainsFunc(e.Interrupted, func(r schemas.Run) bool { return r.RowsLost > 0 })
}

type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) { l.log.Debug("cron: "+msg, kv...) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append(kv, "error", err.Error())...)
}

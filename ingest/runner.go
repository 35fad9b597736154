package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers/fx"
	"github.com/gpuprice/gpuprice/store"
)

// Runner owns a run from start to end, the same way for every entry point (collect,
// the imports, reparse, the backfills and every scheduled run of serve):
//
//  1. the spool is replayed first (batches, quarantined rows and run records kept
//     while the store was down), and the bars are rebuilt over what it wrote; then
//     runs killed before their end are recovered (Recover);
//  2. FX rates are had eagerly (an ECB refresh before the run) or lazily (only when
//     a price in another currency first needs one);
//  3. the sources run in parallel (Collect), or an importer steps through its input
//     (Import), emitting into a Run: normalisation, gates, quarantine, batching and
//     the run record, written as started before the first rows (schemas.RunStarted);
//  4. the hourly and daily bars are rebuilt over the span of effective_at written,
//     so that analytics read bars that include the run.
//
// A Runner may be kept for many runs (serve): FX rates are then refreshed at most
// every FX.MaxAge. Its fields are set before the first run and not changed after.
type Runner struct {
	Store     store.Store
	Spool     *DirSpool // nil: nothing is spooled or replayed
	GPUs      Canonicalizer
	Providers schemas.ProviderCatalog
	Bounds    Bounds
	// Suspect is the relative gate: a price far from its current peers is
	// quarantined as suspect. Only rows observed within a week of the run are judged:
	// history replayed by imports, reparses and backfills is not.
	Suspect       SuspectConfig
	FX            FXConfig
	Batch         BatchConfig
	SourceTimeout time.Duration // per source; 0 means none beyond ctx
	// Redact masks secrets in every text stored (run errors, quarantine reasons and
	// raw rows, source URLs); nil: only credentials in URLs are masked
	// (schemas.RedactText).
	Redact func(string) string
	Logger *slog.Logger // nil: no logging
	Now    func() time.Time
	// MigrateFirst is set when the store could not be migrated when it was opened
	// (it was unavailable): the runner then migrates it before its first write,
	// and until that succeeds every write fails as store.ErrUnavailable, so that
	// rows, quarantined rows and run records go to the spool and nothing is written
	// to tables of an older schema.
	MigrateFirst bool

	migMu    sync.Mutex
	migrated bool

	fxMu   sync.Mutex
	fx     FX
	fxWhen time.Time
}

// FXConfig is where a Runner's rates come from: the ECB rates it refreshes into the
// store, the stored rates, then the static rates of the configuration.
type FXConfig struct {
	// Refresh fetches current reference rates (see ECBRates); nil: rates are never
	// refreshed (sources.fx disabled) and only stored and static rates serve.
	Refresh func(ctx context.Context) ([]schemas.FXRate, error)
	Static  StaticFX
	// Lookback is how far back stored rates are read (default 120 days).
	Lookback time.Duration
	// MaxAge is how long loaded rates are reused before the next refresh (serve: an
	// hour, the ECB publishes once a working day); 0 refreshes for every run.
	MaxAge time.Duration
}

// FXMode says when a run has its FX rates.
type FXMode int

const (
	// FXEager refreshes the rates before the run (collect, serve).
	FXEager FXMode = iota
	// FXLazy refreshes them when a price in another currency first needs a rate, so
	// that an import of USD prices makes no request to the ECB (imports, reparse,
	// backfills).
	FXLazy
)

// Options are what differs between the entry points.
type Options struct {
	FX         FXMode
	SourceKind string // when set, written on every row (imports)
	RunID      string // "" means a new one (NewRunID)
}

// ECBRates is an FXConfig.Refresh fetching the ECB reference rates from endpoint (""
// means fx.History90Endpoint) with client.
func ECBRates(client *fetch.Client, endpoint string) func(context.Context) ([]schemas.FXRate, error) {
	if endpoint == "" {
		endpoint = fx.History90Endpoint
	}
	return func(ctx context.Context) ([]schemas.FXRate, error) {
		rates, err := fx.Fetch(ctx, client, endpoint)
		if err != nil {
			return nil, err
		}
		out := make([]schemas.FXRate, 0, len(rates))
		for _, r := range rates {
			out = append(
				out,
				schemas.FXRate{Date: r.Date, Currency: r.Currency, USDPerUnit: r.USDPerUnit, Source: "ecb"},
			)
		}
		return out, nil
	}
}

const defaultFXLookback = 120 * 24 * time.Hour

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

func (r *Runner) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

// Collect runs jobs once, in parallel, under one run id (spool replay, FX, the jobs,
// the bars; see Runner) and returns their results in job order.
func (r *Runner) Collect(ctx context.Context, jobs []Job, o Options) []Result {
	r.replay(ctx)
	r.recover(ctx)
	runID := o.RunID
	if runID == "" {
		runID = NewRunID(r.now())
	}
	col := &Collector{
		Sink:          r.sink(true),
		Normalizer:    r.normalizer(ctx, o.FX),
		Batch:         r.Batch,
		Spool:         r.spooler(),
		SourceTimeout: r.SourceTimeout,
		Logger:        r.Logger,
		Now:           r.Now,
		SourceKind:    o.SourceKind,
		Journal:       true,
		Fold:          r.folds(),
	}
	if sg, ok := r.Store.(store.Signals); ok {
		col.Signals = sg
	}
	results := col.Collect(ctx, runID, jobs)
	// What was written is in the store even when ctx ended meanwhile (serve shutting
	// down): its bars are rebuilt all the same, within FinalWriteTimeout then.
	rctx := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, FinalWriteTimeout)
		defer cancel()
	}
	r.rollup(rctx, results...)
	return results
}

// Import runs one resumable import or backfill as source (the run record's name):
// after the spool replay, step is given a stepwise Run to emit into and Commit after
// each step it can resume after. When step returns (with its error, nil when it ran
// to the end), the run record is written and the bars are rebuilt over what was
// committed, even when ctx was cancelled: what was committed is in the store. Import
// returns the run's result and step's error; a run record that could not be written
// is logged.
func (r *Runner) Import(
	ctx context.Context,
	source string,
	o Options,
	step func(context.Context, *Run) error,
) (Result, error) {
	r.replay(ctx)
	r.recover(ctx)
	runID := o.RunID
	if runID == "" {
		runID = NewRunID(r.now())
	}
	run := &Run{Sink: r.sink(false), Normalizer: r.normalizer(ctx, o.FX), Source: source, RunID: runID,
		SourceKind: o.SourceKind, Now: r.Now, ctx: ctx}
	if r.folds() {
		run.fold = store.NewBarFold(0)
	}
	run.startJournal(ctx, r.log().With("source", source, "run_id", runID))
	stepErr := step(ctx, run)
	done := context.WithoutCancel(ctx)
	res, err := run.finish(done, stepErr, nil)
	if err != nil {
		r.log().Warn("run record not stored", "source", source, "error", err.Error())
	}
	r.rollup(done, res)
	return res, stepErr
}

// Ready migrates the store when MigrateFirst is set and it has not been migrated
// yet. Its error wraps store.ErrUnavailable while the store is away.
func (r *Runner) Ready(ctx context.Context) error {
	if !r.MigrateFirst {
		return nil
	}
	r.migMu.Lock()
	defer r.migMu.Unlock()
	if r.migrated {
		return nil
	}
	applied, err := r.Store.Migrate(ctx)
	if err != nil {
		if errors.Is(err, store.ErrUnavailable) {
			return fmt.Errorf("ingest: the store is not migrated yet: %w", err)
		}
		return fmt.Errorf("ingest: migrating the store: %w", err)
	}
	r.migrated = true
	r.log().Info("store answered: migrated", "applied", applied)
	return nil
}

// ReplaySpool writes what waits in the spool to the store, oldest first, and
// rebuilds the bars over the observations it wrote. It returns the rows replayed.
func (r *Runner) ReplaySpool(ctx context.Context) (int, error) {
	if r.Spool == nil {
		return 0, nil
	}
	if err := r.Ready(ctx); err != nil {
		return 0, err
	}
	sw := &spanWriter{Sink: r.Store}
	n, err := r.Spool.Replay(ctx, sw)
	if !sw.since.IsZero() {
		r.rollup(ctx, Result{Run: schemas.Run{RowsAccepted: 1}, Since: sw.since, Until: sw.until})
	}
	return n, err
}

// Recover finds the runs whose process was killed before their end (their record
// still says started and store.Gone says their process is gone), rebuilds the
// hourly and daily bars over the span each had begun to write, and rewrites each
// record as interrupted (store.Killed). A record whose bars could not be rebuilt
// is left as it is, for the next run. It returns the records rewritten; a store
// without a run journal has none. Every run calls it first; serve at start too.
func (r *Runner) Recover(ctx context.Context) ([]schemas.Run, error) {
	jr, ok := r.Store.(store.RunJournal)
	if !ok {
		return nil, nil
	}
	if err := r.Ready(ctx); err != nil {
		return nil, err
	}
	started, err := jr.StartedRuns(ctx)
	if err != nil {
		return nil, fmt.Errorf("ingest: reading the runs under way: %w", err)
	}
	var out []schemas.Run
	var errs []error
	for _, run := range started {
		if !store.Gone(run, time.Now()) { // heartbeats are wall-clock times, whatever r.Now says
			continue
		}
		if ru, ok := r.Store.(store.Rollups); ok && !run.SpanSince.IsZero() {
			if err := ru.Rollup(ctx, run.SpanSince, run.SpanUntil); err != nil {
				errs = append(errs, fmt.Errorf("ingest: bars of killed run %s/%s: %w", run.RunID, run.Source, err))
				continue
			}
		}
		killed := store.Killed(run)
		if err := r.Store.WriteRun(ctx, killed); err != nil {
			errs = append(errs, fmt.Errorf("ingest: record of killed run %s/%s: %w", run.RunID, run.Source, err))
			continue
		}
		r.log().Warn("killed run found: bars rebuilt, recorded as interrupted", "source", run.Source,
			"run_id", run.RunID, "owner", run.Owner, "rows", run.RowsAccepted, "since", run.SpanSince, "until", run.SpanUntil)
		out = append(out, killed)
	}
	return out, errors.Join(errs...)
}

// recover is Recover before a run: a failure is logged, not fatal.
func (r *Runner) recover(ctx context.Context) {
	if _, err := r.Recover(ctx); err != nil {
		r.log().Warn("killed runs not recovered", "error", err.Error())
	}
}

// replay is ReplaySpool before a run: a store still down is logged, not fatal.
func (r *Runner) replay(ctx context.Context) {
	if n, err := r.ReplaySpool(ctx); err != nil {
		r.log().Warn("spool replay incomplete", "rows", n, "error", err.Error())
	} else if n > 0 {
		r.log().Info("spool replayed", "rows", n)
	}
}

// spooler is r.Spool as a Spooler (nil when there is none).
func (r *Runner) spooler() Spooler {
	if r.Spool == nil {
		return nil
	}
	return r.Spool
}

// sink is the store as runs write to it: secrets masked (before anything reaches the
// spool too), and with spool set, quarantined rows and run records kept in the spool
// while the store is down.
func (r *Runner) sink(spool bool) Sink {
	var s Sink = r.Store
	if r.MigrateFirst {
		s = readySink{Sink: s, ready: r.Ready}
	}
	if spool && r.Spool != nil {
		s = SpoolingSink{Sink: s, Spool: r.Spool}
	}
	return redactingSink{Sink: s, redact: r.Redact}
}

func (r *Runner) normalizer(ctx context.Context, mode FXMode) *Normalizer {
	var conv FX
	if mode == FXEager {
		conv = r.loadFX(ctx)
	} else {
		conv = &lazyFX{load: func() FX { return r.loadFX(ctx) }}
	}
	n := &Normalizer{GPUs: r.GPUs, Providers: r.Providers, FX: conv, Bounds: r.Bounds}
	if !r.Suspect.Disabled && r.Store != nil {
		n.Peers = r.peers(ctx)
	}
	return n
}

// peerWindow is how recent a stored price must be to judge a new one.
const peerWindow = 7 * 24 * time.Hour

// peers are the current prices new rows are judged against: every series' latest
// price seen within peerWindow. When the store cannot be read the gate judges
// against the run's own rows only.
func (r *Runner) peers(ctx context.Context) *Peers {
	latest, err := r.Store.Latest(ctx, store.Filter{})
	if err != nil {
		r.log().
			Warn("suspect gate: current prices not read; judging against this run's rows only", "error", err.Error())
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	cur := latest[:0:0]
	for _, o := range latest {
		if now.Sub(o.ObservedAt) <= peerWindow {
			cur = append(cur, o)
		}
	}
	p := NewPeers(r.Suspect, cur)
	p.now, p.window = now, peerWindow // rows replayed from history are not judged
	return p
}

// loadFX refreshes the reference rates into the store (unless FX.Refresh is nil or
// rates loaded less than FX.MaxAge ago serve) and returns the converter: the stored
// rates, then the static ones. A failed refresh is logged, not fatal: the stored
// rates still serve, and a price with no rate goes to quarantine.
func (r *Runner) loadFX(ctx context.Context) FX {
	r.fxMu.Lock()
	defer r.fxMu.Unlock()
	if r.fx != nil && r.FX.MaxAge > 0 && time.Since(r.fxWhen) < r.FX.MaxAge {
		return r.fx
	}
	if r.FX.Refresh != nil {
		if n, err := r.refreshFX(ctx); err != nil {
			r.log().Warn("ECB reference rates not refreshed; using stored and static rates", "error", err.Error())
		} else {
			r.log().Debug("ECB reference rates stored", "rates", n)
		}
	}
	lookback := r.FX.Lookback
	if lookback <= 0 {
		lookback = defaultFXLookback
	}
	chain := FXChain{}
	stored, err := r.Store.FXRates(ctx, time.Now().Add(-lookback))
	if err != nil {
		r.log().Warn("stored FX rates not readable", "error", err.Error())
	} else if len(stored) > 0 {
		rates := make([]fx.Rate, 0, len(stored))
		for _, s := range stored {
			rates = append(rates, fx.Rate{Date: s.Date, Currency: s.Currency, USDPerUnit: s.USDPerUnit})
		}
		chain = append(chain, fx.NewTable(rates))
	}
	if len(r.FX.Static) > 0 {
		chain = append(chain, r.FX.Static)
	}
	r.fx, r.fxWhen = chain, time.Now()
	return chain
}

func (r *Runner) refreshFX(ctx context.Context) (int, error) {
	if err := r.Ready(ctx); err != nil {
		return 0, err
	}
	rates, err := r.FX.Refresh(ctx)
	if err != nil {
		return 0, err
	}
	if err := r.Store.WriteFXRates(ctx, rates); err != nil {
		return 0, fmt.Errorf("storing FX rates: %w", err)
	}
	return len(rates), nil
}

// lazyFX loads the converter only when a price in another currency first needs it.
type lazyFX struct {
	once sync.Once
	load func() FX
	fx   FX
}

func (l *lazyFX) Rate(ctx context.Context, currency string, at time.Time) (float64, error) {
	if currency == "USD" {
		return 1, nil
	}
	l.once.Do(func() { l.fx = l.load() })
	return l.fx.Rate(ctx, currency, at)
}

// rollup rebuilds the hourly and daily bars over the span the results wrote, so
// that analytics read bars that include them. A failure is logged: the bars are
// rebuilt by the next run over the same span, or by `gpuprice rollup`.
func (r *Runner) rollup(ctx context.Context, results ...Result) {
	ru, ok := r.Store.(store.Rollups)
	if !ok || r.Ready(ctx) != nil {
		return
	}
	var since, until time.Time
	for _, res := range results {
		if res.Since.IsZero() || res.RowsAccepted == res.Spooled {
			continue // nothing reached the store
		}
		if since.IsZero() || res.Since.Before(since) {
			since = res.Since
		}
		if res.Until.After(until) {
			until = res.Until
		}
	}
	if since.IsZero() {
		return
	}
	if fold := foldOf(results); fold != nil {
		// The bars from the rows as they were stored: nothing is read back.
		err := r.Store.(store.FoldedRollups).RollupFolded(ctx, fold)
		if err == nil {
			return
		}
		r.log().Warn("bars not written from the run's rows; rebuilding them from the store", "error", err.Error())
	}
	if err := ru.Rollup(ctx, since, until); err != nil {
		r.log().Warn("rollups not rebuilt; run `gpuprice rollup`", "since", since, "until", until, "error", err.Error())
	}
}

// folds reports whether runs fold their rows into bars: the store writes bars from
// them (store.FoldedRollups).
func (r *Runner) folds() bool {
	_, ok := r.Store.(store.FoldedRollups)
	return ok
}

// foldOf is the fold of every result that stored rows, merged in their order, or
// nil when one of them has no fold or overflowed (its bars are rebuilt with Rollup).
func foldOf(results []Result) *store.BarFold {
	var out *store.BarFold
	for _, res := range results {
		if res.Since.IsZero() || res.RowsAccepted == res.Spooled {
			continue
		}
		if res.fold == nil || res.fold.Overflowed() {
			return nil
		}
		if out == nil {
			out = store.NewBarFold(0)
		}
		out.Merge(res.fold)
	}
	if out != nil && out.Overflowed() {
		return nil
	}
	return out
}

// readySink is a sink that writes only once the store is migrated (Runner.Ready):
// until then every write fails as the store being unavailable (spooled).
type readySink struct {
	Sink
	ready func(context.Context) error
}

// notReady is the error of a write before the store is migrated: always
// store.ErrUnavailable (a migration that failed for another reason is kept in the
// spool too, not quarantined row by row).
func (s readySink) notReady(ctx context.Context) error {
	err := s.ready(ctx)
	if err == nil || errors.Is(err, store.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
}

func (s readySink) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	if err := s.notReady(ctx); err != nil {
		return err
	}
	return s.Sink.WriteObservations(ctx, obs)
}

func (s readySink) WriteQuarantine(ctx context.Context, q []schemas.Quarantined) error {
	if err := s.notReady(ctx); err != nil {
		return err
	}
	return s.Sink.WriteQuarantine(ctx, q)
}

func (s readySink) WriteRun(ctx context.Context, run schemas.Run) error {
	if err := s.notReady(ctx); err != nil {
		return err
	}
	return s.Sink.WriteRun(ctx, run)
}

// spanWriter is a sink that notes the effective_at span of the observations written
// through it (a spool replay), so that their bars can be rebuilt.
type spanWriter struct {
	Sink
	since, until time.Time
}

func (w *spanWriter) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	if err := w.Sink.WriteObservations(ctx, obs); err != nil {
		return err
	}
	for _, o := range obs {
		if w.since.IsZero() || o.EffectiveAt.Before(w.since) {
			w.since = o.EffectiveAt
		}
		if end := o.EffectiveAt.Add(time.Second); end.After(w.until) {
			w.until = end
		}
	}
	return nil
}

// redactingSink masks secrets in everything written to the store: run errors,
// quarantine reasons and raw rows, observations' source URLs.
type redactingSink struct {
	Sink
	redact func(string) string
}

func (r redactingSink) text(s string) string {
	if r.redact == nil {
		return schemas.RedactText(s)
	}
	return r.redact(s)
}

// Unwrap returns the sink it wraps (for store.WriteBatchSize).
func (r redactingSink) Unwrap() store.Writer { return r.Sink }

func (r redactingSink) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	// Rows of a batch mostly share their URL: each distinct one is masked once
	// (masking reads the environment's secrets every time).
	var in, out string
	for i := range obs {
		u := obs[i].SourceURL
		if u == "" {
			continue
		}
		if u != in {
			in, out = u, r.text(fetch.RedactURL(u))
		}
		obs[i].SourceURL = out
	}
	return r.Sink.WriteObservations(ctx, obs)
}

func (r redactingSink) WriteQuarantine(ctx context.Context, q []schemas.Quarantined) error {
	out := make([]schemas.Quarantined, len(q))
	for i, x := range q {
		x.Reason, x.Raw = r.text(x.Reason), r.text(x.Raw)
		out[i] = x
	}
	return r.Sink.WriteQuarantine(ctx, out)
}

func (r redactingSink) WriteRun(ctx context.Context, run schemas.Run) error {
	run.Error = r.text(run.Error)
	return r.Sink.WriteRun(ctx, run)
}

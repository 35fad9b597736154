package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/archive"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

func (a *app) collectCmd() *cobra.Command {
	var only []string
	var record string
	cmd := &cobra.Command{
		Use:   "collect [--source NAME]...",
		Short: "Collect once from every enabled source (or the named ones)",
		Long: `Collect runs every enabled source once, in parallel, normalises and checks what
they publish, stores the accepted rows, quarantines the rest with the reason, and
prints a summary per source. It first replays any spooled batches (observations,
quarantined rows and run records kept while the store was unreachable). Exit status:
0 when every source was ok, 3 when some failed or were degraded, 4 when every
source failed (see "gpuprice help exit-codes").

--record DIR keeps every raw response of the run in DIR (gzip'd, with URL, status,
headers and time; credentials redacted) so that ` + "`gpuprice reparse DIR`" + ` can rebuild the
prices after a parser fix; with archive.s3.bucket set the archive is then uploaded.`,
		Example: `  gpuprice collect
  gpuprice collect --source azure --source vast
  gpuprice collect --record /var/lib/gpuprice/archive/$(date -u +%Y%m%dT%H%M%SZ)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := a.collect(cmd, only, record)
			return a.redactErr(err)
		},
	}
	cmd.Flags().StringArrayVar(&only, "source", nil, "collect only this source (repeatable); see `gpuprice sources`")
	cmd.Flags().StringVar(&record, "record", "", "keep every raw response in this new directory, for reparse")
	return cmd
}

func (a *app) collect(cmd *cobra.Command, only []string, record string) error {
	ctx := cmd.Context()
	a.log = a.redactLogger(a.log)
	runner, err := a.openRunner(ctx, true)
	if err != nil {
		if base, ok := a.runningServer(); ok && errors.Is(err, store.ErrLocked) {
			return a.collectViaServer(ctx, base, only, record)
		}
		return err
	}
	defer runner.Store.Close()
	start := time.Now().UTC()
	runID := ingest.NewRunID(start)
	var rec *archive.Recorder
	if record != "" {
		if rec, err = archive.Create(record, runID, start, a.redactor().Secrets()); err != nil {
			return err
		}
	}
	jobs, err := a.buildJobs(only, rec, start.Truncate(time.Second))
	if err != nil {
		return err
	}
	if rec != nil && runner.FX.Refresh != nil {
		// The ECB rates go into the archive too, so that its reparse needs no network.
		sc := a.cfg.Sources[fxSourceName]
		c := *a.client()
		c.Observer = rec.Source(archive.FXSource, archive.SourceInfo{ObservedAt: start.Truncate(time.Second),
			Endpoint: sc.Endpoint})
		c.Cache = nil
		runner.FX.Refresh = ingest.ECBRates(&c, sc.Endpoint)
	}
	results := runner.Collect(ctx, jobs, ingest.Options{FX: ingest.FXEager, RunID: runID})
	a.printResults(results)
	explainUnreachable(a.stderr, results)
	if rec != nil {
		if err := a.finishArchive(ctx, rec); err != nil {
			return err
		}
	}
	if err := verdict(results); err != nil {
		return err
	}
	return resultsVerdict(results)
}

// resultsVerdict is sourcesVerdict of a run's results.
func resultsVerdict(results []ingest.Result) error {
	statuses := make([]string, len(results))
	for i, r := range results {
		statuses[i] = r.Status
	}
	return sourcesVerdict(statuses)
}

// finishArchive closes a recorded archive and uploads it when archive.s3 is set.
func (a *app) finishArchive(ctx context.Context, rec *archive.Recorder) error {
	err := rec.Close(time.Now())
	m := rec.Manifest()
	fmt.Fprintf(a.stdout, "archived %d responses of run %s in %s\n", len(m.Entries), m.RunID, rec.Dir())
	if err != nil {
		return fmt.Errorf("archive incomplete: %w", err)
	}
	if s3c := a.cfg.Archive.S3; s3c.Enabled() {
		n, err := archive.Upload(ctx, rec.Dir(), s3c)
		if err != nil {
			return fmt.Errorf("archive kept in %s but not uploaded: %w", rec.Dir(), err)
		}
		fmt.Fprintf(a.stdout, "uploaded %d objects to s3://%s/%s\n", n, s3c.Bucket, s3c.ObjectKey(m.RunID, ""))
	}
	return nil
}

func (a *app) spool() (*ingest.DirSpool, error) {
	dir, err := a.cfg.SpoolDir()
	if err != nil {
		return nil, err
	}
	return &ingest.DirSpool{Dir: dir, MaxBytes: a.cfg.Spool.MaxBytes}, nil
}

func (a *app) client() *fetch.Client {
	b := fetch.DefaultBackoff()
	b.MaxTries = a.cfg.HTTP.Retries
	return fetch.New(fetch.Options{
		Timeout:     a.cfg.HTTP.Timeout,
		UserAgent:   a.cfg.HTTP.UserAgent,
		Backoff:     b,
		MaxBody:     a.cfg.HTTP.MaxBodyBytes,
		Logger:      a.redactLogger(a.log),
		MinInterval: a.cfg.HTTP.MinInterval,
		CacheDir:    a.cfg.HTTP.CacheDir,
	})
}

// jobs builds the sources to run: the named ones, else every enabled one.
func (a *app) jobs(only []string) ([]ingest.Job, error) {
	return a.buildJobs(only, nil, time.Time{})
}

// buildJobs is jobs, recording into rec when it is not nil: each source then gets its
// own client reporting to the archive (sharing the host limiter and robots.txt cache),
// and a clock fixed at observed, stored in the archive so that reparse stamps rebuilt
// rows with the same time and they replace the recorded run's rows.
func (a *app) buildJobs(only []string, rec *archive.Recorder, observed time.Time) ([]ingest.Job, error) {
	for name := range a.cfg.Sources {
		if _, _, ok := scrapers.Lookup(name); !ok && name != fxSourceName {
			return nil, fmt.Errorf("config: sources.%s: no such source (known: %s)", name, strings.Join(scrapers.Names(), ", "))
		}
	}
	names := only
	if len(names) == 0 {
		for _, n := range scrapers.Names() {
			if a.cfg.Sources[n].IsEnabled() {
				names = append(names, n)
			}
		}
	}
	base := a.client()
	log := a.redactLogger(a.log)
	var jobs []ingest.Job
	for _, n := range names {
		sc := a.cfg.Sources[n]
		spec := ingest.SourceSpec{Endpoint: sc.Endpoint, Options: sc.Options, Client: base, Logger: log, Getenv: os.Getenv,
			ExpectRows: sc.ExpectRows}
		if rec != nil {
			c := *base
			c.Observer = rec.Source(n, archive.SourceInfo{ObservedAt: observed, Endpoint: sc.Endpoint, Options: sc.Options})
			c.Cache = nil // the archive holds whole answers, never a 304
			spec.Client, spec.Now = &c, func() time.Time { return observed }
		}
		job, err := ingest.NewJob(n, spec)
		if errors.Is(err, ingest.ErrUnknownSource) {
			return nil, usagef("--source %s: no such source (known: %s)", n, strings.Join(scrapers.Names(), ", "))
		}
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, job)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("no source to run: every source is disabled in the config")
	}
	return jobs, nil
}

// resultColumns are the columns of a collection's summary (collect, reparse,
// import, backfill, collect handed to serve): the run record's JSON names.
var resultColumns = []string{"source", "status", "rows_accepted", "rows_quarantined", "rows_not_offered",
	"unknown_gpus", "rows_spooled", "duration", "rows_lost", "error"}

func (a *app) printResults(results []ingest.Result) {
	var rows [][]string
	for _, r := range results {
		rows = append(rows, a.resultRow(r.Run, r.Spooled, r.Duration))
	}
	_ = output(a.stdout, "table", resultColumns, rows, nil, "")
}

// resultRow is a run's row of the summary (resultColumns), its error redacted.
func (a *app) resultRow(r schemas.Run, spooled int, took time.Duration) []string {
	return []string{r.Source, r.Status, strconv.Itoa(r.RowsAccepted), strconv.Itoa(r.RowsQuarantine),
		strconv.Itoa(r.RowsNotOffered), strconv.Itoa(r.UnknownGPUs), strconv.Itoa(spooled),
		took.Round(time.Millisecond).String(), strconv.Itoa(r.RowsLost), oneLine(a.redactor().Redact(r.Error), 160)}
}

// verdict is the error of runs that lost rows or were interrupted (non-zero exit),
// nil otherwise.
func verdict(results []ingest.Result) error {
	var lost, spooled int
	var interrupted []string
	for _, r := range results {
		lost += r.RowsLost
		spooled += r.RowsSpooled
		if r.Status == schemas.RunInterrupted {
			interrupted = append(interrupted, r.Source)
		}
	}
	var errs []error
	if lost > 0 {
		errs = append(errs, fmt.Errorf("%w: %d rows neither stored nor spooled", ErrRowsLost, lost))
	}
	if len(interrupted) > 0 {
		errs = append(errs, fmt.Errorf("%w (%s): what was read is stored or spooled (%d spooled)", ErrInterrupted,
			strings.Join(interrupted, ", "), spooled))
	}
	return errors.Join(errs...)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func (a *app) spoolCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "spool",
		Short: "Show or replay batches kept on disk while the store was unreachable",
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "status",
		Example: `  gpuprice spool status`,
		Short:   "Show what waits in the spool",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sp, err := a.spool()
			if err != nil {
				return err
			}
			s, err := sp.Status()
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "spool %s: %d segments, %d rows, %d quarantined rows, %d run records, %d bytes",
				s.Dir, s.Segments, s.Rows, s.Quarantine, s.Runs, s.Bytes)
			if !s.Oldest.IsZero() {
				fmt.Fprintf(a.stdout, ", oldest %s", s.Oldest.UTC().Format(time.RFC3339))
			}
			fmt.Fprintln(a.stdout)
			if len(s.Corrupt) > 0 {
				fmt.Fprintf(a.stdout, "corrupt segments (kept, not replayed): %s\n", strings.Join(s.Corrupt, ", "))
			}
			return nil
		},
	}, &cobra.Command{
		Use: "replay",
		Example: `  gpuprice spool replay
  gpuprice spool replay --store clickhouse://localhost:9000/gpuprice`,
		Short: "Write spooled batches to the store, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			runner, err := a.openRunner(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer runner.Store.Close()
			n, err := runner.ReplaySpool(cmd.Context())
			fmt.Fprintf(a.stdout, "replayed %d rows\n", n)
			return err
		},
	})
	return cmd
}

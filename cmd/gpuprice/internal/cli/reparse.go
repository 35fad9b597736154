package cli

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/archive"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

func init() { addCommand((*app).reparseCmd) }

func (a *app) reparseCmd() *cobra.Command {
	var only []string
	cmd := &cobra.Command{
		Use:   "reparse DIR",
		Short: "Rebuild observations from an archive recorded by `collect --record`",
		Long: `reparse runs the archived sources again, with today's parsers, on the responses
recorded in DIR: every request a source makes is answered from the archive (no
network), and rows are stamped with the recorded observation time, so that they
replace the rows of the recorded run instead of adding to them. Reparsing the same
archive twice adds nothing. Sources run with the endpoint and options they were
recorded with; a source whose mode depends on a credential (runpod's API key) takes
the same mode only when the same variable is set. Requests the archive cannot answer
are listed.`,
		Example: `  gpuprice reparse /var/lib/gpuprice/archive/20260301T120000Z
  gpuprice reparse --source azure ./archive --store clickhouse://localhost:9000/gpuprice`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return redactErr(a.reparse(cmd, args[0], only))
		},
	}
	cmd.Flags().StringArrayVar(&only, "source", nil, "reparse only this archived source (repeatable)")
	return cmd
}

func (a *app) reparse(cmd *cobra.Command, dir string, only []string) error {
	ctx := cmd.Context()
	a.log = redactLogger(a.log)
	arc, err := archive.Open(dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(arc.Manifest.Sources))
	for n := range arc.Manifest.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(only) > 0 {
		for _, n := range only {
			if _, ok := arc.Manifest.Sources[n]; !ok {
				return fmt.Errorf("--source %s: not in the archive (it has: %s)", n, strings.Join(names, ", "))
			}
		}
		names = only
	}
	if len(names) == 0 {
		return fmt.Errorf("reparse: the archive in %s records no source", dir)
	}
	// Answers come from disk: retries need no waiting, a Retry-After is not honoured
	// again, and the tries cover every recorded retry.
	client := fetch.New(fetch.Options{
		Timeout: a.cfg.HTTP.Timeout, UserAgent: a.cfg.HTTP.UserAgent, MaxBody: a.cfg.HTTP.MaxBodyBytes,
		Backoff: fetch.Backoff{MaxTries: max(a.cfg.HTTP.Retries, 10), Initial: time.Millisecond, Max: 10 * time.Millisecond},
		Logger:  a.log,
	})
	client.HTTP.Transport = arc
	var jobs []ingest.Job
	for _, n := range names {
		sinfo, factory, ok := scrapers.Lookup(n)
		if !ok {
			return fmt.Errorf("reparse: archived source %s is not a known source (known: %s)", n, strings.Join(scrapers.Names(), ", "))
		}
		info := arc.Manifest.Sources[n]
		observed := info.ObservedAt
		src, err := factory(scrapers.Config{
			Name: n, Endpoint: info.Endpoint, Options: info.Options, Client: client,
			Logger: a.log.With("source", n), Now: func() time.Time { return observed },
			Secrets: sinfo.Secrets(os.Getenv),
		})
		if err != nil {
			return err
		}
		jobs = append(jobs, ingest.Job{Name: n, Source: src})
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	runner, err := a.runner(st)
	if err != nil {
		return err
	}
	runID := ingest.NewRunID(time.Now())
	fmt.Fprintf(a.stdout, "reparsing run %s (%d responses) as run %s\n", arc.Manifest.RunID, len(arc.Manifest.Entries), runID)
	results := runner.Collect(ctx, jobs, ingest.Options{FX: ingest.FXLazy, RunID: runID})
	a.printResults(results)
	if ms := arc.Misses(); len(ms) > 0 {
		fmt.Fprintf(a.stdout, "%d requests were not in the archive:\n", len(ms))
		for i, m := range ms {
			if i == 20 {
				fmt.Fprintf(a.stdout, "  … and %d more\n", len(ms)-20)
				break
			}
			fmt.Fprintf(a.stdout, "  %s\n", m)
		}
	}
	for _, r := range results {
		if r.Status != schemas.RunFailed {
			return nil
		}
	}
	return ErrAllFailed
}

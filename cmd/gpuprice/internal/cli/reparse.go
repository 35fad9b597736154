package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/archive"
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
are listed. The ECB reference rates the recorded run fetched come from the archive too.

A recorded example (examples/recorded: responses built from the sources' test
fixtures, its manifest's origin "recorded") loads offline: every row is stored marked
recorded (attribute origin=recorded, shown by prices, the API and the web app) with
the time it was recorded at, and each source is held to the row count recorded with
it instead of its live coverage guard. Each of its responses says its provenance
(verbatim capture, re-typed from a published page, or constructed in the provider's
format with partly illustrative values); every row carries it as attribute
provenance, and reparse prints how many rows came from each kind.`,
		Example: `  gpuprice reparse examples/recorded
  gpuprice reparse /var/lib/gpuprice/archive/20260301T120000Z
  gpuprice reparse --source azure ./archive --store clickhouse://localhost:9000/gpuprice`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.redactErr(a.reparse(cmd, args[0], only))
		},
	}
	cmd.Flags().StringArrayVar(&only, "source", nil, "reparse only this archived source (repeatable)")
	return cmd
}

func (a *app) reparse(cmd *cobra.Command, dir string, only []string) error {
	ctx := cmd.Context()
	a.log = a.redactLogger(a.log)
	arc, err := archive.Open(dir)
	if err != nil {
		return err
	}
	jo := archive.JobOptions{Timeout: a.cfg.HTTP.Timeout, UserAgent: a.cfg.HTTP.UserAgent,
		MaxBody: a.cfg.HTTP.MaxBodyBytes, Retries: a.cfg.HTTP.Retries, Logger: a.log, Getenv: os.Getenv}
	jobs, err := arc.Jobs(only, jo)
	if err != nil {
		if len(only) > 0 {
			return usagef("--source: %w", err)
		}
		return fmt.Errorf("reparse: %w", err)
	}
	runner, err := a.openRunner(ctx, false)
	if err != nil {
		return err
	}
	defer runner.Store.Close()
	if rates := arc.FXRates(jo); rates != nil {
		// The ECB rates of the recorded run, from the archive: no network.
		runner.FX.Refresh = rates
	}
	runID := ingest.NewRunID(time.Now())
	if arc.Manifest.Origin == archive.OriginRecorded {
		runID = recordedRunPrefix + runID // what analytics commands look for (noteRecordedStore)
	}
	fmt.Fprintf(a.stdout, "reparsing run %s (%d responses) as run %s\n", arc.Manifest.RunID, len(arc.Manifest.Entries),
		runID)
	if arc.Manifest.Origin == archive.OriginRecorded {
		fmt.Fprintln(a.stdout,
			"a recorded example: every row is stored marked recorded (attrs origin=recorded), with the time it was recorded "+
				"at; these are not today's prices")
	}
	results := runner.Collect(ctx, jobs, ingest.Options{FX: ingest.FXLazy, RunID: runID})
	a.printResults(results)
	if arc.Manifest.Origin == archive.OriginRecorded {
		a.printProvenance(arc.ProvenanceRows())
	}
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
	if err := verdict(results); err != nil {
		return err
	}
	return resultsVerdict(results)
}

// printProvenance says how many of a recorded example's rows come from verbatim
// captures, from re-typed pages and from constructed responses, so that nobody takes
// the example's numbers for a provider's.
func (a *app) printProvenance(rows map[string]int) {
	if len(rows) == 0 {
		return
	}
	var parts []string
	for _, p := range []struct{ kind, what string }{
		{archive.ProvenanceVerbatim, "from verbatim captures of real responses"},
		{archive.ProvenanceRetyped, "from pages re-typed by hand from the providers' published ones"},
		{archive.ProvenanceConstructed,
			"from responses constructed in the providers' formats (values partly illustrative, not the providers' prices)"},
		{"", "from responses whose provenance is not recorded"},
	} {
		if n := rows[p.kind]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, p.what))
		}
	}
	fmt.Fprintf(a.stdout, "rows by the provenance of their response (attrs provenance; examples/recorded/README.md): %s\n",
		strings.Join(parts, "; "))
}

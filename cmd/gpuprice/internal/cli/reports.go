package cli

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/ingest/archive"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

// reader is the report reader over st.
func (a *app) reader(st store.Store) (*query.Reader, error) {
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		return nil, err
	}
	return &query.Reader{Store: st, Catalog: cat, Providers: a.cfg.ProviderCatalog().Names(), SourceDefs: a.sourceDefs(),
		Redact: a.redactor().Redact}, nil
}

// sourceDefs describes every registered source as configured (no last run).
func (a *app) sourceDefs() []query.SourceRow {
	providers := a.cfg.ProviderCatalog()
	var rows []query.SourceRow
	for _, n := range scrapers.Names() {
		info, _, _ := scrapers.Lookup(n)
		sc := a.cfg.Sources[n]
		r := query.SourceRow{
			Name: n, Provider: info.Provider, Tier: providers.Lookup(info.Provider).Tier, Method: info.Method,
			Pricing: info.Pricing, Credentials: info.Credentials, Schedule: info.Schedule, Enabled: sc.IsEnabled(),
			Endpoint: info.DefaultEndpoint, Description: info.Description,
		}
		if sc.Schedule != "" {
			r.Schedule = sc.Schedule
		}
		if sc.Endpoint != "" {
			r.Endpoint = sc.Endpoint
		}
		rows = append(rows, r)
	}
	return rows
}

// withReports calls fn with a report source: the store, or, when the embedded store
// is held by a running `gpuprice serve`, that server's API (said in one line on
// stderr). Errors about a parameter are written as flag errors. An answer that read
// rows of a recorded example says so on stderr after the output, by row
// (query.Result.Recorded), whatever ran since.
func (a *app) withReports(cmd *cobra.Command, fn func(query.Source) error) error {
	recorded := map[string]int{}
	note := func(m map[string]int) {
		for p, n := range m {
			recorded[p] = max(recorded[p], n)
		}
	}
	st, err := a.openExistingStore(cmd.Context())
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			if base, ok := a.runningServer(); ok {
				fmt.Fprintf(a.stderr, "gpuprice: the store is held by gpuprice serve; asking it at %s\n", base)
				err := fn(query.Noting(&query.Client{Base: base, HTTP: &http.Client{Timeout: 5 * time.Minute}}, note))
				a.noteRecordedAnswer(cmd, recorded)
				return query.FlagError(err)
			}
		}
		return err
	}
	defer st.Close()
	r, err := a.reader(st)
	if err != nil {
		return err
	}
	if err := fn(query.Noting(r, note)); err != nil {
		return query.FlagError(err)
	}
	a.noteRecordedAnswer(cmd, recorded)
	return nil
}

// recordedRunPrefix starts the run id of a reparse of a recorded example.
const recordedRunPrefix = query.RecordedRunPrefix

// analyticsCommands compute from bars or many rows, whose outputs carry no
// per-row origin: they say on stderr when their answer read rows of a recorded
// example (prices marks each row and counts them itself).
var analyticsCommands = map[string]bool{"volatility": true, "spreads": true, "tokens": true, "history": true,
	"index": true, "series": true, "report": true, "terms": true, "breakeven": true, "inference": true, "digest": true}

// noteRecordedAnswer says on stderr that the answer of an analytics command read
// rows of a recorded example (rec: per provider, its series): it is not of today's
// prices.
func (a *app) noteRecordedAnswer(cmd *cobra.Command, rec map[string]int) {
	if analyticsCommands[cmd.Name()] && len(rec) > 0 {
		fmt.Fprintf(a.stderr, "gpuprice: this answer holds a %s\n", query.RecordedNote(rec))
	}
}

// noteMatches says on stderr what names that were not canonical matched.
func (a *app) noteMatches(ms []schemas.Match) {
	for _, m := range ms {
		if !m.Exact() {
			fmt.Fprintf(a.stderr, "gpuprice: --%s\n", m)
		}
	}
}

// noteRecorded says on stderr how many of the rows come from a recorded example
// (`gpuprice reparse examples/recorded`): their origin column says "recorded" and
// their time is when they were recorded; they are not today's prices.
func (a *app) noteRecorded(rows []schemas.Observation) {
	if n := query.CountRecorded(rows); n > 0 {
		// A recorded example's rows say which response they were parsed from: most
		// are constructed around real excerpts, and the note says how many.
		constructed := 0
		for _, o := range rows {
			if o.Attrs[schemas.AttrProvenance] == archive.ProvenanceConstructed {
				constructed++
			}
		}
		of := ""
		if constructed > 0 {
			of = fmt.Sprintf("; %d of them from responses constructed with partly illustrative values (attrs provenance)",
				constructed)
		}
		fmt.Fprintf(a.stderr,
			"gpuprice: %d of %d rows are recorded examples (origin \"recorded\": loaded from a recorded archive, "+
				"observed at the time they were recorded%s), not today's prices\n", n, len(rows), of)
	}
}

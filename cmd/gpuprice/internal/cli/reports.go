package cli

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
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
// stderr). Errors about a parameter are written as flag errors.
func (a *app) withReports(cmd *cobra.Command, fn func(query.Source) error) error {
	st, err := a.openExistingStore(cmd.Context())
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			if base, ok := a.runningServer(); ok {
				fmt.Fprintf(a.stderr, "gpuprice: the store is held by gpuprice serve; asking it at %s\n", base)
				return query.FlagError(fn(&query.Client{Base: base, HTTP: &http.Client{Timeout: 5 * time.Minute}}))
			}
		}
		return err
	}
	defer st.Close()
	r, err := a.reader(st)
	if err != nil {
		return err
	}
	if err := fn(r); err != nil {
		return query.FlagError(err)
	}
	if analyticsCommands[cmd.Name()] {
		a.noteRecordedStore(cmd, st)
	}
	return nil
}

// recordedRunPrefix starts the run id of a reparse of a recorded example.
const recordedRunPrefix = query.RecordedRunPrefix

// analyticsCommands compute from bars or many rows, whose outputs carry no
// per-row origin: they say on stderr when the store holds a recorded example.
var analyticsCommands = map[string]bool{"volatility": true, "spreads": true, "tokens": true, "history": true,
	"index": true, "series": true, "report": true}

// noteRecordedStore says on stderr that the store holds rows of a recorded example
// (one of its last runs is a reparse of one): an analysis over them is not of
// today's prices.
func (a *app) noteRecordedStore(cmd *cobra.Command, st store.Store) {
	runs, err := st.Runs(cmd.Context(), "", 100)
	if err != nil {
		return
	}
	for _, r := range runs {
		if strings.HasPrefix(r.RunID, recordedRunPrefix) {
			fmt.Fprintf(a.stderr, "gpuprice: this store holds a recorded example (run %s, `gpuprice reparse`): "+
				"prices marked origin \"recorded\" are not today's prices, and neither is what is computed from them\n", r.RunID)
			return
		}
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
			of = fmt.Sprintf("; %d of them from responses constructed with partly illustrative values (attrs provenance)", constructed)
		}
		fmt.Fprintf(a.stderr, "gpuprice: %d of %d rows are recorded examples (origin \"recorded\": loaded from a recorded archive, "+
			"observed at the time they were recorded%s), not today's prices\n", n, len(rows), of)
	}
}

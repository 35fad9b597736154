package query

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// ---- runs

// RecordedRunPrefix starts the run id of a reparse of a recorded example
// (`gpuprice reparse examples/recorded`): a store whose runs have it holds recorded
// rows, which the analytics and the report say.
const RecordedRunPrefix = "recorded-"

// RunsQuery is `gpuprice runs` and GET /api/v1/runs.
type RunsQuery struct {
	Source string
	Limit  int
	// Since and Until bound the runs' start times: [Since, Until); zero: unbounded.
	Since, Until time.Time
}

// ParseRuns reads a RunsQuery's parameters; limit defaults to 20 (over the API too).
func ParseRuns(v url.Values, caps Caps) (RunsQuery, error) {
	p := newParams(v, caps)
	q := RunsQuery{Source: p.str("source")}
	hi := max(caps.MaxRows, 0)
	if hi == 0 {
		q.Limit = p.integer("limit", 20, 0, 1<<31-1)
	} else {
		q.Limit = p.integer("limit", 20, 1, hi)
	}
	q.Since, q.Until = p.bounds()
	return q, p.done("format")
}

// bounds reads since and until, each a span back from now (2w, 90d), a date or an
// RFC 3339 time; absent: unbounded (zero).
func (p *params) bounds() (since, until time.Time) {
	now := time.Now().UTC().Truncate(time.Second)
	if s := p.str("until"); s != "" {
		t, err := ParseUntil(s)
		if err != nil {
			p.fail("until", "%q: %v", s, err)
		}
		until = t
	}
	if s := p.str("since"); s != "" {
		end := now
		if !until.IsZero() {
			end = until
		}
		t, err := ParseSince(s, end)
		if err != nil {
			p.fail("since", "%q: %v", s, err)
		}
		since = t
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		p.fail("since", "is not before --until")
	}
	return since, until
}

// setBounds sets since and until as RFC 3339 times when they are not zero.
func setBounds(v url.Values, since, until time.Time) {
	if !since.IsZero() {
		v.Set("since", since.UTC().Format(time.RFC3339))
	}
	if !until.IsZero() {
		v.Set("until", until.UTC().Format(time.RFC3339))
	}
}

// within reports whether t is in [since, until), zero bounds being open.
func within(t, since, until time.Time) bool {
	return (since.IsZero() || !t.Before(since)) && (until.IsZero() || t.Before(until))
}

// newestWithin reads newest-first records through get (limit 0: all) and keeps
// those whose time is within [since, until), at most limit of them (0: all). It
// asks for more rows until enough are kept or a row older than since (or the end)
// is reached, so a bounded query reads little more than it returns.
func newestWithin[T any](get func(limit int) ([]T, error), at func(T) time.Time, since, until time.Time,
	limit int) ([]T, error) {
	if since.IsZero() && until.IsZero() {
		return get(limit)
	}
	n := max(limit*2, 200)
	for {
		rows, err := get(n)
		if err != nil {
			return nil, err
		}
		var kept []T
		for _, r := range rows {
			if within(at(r), since, until) {
				kept = append(kept, r)
			}
		}
		older := len(rows) > 0 && !since.IsZero() && at(rows[len(rows)-1]).Before(since)
		if (limit > 0 && len(kept) >= limit) || len(rows) < n || older {
			if limit > 0 && len(kept) > limit {
				kept = kept[:limit]
			}
			return kept, nil
		}
		n *= 4
	}
}

// Values are the query's parameters.
func (q RunsQuery) Values() url.Values {
	v := vals("source", q.Source)
	v.Set("limit", strconv.Itoa(q.Limit))
	setBounds(v, q.Since, q.Until)
	return v
}

func (r *Reader) redact(s string) string {
	if r.Redact == nil {
		return schemas.RedactText(s)
	}
	return r.Redact(s)
}

// Runs returns run records, newest first, errors redacted.
func (r *Reader) Runs(ctx context.Context, q RunsQuery) (Result[[]schemas.Run], error) {
	var res Result[[]schemas.Run]
	if q.Source != "" && len(r.SourceDefs) > 0 {
		var names []string
		for _, s := range r.SourceDefs {
			names = append(names, s.Name)
		}
		m, err := schemas.ResolveName("source", q.Source, names)
		if err != nil {
			return res, paramOf("source", err)
		}
		res.Matched = append(res.Matched, m)
		q.Source = m.Names[0]
	}
	runs, err := newestWithin(func(n int) ([]schemas.Run, error) { return r.Store.Runs(ctx, q.Source, n) },
		func(r schemas.Run) time.Time { return r.StartedAt }, q.Since, q.Until, q.Limit)
	if err != nil {
		return res, err
	}
	// A started run whose process is gone (killed) shows as interrupted before the
	// next run rewrites it so.
	runs = store.Judged(runs, time.Now())
	for i := range runs {
		runs[i].Error = r.redact(runs[i].Error)
	}
	res.Data = nonNil(runs)
	return res, nil
}

// RunsTable is the runs as table rows.
func RunsTable(runs []schemas.Run) ([]string, [][]string) {
	var rows [][]string
	for _, r := range runs {
		rows = append(rows, []string{r.RunID, r.Source, r.StartedAt.Format(time.RFC3339),
			strconv.FormatFloat(r.FinishedAt.Sub(r.StartedAt).Seconds(), 'f', 0, 64), r.Status, strconv.Itoa(r.RowsAccepted),
			strconv.Itoa(r.RowsQuarantine), strconv.Itoa(r.RowsSuspect), strconv.Itoa(r.RowsNotOffered),
			strconv.Itoa(r.UnknownGPUs),
			OneLine(r.Error, 200)})
	}
	return []string{"run_id", "source", "started_at", "seconds", "status", "rows_accepted", "rows_quarantined",
		"rows_suspect", "rows_not_offered",
		"unknown_gpus", "error"}, rows
}

// OneLine folds s onto one line of at most n bytes.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// ---- quarantine

// QuarantineQuery is `gpuprice quarantine` and GET /api/v1/quarantine.
type QuarantineQuery struct {
	Limit int
	// Since and Until bound the quarantine times: [Since, Until); zero: unbounded.
	Since, Until time.Time
}

// ParseQuarantine reads a QuarantineQuery's parameters; limit defaults to 50.
func ParseQuarantine(v url.Values, caps Caps) (QuarantineQuery, error) {
	p := newParams(v, caps)
	var q QuarantineQuery
	if caps.MaxRows == 0 {
		q.Limit = p.integer("limit", 50, 0, 1<<31-1)
	} else {
		q.Limit = p.integer("limit", 50, 1, caps.MaxRows)
	}
	q.Since, q.Until = p.bounds()
	return q, p.done("format")
}

// Values are the query's parameters.
func (q QuarantineQuery) Values() url.Values {
	v := url.Values{"limit": {strconv.Itoa(q.Limit)}}
	setBounds(v, q.Since, q.Until)
	return v
}

// Quarantine returns quarantined rows, newest first, redacted.
func (r *Reader) Quarantine(ctx context.Context, q QuarantineQuery) (Result[[]schemas.Quarantined], error) {
	var res Result[[]schemas.Quarantined]
	rows, err := newestWithin(func(n int) ([]schemas.Quarantined, error) { return r.Store.Quarantine(ctx, n) },
		func(q schemas.Quarantined) time.Time { return q.QuarantinedAt }, q.Since, q.Until, q.Limit)
	if err != nil {
		return res, err
	}
	for i := range rows {
		rows[i].Reason, rows[i].Raw = r.redact(rows[i].Reason), r.redact(rows[i].Raw)
	}
	res.Data = nonNil(rows)
	return res, nil
}

// QuarantineTable is the quarantined rows as table rows.
func QuarantineTable(rows []schemas.Quarantined) ([]string, [][]string) {
	var out [][]string
	for _, q := range rows {
		out = append(out, []string{q.ID(), q.QuarantinedAt.Format(time.RFC3339), q.Source, q.RunID, q.Reason, OneLine(q.Raw,
			200)})
	}
	return []string{"id", "quarantined_at", "source", "run_id", "reason", "raw"}, out
}

// ---- fx

// FXQuery is `gpuprice fx` and GET /api/v1/fx.
type FXQuery struct {
	Currency string
	Days     int
}

// ParseFX reads an FXQuery's parameters.
func ParseFX(v url.Values, caps Caps) (FXQuery, error) {
	p := newParams(v, caps)
	q := FXQuery{Currency: strings.ToUpper(p.str("currency"))}
	if q.Currency != "" && (len(q.Currency) != 3 || strings.Trim(q.Currency, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "") {
		p.fail("currency", "%q: an ISO 4217 code, e.g. EUR", q.Currency)
	}
	q.Days = p.integer("days", 0, 0, 100000)
	return q, p.done("format")
}

// Values are the query's parameters.
func (q FXQuery) Values() url.Values {
	v := vals("currency", q.Currency)
	setInt(v, "days", q.Days)
	return v
}

// FX returns the stored reference rates (of one currency, of the last Days days).
func (r *Reader) FX(ctx context.Context, q FXQuery) (Result[[]schemas.FXRate], error) {
	var res Result[[]schemas.FXRate]
	since := time.Time{}
	if q.Days > 0 {
		since = time.Now().AddDate(0, 0, -q.Days)
	}
	rates, err := r.Store.FXRates(ctx, since)
	if err != nil {
		return res, err
	}
	out := rates[:0:0]
	for _, x := range rates {
		if q.Currency == "" || strings.EqualFold(x.Currency, q.Currency) {
			out = append(out, x)
		}
	}
	res.Data = nonNil(out)
	return res, nil
}

// FXTable is the rates as table rows.
func FXTable(rates []schemas.FXRate) ([]string, [][]string) {
	var rows [][]string
	for _, x := range rates {
		rows = append(rows, []string{x.Date.Format(time.DateOnly), x.Currency, Num(x.USDPerUnit), x.Source})
	}
	return []string{"date", "currency", "usd_per_unit", "source"}, rows
}

// ---- gpus

// GPUsQuery is `gpuprice gpus` and GET /api/v1/gpus: the catalog, or the GPUs a name
// matches.
type GPUsQuery struct {
	GPU string
}

// ParseGPUs reads a GPUsQuery's parameters.
func ParseGPUs(v url.Values, caps Caps) (GPUsQuery, error) {
	p := newParams(v, caps)
	q := GPUsQuery{GPU: p.str("gpu")}
	return q, p.done("format")
}

// Values are the query's parameters.
func (q GPUsQuery) Values() url.Values { return vals("gpu", q.GPU) }

// GPUs returns the catalog's GPUs (those the name matches when one is given).
func (r *Reader) GPUs(ctx context.Context, q GPUsQuery) (Result[[]schemas.GPU], error) {
	var res Result[[]schemas.GPU]
	all := r.Catalog.All()
	if q.GPU == "" {
		res.Data = all
		return res, nil
	}
	sel, err := r.Resolve(ctx, Filter{GPU: q.GPU})
	if err != nil {
		return res, err
	}
	res.Matched = sel.Matches
	names := sel.GPUs()
	out := []schemas.GPU{}
	for _, g := range all {
		if slices.Contains(names, g.ID) {
			out = append(out, g)
		}
	}
	res.Data = out
	return res, nil
}

// ---- sources

// SourceRow is one source: what it is, how it is configured, and its last run.
type SourceRow struct {
	Name        string       `json:"name"`
	Provider    string       `json:"provider"`
	Tier        string       `json:"tier"`
	Method      string       `json:"method"`
	Pricing     []string     `json:"pricing"`
	Credentials string       `json:"credentials"`
	Schedule    string       `json:"schedule"`
	Enabled     bool         `json:"enabled"`
	Endpoint    string       `json:"endpoint"`
	Description string       `json:"description"`
	LastRun     *schemas.Run `json:"last_run"`
	// RecordedSeries is how many of the store's series of the provider hold rows of
	// a recorded example (by row, whatever ran since; 0 for none).
	RecordedSeries int `json:"recorded_series"`
}

// SourcesQuery is `gpuprice sources` and GET /api/v1/sources.
type SourcesQuery struct{}

// ParseSources reads a SourcesQuery's parameters (none).
func ParseSources(v url.Values, caps Caps) (SourcesQuery, error) {
	return SourcesQuery{}, newParams(v, caps).done("format")
}

// Sources returns every source with its last run (nil when it never ran).
func (r *Reader) Sources(ctx context.Context, _ SourcesQuery) (Result[[]SourceRow], error) {
	var res Result[[]SourceRow]
	out := make([]SourceRow, len(r.SourceDefs))
	for i, s := range r.SourceDefs {
		s.LastRun = nil
		runs, err := r.Store.Runs(ctx, s.Name, 1)
		if err != nil {
			return res, err
		}
		if len(runs) > 0 {
			lr := store.Judged(runs, time.Now())[0]
			lr.Error = r.redact(lr.Error)
			s.LastRun = &lr
		}
		s.Pricing = nonNil(s.Pricing)
		s.Endpoint = r.redact(s.Endpoint)
		out[i] = s
	}
	// By row: the store's series of each source's provider loaded from a recorded
	// example, whatever ran since.
	rec, err := r.recorded(ctx, store.Filter{})
	if err != nil {
		return res, err
	}
	for i := range out {
		out[i].RecordedSeries = rec[out[i].Provider]
	}
	res.Data, res.Recorded = out, rec
	return res, nil
}

func paramOf(param string, err error) error {
	var nm *schemas.NoMatchError
	if asNoMatch(err, &nm) {
		return &ParamError{Param: param, Msg: err.Error()[len(nm.Kind)+1:], Suggestions: nm.Suggestions}
	}
	return &ParamError{Param: param, Msg: err.Error()}
}

// ---- alerts

// AlertsQuery is `gpuprice alerts --dry-run` and GET /api/v1/alerts: every rule
// evaluated as of At, nothing sent, the state left as it was.
type AlertsQuery struct {
	At time.Time
	// Window is how far back the alert history (Report.Recent) goes: the
	// episodes that fired at some time in (At − Window, At].
	Window time.Duration
}

// RecentAlertsLimit bounds the episodes of the alert history listed.
const RecentAlertsLimit = 500

// ParseAlerts reads an AlertsQuery's parameters.
func ParseAlerts(v url.Values, caps Caps) (AlertsQuery, error) {
	p := newParams(v, caps)
	q := AlertsQuery{At: p.at("at"), Window: p.span("window", "7d")}
	return q, p.done("format")
}

// Values are the query's parameters.
func (q AlertsQuery) Values() url.Values {
	v := vals("at", q.At.UTC().Format(time.RFC3339))
	if q.Window > 0 {
		v.Set("window", FormatSpan(q.Window))
	}
	return v
}

// RecentAlerts reads the alert history of st (firing and recently resolved
// episodes of the window before at); a store without one has none.
func RecentAlerts(ctx context.Context, st store.Store, at time.Time, window time.Duration) ([]alert.Episode, error) {
	h, ok := st.(store.AlertHistory)
	if !ok {
		return []alert.Episode{}, nil
	}
	return alert.RecentEpisodes(ctx, h, at, window, RecentAlertsLimit)
}

// Alerts evaluates the rules as of At without notifying (an empty report without
// rules).
func (r *Reader) Alerts(ctx context.Context, q AlertsQuery) (Result[alert.Report], error) {
	var res Result[alert.Report]
	rep := alert.Report{At: q.At, DryRun: true}
	if r.DryRunAlerts != nil {
		var err error
		if rep, err = r.DryRunAlerts(ctx, q.At); err != nil {
			return res, err
		}
	}
	recent, err := RecentAlerts(ctx, r.Store, q.At, q.Window)
	if err != nil {
		return res, err
	}
	rep.Rules, rep.Deliveries, rep.Recent = nonNil(rep.Rules), nonNil(rep.Deliveries), recent
	res.Data = rep
	// The rules read day prices as of At: the series in force over the window.
	res.Recorded, err = r.recorded(ctx, store.Filter{Since: q.At.Add(-max(q.Window, store.Daily)), Until: q.At})
	return res, err
}

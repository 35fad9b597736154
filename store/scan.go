package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// Rows is what the scanners below read: database/sql's *sql.Rows and the
// ClickHouse driver's rows both are.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// QuarantineSQL lists quarantined rows newest first, the same on every backend: a row
// written twice (a replayed spool segment, a reparsed archive) is listed once, at
// the time it was first quarantined. QuarantineQuery adds the limit.
const QuarantineSQL = `SELECT min(quarantined_at) AS first_at, run_id, source, reason, raw FROM quarantine
		GROUP BY run_id, source, reason, raw
		ORDER BY first_at DESC, run_id, source, reason, raw`

// QuarantineQuery is QuarantineSQL with its arguments for at most limit rows (0: all);
// a negative limit is an error.
func QuarantineQuery(limit int) (string, []any, error) {
	if limit < 0 {
		return "", nil, fmt.Errorf("quarantine: negative limit %d", limit)
	}
	if limit == 0 {
		return QuarantineSQL, nil, nil
	}
	return QuarantineSQL + ` LIMIT ?`, []any{limit}, nil
}

// ScanQuarantine reads the rows of QuarantineSQL, each time through at (the
// backend's conversion to UTC).
func ScanQuarantine(rows Rows, at func(time.Time) time.Time) ([]schemas.Quarantined, error) {
	var out []schemas.Quarantined
	for rows.Next() {
		var r schemas.Quarantined
		if err := rows.Scan(&r.QuarantinedAt, &r.RunID, &r.Source, &r.Reason, &r.Raw); err != nil {
			return nil, err
		}
		r.QuarantinedAt = at(r.QuarantinedAt)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ScanRuns reads run records from rows of the columns run_id, source, started_at,
// finished_at, status, rows_accepted, rows_quarantined, unknown_gpus, error,
// rows_stored, rows_spooled, rows_lost, rows_suspect, rows_not_offered, owner,
// span_since, span_until (the counts as Int64, the span as Unix seconds), each time
// through at (the backend's conversion to UTC).
func ScanRuns(rows Rows, at func(time.Time) time.Time) ([]schemas.Run, error) {
	var out []schemas.Run
	for rows.Next() {
		var (
			r                                                      schemas.Run
			acc, quar, unk, stored, spool, lost, suspect, notOffer int64
			since, until                                           int64
		)
		if err := rows.Scan(&r.RunID, &r.Source, &r.StartedAt, &r.FinishedAt, &r.Status, &acc, &quar,
			&unk, &r.Error, &stored, &spool, &lost, &suspect, &notOffer, &r.Owner, &since, &until); err != nil {
			return nil, err
		}
		r.RowsSuspect, r.RowsNotOffered = int(suspect), int(notOffer)
		r.StartedAt, r.FinishedAt = at(r.StartedAt), at(r.FinishedAt)
		r.RowsAccepted, r.RowsQuarantine, r.UnknownGPUs = int(acc), int(quar), int(unk)
		r.RowsStored, r.RowsSpooled, r.RowsLost = int(stored), int(spool), int(lost)
		r.SpanSince, r.SpanUntil = FromUnixSeconds(since), FromUnixSeconds(until)
		out = append(out, r)
	}
	return out, rows.Err()
}

// ScanFXRates reads the rows of an FX rates query (date as YYYY-MM-DD text,
// currency, USD per unit, source), the same on every backend.
func ScanFXRates(rows Rows) ([]schemas.FXRate, error) {
	var out []schemas.FXRate
	for rows.Next() {
		var (
			r   schemas.FXRate
			day string
		)
		if err := rows.Scan(&day, &r.Currency, &r.USDPerUnit, &r.Source); err != nil {
			return nil, err
		}
		var err error
		if r.Date, err = time.Parse(time.DateOnly, day); err != nil {
			return nil, fmt.Errorf("date %q: %w", day, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// stopErr carries an error of a scan's callback through a backend's row loop, so
// that the backend returns it unwrapped (Stopping, Stopped).
type stopErr struct{ err error }

func (e stopErr) Error() string { return e.err.Error() }

// Stopping wraps the callback of Each so that an error it returns stops the row
// loop and is told apart from the backend's own errors by Stopped.
func Stopping(fn func(schemas.Observation) error) func(schemas.Observation) error {
	return func(o schemas.Observation) error {
		if err := fn(o); err != nil {
			return stopErr{err}
		}
		return nil
	}
}

// Stopped returns the callback's error that err carries (Stopping), and whether it
// carries one.
func Stopped(err error) (error, bool) {
	var stop stopErr
	if errors.As(err, &stop) {
		return stop.err, true
	}
	return nil, false
}

// CollectObservations is a backend's Observations over its Each: every
// observation matching f, in Each's order.
func CollectObservations(ctx context.Context, f Filter,
	each func(context.Context, Filter, func(schemas.Observation) error) error) ([]schemas.Observation, error) {
	var out []schemas.Observation
	err := each(ctx, f, func(o schemas.Observation) error {
		out = append(out, o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

package store

import (
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
// the time it was first quarantined. Append " LIMIT ?" for a limit.
const QuarantineSQL = `SELECT min(quarantined_at) AS first_at, run_id, source, reason, raw FROM quarantine
		GROUP BY run_id, source, reason, raw
		ORDER BY first_at DESC, run_id, source, reason, raw`

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

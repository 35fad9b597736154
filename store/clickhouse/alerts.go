package clickhouse

import (
	"context"
	"fmt"

	"github.com/gpuprice/gpuprice/store"
)

// PutAlertEpisodes writes alert episodes as one batch; the newest version of an
// episode (rule, subject, starts_at) is the one read.
func (s *Store) PutAlertEpisodes(ctx context.Context, eps []store.AlertEpisode) error {
	if len(eps) == 0 {
		return nil
	}
	const op = "write alert episodes"
	batch, err := s.conn.PrepareBatch(
		ctx,
		`INSERT INTO alert_episodes (rule, kind, subject, starts_at, ends_at, fired, resolved, version)`,
	)
	if err != nil {
		return s.wrap(op, err)
	}
	defer batch.Close()
	version := s.versions(len(eps))
	for i, e := range eps {
		starts, err := toCH(e.StartsAt)
		if err != nil {
			return fmt.Errorf("clickhouse: %s: starts_at: %w", op, err)
		}
		ends, err := toCH(e.EndsAt)
		if err != nil {
			return fmt.Errorf("clickhouse: %s: ends_at: %w", op, err)
		}
		if err := batch.Append(e.Rule, e.Kind, e.Subject, starts, ends, e.Fired, e.Resolved, version+uint64(i)); err != nil {
			return s.wrap(op+": append", err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.wrap(op, err)
	}
	return nil
}

// AlertEpisodes returns the episodes q selects, newest start first: the last
// write of each, merged or not.
func (s *Store) AlertEpisodes(ctx context.Context, q store.AlertQuery) ([]store.AlertEpisode, error) {
	sqlq := `SELECT rule, subject, starts_at, argMax(kind, version), argMax(ends_at, version) AS e_ends,
		argMax(fired, version), argMax(resolved, version)
	FROM alert_episodes`
	var args []any
	if !q.Until.IsZero() {
		until, err := toCH(q.Until)
		if err != nil {
			return nil, fmt.Errorf("clickhouse: alert episodes: until: %w", err)
		}
		sqlq += ` WHERE starts_at <= ?`
		args = append(args, until)
	}
	sqlq += ` GROUP BY rule, subject, starts_at`
	var having []string
	if q.Open {
		having = append(having, `toUInt32(e_ends) = 0`)
	}
	if !q.Since.IsZero() {
		since, err := toCH(q.Since)
		if err != nil {
			return nil, fmt.Errorf("clickhouse: alert episodes: since: %w", err)
		}
		having = append(having, `(toUInt32(e_ends) = 0 OR e_ends >= ?)`)
		args = append(args, since)
	}
	for i, h := range having {
		if i == 0 {
			sqlq += ` HAVING ` + h
		} else {
			sqlq += ` AND ` + h
		}
	}
	sqlq += ` ORDER BY starts_at DESC, rule, subject`
	if q.Limit > 0 {
		sqlq += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := s.conn.Query(ctx, sqlq, args...)
	if err != nil {
		return nil, s.wrap("alert episodes", err)
	}
	defer rows.Close()
	var out []store.AlertEpisode
	for rows.Next() {
		var e store.AlertEpisode
		if err := rows.Scan(&e.Rule, &e.Subject, &e.StartsAt, &e.Kind, &e.EndsAt, &e.Fired, &e.Resolved); err != nil {
			return nil, s.wrap("alert episodes", err)
		}
		e.StartsAt, e.EndsAt = fromCH(e.StartsAt), fromCH(e.EndsAt)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("alert episodes", err)
	}
	return out, nil
}

var _ store.AlertHistory = (*Store)(nil)

package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// PutAlertEpisodes upserts alert episodes by (rule, subject, starts_at).
func (s *Store) PutAlertEpisodes(ctx context.Context, eps []store.AlertEpisode) error {
	if len(eps) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("duckdb: alert episodes: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	version := s.versions(len(eps))
	for i, e := range eps {
		var ends any
		if !e.EndsAt.IsZero() {
			ends = utc(e.EndsAt)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO alert_episodes (rule, kind, subject, starts_at, ends_at, fired,
		    resolved, version)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (rule, subject, starts_at) DO UPDATE SET kind = excluded.kind, ends_at = excluded.ends_at,
			fired = excluded.fired, resolved = excluded.resolved, version = excluded.version`,
			e.Rule, e.Kind, e.Subject, utc(e.StartsAt), ends, e.Fired, e.Resolved, version+uint64(i)); err != nil {
			return fmt.Errorf("duckdb: alert episode %s/%s: %w", e.Rule, e.Subject, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("duckdb: alert episodes: %w", err)
	}
	return nil
}

// AlertEpisodes returns the episodes q selects, newest start first.
func (s *Store) AlertEpisodes(ctx context.Context, q store.AlertQuery) ([]store.AlertEpisode, error) {
	sqlq := `SELECT rule, kind, subject, starts_at, ends_at, fired, resolved FROM alert_episodes WHERE true`
	var args []any
	if q.Open {
		sqlq += ` AND ends_at IS NULL`
	}
	if !q.Until.IsZero() {
		sqlq += ` AND starts_at <= ?`
		args = append(args, utc(q.Until))
	}
	if !q.Since.IsZero() {
		sqlq += ` AND (ends_at IS NULL OR ends_at >= ?)`
		args = append(args, utc(q.Since))
	}
	sqlq += ` ORDER BY starts_at DESC, rule, subject`
	if q.Limit > 0 {
		sqlq += ` LIMIT ?`
		args = append(args, q.Limit)
	}
	rows, err := s.db.QueryContext(ctx, sqlq, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: alert episodes: %w", err)
	}
	defer rows.Close()
	var out []store.AlertEpisode
	for rows.Next() {
		var e store.AlertEpisode
		var ends sql.NullTime
		if err := rows.Scan(&e.Rule, &e.Kind, &e.Subject, &e.StartsAt, &ends, &e.Fired, &e.Resolved); err != nil {
			return nil, fmt.Errorf("duckdb: alert episodes: %w", err)
		}
		e.StartsAt = e.StartsAt.UTC()
		if ends.Valid {
			e.EndsAt = ends.Time.UTC()
		} else {
			e.EndsAt = time.Time{}
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: alert episodes: %w", err)
	}
	return out, nil
}

var _ store.AlertHistory = (*Store)(nil)

package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.Leaser = (*Store)(nil)

// AcquireLease takes or renews name's lease for owner in one transaction
// (store.Leaser).
func (s *Store) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (store.Lease, error) {
	if owner == "" || ttl < time.Second {
		return store.Lease{}, fmt.Errorf("duckdb: lease %s: an owner and a ttl of at least 1s are required", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return store.Lease{}, fmt.Errorf("duckdb: lease %s: %w", name, err)
	}
	defer func() { _ = tx.Rollback() }()
	now := time.Now().UTC().Truncate(time.Second)
	var cur string
	var until time.Time
	err = tx.QueryRowContext(ctx, `SELECT owner, expires_at FROM leases WHERE name = ?`, name).Scan(&cur, &until)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return store.Lease{}, fmt.Errorf("duckdb: lease %s: %w", name, err)
	}
	if cur != "" && cur != owner && until.After(now) {
		return store.Lease{Name: name, Owner: cur, Until: until.UTC()}, nil
	}
	until = now.Add(ttl)
	if _, err := tx.ExecContext(ctx, `INSERT INTO leases (name, owner, expires_at, version) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, version =
		    excluded.version`,
		name, owner, until, s.versions(1)); err != nil {
		return store.Lease{}, fmt.Errorf("duckdb: lease %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return store.Lease{}, fmt.Errorf("duckdb: lease %s: %w", name, err)
	}
	return store.Lease{Name: name, Owner: owner, Until: until, Held: true}, nil
}

// ReleaseLease ends owner's lease of name now (store.Leaser).
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.db.ExecContext(ctx, `UPDATE leases SET expires_at = ?, version = ? WHERE name = ? AND owner = ?`,
		time.Now().UTC().Truncate(time.Second), s.versions(1), name, owner); err != nil {
		return fmt.Errorf("duckdb: release lease %s: %w", name, err)
	}
	return nil
}

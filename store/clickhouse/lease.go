package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.Leaser = (*Store)(nil)

// leaseState reads name's winning row (the highest version) and the server's clock.
func (s *Store) leaseState(
	ctx context.Context,
	name string,
) (owner string, until, now time.Time, maxVersion uint64, err error) {
	err = s.conn.QueryRow(ctx, `SELECT argMax(owner, version), argMax(expires_at, version), max(version), now()
		FROM leases WHERE name = ?`, name).Scan(&owner, &until, &maxVersion, &now)
	if err != nil {
		return "", time.Time{}, time.Time{}, 0, s.wrap("lease "+name, err)
	}
	if maxVersion == 0 {
		owner, until = "", time.Time{}
	}
	return owner, until.UTC(), now.UTC(), maxVersion, nil
}

// claim writes a row for name: owner holds it until until, with a version above
// every row read so far.
func (s *Store) claim(ctx context.Context, name, owner string, until time.Time, above uint64) error {
	const op = "write lease"
	batch, err := s.conn.PrepareBatch(ctx, `INSERT INTO leases (name, owner, expires_at, version)`)
	if err != nil {
		return s.wrap(op, err)
	}
	defer batch.Close()
	v := max(s.versions(1), above+1)
	if err := batch.Append(name, owner, until, v); err != nil {
		return s.wrap(op+": append", err)
	}
	if err := batch.Send(); err != nil {
		return s.wrap(op, err)
	}
	return nil
}

// AcquireLease takes or renews name's lease for owner (store.Leaser): read the
// winning row; when another owner's lease is still valid, stand by; else write a
// claim, wait store.LeaseSettle when taking it over (so that a competitor's claim
// is visible), and read back who won.
func (s *Store) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (store.Lease, error) {
	if owner == "" || ttl < time.Second {
		return store.Lease{}, fmt.Errorf("clickhouse: lease %s: an owner and a ttl of at least 1s are required", name)
	}
	cur, until, now, maxV, err := s.leaseState(ctx, name)
	if err != nil {
		return store.Lease{}, err
	}
	valid := until.After(now)
	if cur != "" && cur != owner && valid {
		return store.Lease{Name: name, Owner: cur, Until: until}, nil
	}
	if err := s.claim(ctx, name, owner, now.Add(ttl).Truncate(time.Second), maxV); err != nil {
		return store.Lease{}, err
	}
	if cur != owner || !valid { // taking it: let a competing claim land first
		select {
		case <-ctx.Done():
			return store.Lease{}, ctx.Err()
		case <-time.After(store.LeaseSettle):
		}
	}
	cur, until, _, _, err = s.leaseState(ctx, name)
	if err != nil {
		return store.Lease{}, err
	}
	return store.Lease{Name: name, Owner: cur, Until: until, Held: cur == owner}, nil
}

// ReleaseLease ends owner's lease of name now (store.Leaser).
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	cur, _, now, maxV, err := s.leaseState(ctx, name)
	if err != nil || cur != owner {
		return err
	}
	return s.claim(ctx, name, owner, now, maxV)
}

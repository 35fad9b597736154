package store

import (
	"context"
	"time"
)

// Lease is the state of a named lease after an attempt to take or renew it.
type Lease struct {
	Name  string
	Owner string    // the holder ("" when nobody holds it)
	Until time.Time // when the holder's lease expires unless renewed
	Held  bool      // the owner who asked holds it
}

// Leaser is the optional ability of a store to keep named leases: of the processes
// sharing a store, the one holding a name's lease does the work it guards (the
// alert evaluation of `gpuprice serve`); the others stand by and take the lease
// over once it expires or is released. Both backends have it.
//
// AcquireLease takes name's lease for owner until ttl from now when nobody holds
// it, it expired, or owner holds it already (a renewal), and returns the lease as
// it stands afterwards. Times are the store server's clock. ReleaseLease gives up
// owner's lease (nothing when owner does not hold it), so another may take it at
// once.
//
// On ClickHouse, which has no transactions, a lease is a row per (name, attempt) in
// a ReplacingMergeTree; the row with the highest version wins. A taker writes its
// row, waits LeaseSettle so that a competitor's row written meanwhile is visible,
// and reads back which row wins: of processes racing for a free lease exactly one
// reads itself back, unless one of them stalls longer than LeaseSettle between
// reading the lease as free and writing its row (then both may hold it until the
// loser's next renewal reads the winner back). On DuckDB an attempt is one
// transaction.
type Leaser interface {
	AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (Lease, error)
	ReleaseLease(ctx context.Context, name, owner string) error
}

// LeaseSettle is how long a taker waits on ClickHouse between writing its claim and
// reading back who won.
var LeaseSettle = time.Second

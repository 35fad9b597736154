package alert

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// LeaseTTL is how long the "alerts" lease of a serve lasts unless renewed (it is
// renewed every third of it): a serve that dies without releasing it is replaced
// by a standby at the standby's first alert turn after it expires.
var LeaseTTL = time.Minute

// StoreLease is a process's claim on the store's "alerts" lease (store.Leaser).
type StoreLease struct {
	l     store.Leaser
	owner string
	log   *slog.Logger
	held  atomic.Bool
}

// NewStoreLease returns the lease of st, or nil when st keeps no leases.
func NewStoreLease(st store.Store, log *slog.Logger) *StoreLease {
	l, ok := st.(store.Leaser)
	if !ok {
		return nil
	}
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &StoreLease{l: l, owner: fmt.Sprintf("%s/%d/%x", host, os.Getpid(), b), log: log}
}

// Hold takes or renews the lease; ErrStandingBy when another serve holds it.
func (a *StoreLease) Hold(ctx context.Context) error {
	got, err := a.l.AcquireLease(ctx, "alerts", a.owner, LeaseTTL)
	if err != nil {
		a.held.Store(false)
		return fmt.Errorf("alerts lease: %w", err)
	}
	if was := a.held.Swap(got.Held); was != got.Held {
		a.log.Info("alerts lease", "held", got.Held, "holder", got.Owner, "until", got.Until.Format(time.RFC3339))
	}
	if !got.Held {
		return fmt.Errorf("%w (the store's alerts lease is held by %s until %s)", ErrStandingBy, got.Owner,
			got.Until.Format(time.RFC3339))
	}
	return nil
}

// Keep renews the lease while this serve holds it, until ctx ends.
func (a *StoreLease) Keep(ctx context.Context) {
	t := time.NewTicker(LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if a.held.Load() {
			rctx, cancel := context.WithTimeout(ctx, LeaseTTL/3)
			if err := a.Hold(rctx); err != nil && !errors.Is(err, ErrStandingBy) {
				a.log.Warn("alerts lease not renewed", "error", err.Error())
			}
			cancel()
		}
	}
}

// Release gives the lease up (at exit), so that a standby takes over at once.
func (a *StoreLease) Release() {
	if !a.held.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.l.ReleaseLease(ctx, "alerts", a.owner); err != nil {
		a.log.Warn("alerts lease not released: a standby takes over when it expires", "error", err.Error())
	}
}

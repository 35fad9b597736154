package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// SignalQuery selects stored signals. Empty fields match everything.
type SignalQuery struct {
	Provider string
	SKU      string
	Region   string
	GPU      string
	Kind     string
	Since    time.Time // effective_at >= Since when not zero
	Until    time.Time // effective_at < Until when not zero
}

// Signals is the optional ability of a store to keep risk and availability signals
// (schemas.Signal) as time series. Both stores have it.
type Signals interface {
	// WriteSignals stores signals; a signal whose identity (provider, sku, region,
	// zone, kind, effective_at) is stored already is replaced, and within signals
	// the last of an identity wins. A signal that fails Validate fails the write.
	WriteSignals(ctx context.Context, sigs []schemas.Signal) error
	// Signals returns the stored signals q selects, once each (the last write),
	// ordered by provider, sku, region, zone, kind, then effective_at.
	Signals(ctx context.Context, q SignalQuery) ([]schemas.Signal, error)
}

// ValidateSignals returns the first error of Validate among sigs.
func ValidateSignals(sigs []schemas.Signal) error {
	for _, s := range sigs {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// SignalWhere turns q into SQL conditions (joined by AND, "1 = 1" when none) with ?
// placeholders and their arguments; ts converts a time into the backend's value.
// Column names are constants; values are only ever parameters.
func SignalWhere(q SignalQuery, ts func(time.Time) any) (string, []any) {
	conds := []string{"1 = 1"}
	var args []any
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("provider", q.Provider)
	eq("sku", q.SKU)
	eq("region", q.Region)
	eq("gpu", q.GPU)
	eq("kind", q.Kind)
	if !q.Since.IsZero() {
		conds = append(conds, "effective_at >= ?")
		args = append(args, ts(q.Since))
	}
	if !q.Until.IsZero() {
		conds = append(conds, "effective_at < ?")
		args = append(args, ts(q.Until))
	}
	out := conds[0]
	for _, c := range conds[1:] {
		out += " AND " + c
	}
	return out, args
}

// ErrNoSignals marks a store that keeps no risk or availability signals.
var ErrNoSignals = errors.New("the store keeps no signals")

// SignalsOf is st's Signals, or an error wrapping ErrNoSignals that names st's type.
func SignalsOf(st any) (Signals, error) {
	if sg, ok := st.(Signals); ok {
		return sg, nil
	}
	return nil, fmt.Errorf("%w (%T)", ErrNoSignals, st)
}

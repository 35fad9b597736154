// Package figurestest is the half of the store conformance suite that needs the
// analytics layer: it checks the figures a store computes where its data is (its own
// volatility, spreads, compact daily bars, the market at a time) against the
// analytics' reference functions over the bars the same store returns. The other half,
// store/storetest, checks what a store keeps and reads; it imports nothing above the
// stores, so the arrows run down (docs/architecture.md, "Layers"). A store's tests run
// both: storetest.Run and figurestest.Run.
package figurestest

import (
	"context"
	"testing"

	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// Run runs every figure check against stores from open (fresh, empty, unmigrated
// each time). A check whose figure the store does not compute itself is skipped,
// saying so.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	s := &suite{open: open}
	t.Run("Volatility", s.volatility)
	t.Run("VolatilityWindows", s.volatilityWindows)
	t.Run("DayPriceStats", s.dayPriceStats)
	t.Run("DayCloses", s.dayCloses)
	t.Run("WithdrawnSeries", s.withdrawnSeries)
	t.Run("MarketCrossSection", s.marketCrossSection)
}

type suite struct {
	open func(t *testing.T) store.Store
}

// fresh opens a new store, migrates it and closes it at cleanup.
func (s *suite) fresh(t *testing.T) store.Store { return storetest.Fresh(t, s.open) }

func ctx(t *testing.T) context.Context { return t.Context() }

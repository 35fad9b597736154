package analytics

import (
	"math"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// SeriesMove is one series' move over a window [since, end): from the price in
// force when the window opened to its last close. The alerts' spot_move and the
// digest's largest spot moves are both this figure.
type SeriesMove struct {
	// Vol is the volatility of the window's bars (Bars 0 when it has none: the
	// carried-in price, still on offer, did not change).
	Vol SeriesVolatility
	// MovePct is (Last ÷ Ref − 1) × 100.
	MovePct float64
	// Ref is the reference: the close carried in from before the window (the price
	// in force when it opened), else the first bar's open; RefAt is the start of
	// the bar it is of.
	Ref   float64
	RefAt time.Time
	// Last is the last close (the carried-in one when the window has no bar).
	Last   float64
	LastAt time.Time
	// CarriedIn says Ref is the close of a bar before the window.
	CarriedIn bool
	// Low and High are the lowest and highest prices from Ref on (Ref included);
	// Changes counts the closes that differ from the price before them, the
	// carried-in close counted as the one before the window's first bar.
	Low, High float64
	Changes   int
}

// SeriesMoveOf is the move over [since, end) of one series' bars of width w,
// sorted by start, a bar before since being the one carried in
// (store.BarQuery.CarryIn). ok is false when the series does not count: it has no
// bar in the window and its carried-in bar was not observed within it (no longer
// on offer), or its reference is not a positive price.
func SeriesMoveOf(s []store.Bar, w time.Duration, since, end time.Time) (m SeriesMove, ok bool) {
	i := 0
	for i < len(s) && s[i].Start.Before(since) {
		i++
	}
	in := s[i:]
	var carry *store.Bar
	if i > 0 {
		carry = &s[i-1]
	}
	if len(in) == 0 && (carry == nil || carry.LastObservedAt.Before(since)) {
		return m, false
	}
	if carry != nil {
		m.Ref, m.RefAt, m.CarriedIn = carry.Close, carry.Start, true
		m.Last, m.LastAt = carry.Close, carry.Start
	} else {
		m.Ref, m.RefAt = in[0].Open, in[0].Start
	}
	if !(m.Ref > 0) {
		return m, false
	}
	m.Low, m.High = m.Ref, m.Ref
	prev := m.Ref
	for _, b := range in {
		m.Low, m.High = math.Min(m.Low, b.Low), math.Max(m.High, b.High)
		if b.Close != prev {
			m.Changes++
		}
		prev = b.Close
	}
	if len(in) > 0 {
		m.Last, m.LastAt = in[len(in)-1].Close, in[len(in)-1].Start
		m.Vol = SeriesVolatilityOf(in, w, end, 0)
	} else {
		b := *carry
		m.Vol = SeriesVolatility{Provider: b.Provider, SKU: b.SKU, Region: b.Region, Zone: b.Zone,
			Pricing: b.Pricing, GPU: b.GPU, Tier: b.Tier, Close: b.Close}
	}
	m.MovePct = (m.Last/m.Ref - 1) * 100
	return m, true
}

package storetest

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// DayPriceData writes the history the day-price checks read: a generated market
// (112 series: 7 providers × 4 GPUs × spot, spot, on demand, reserved; every 6
// hours for 50 days from 2025-02-01) in which some series are
// withdrawn (no longer collected), some stop early (only a bar before most
// windows), some change tier, some list derived, floor or GPU-only prices for a
// while or throughout, some on-demand prices step; plus the withdrawn-series
// collections of Collection (an Azure list price effective in 2024, seen daily)
// and a day of the market written again with other prices after its bars were
// built (every such bar in two versions on ClickHouse until it merges). It
// rebuilds the bars as the CLI does. SYNTHETIC, for tests only.
func DayPriceData(t *testing.T, st store.Store) {
	t.Helper()
	start := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	const steps = 200
	spec := GenSpec{Series: 112, Steps: steps, Start: start, Step: 6 * time.Hour, Seed: 11}
	shape := func(o schemas.Observation) (schemas.Observation, bool) {
		i, _ := strconv.Atoi(o.SKU[strings.LastIndexByte(o.SKU, '-')+1:])
		step := int(o.EffectiveAt.Sub(start) / spec.Step)
		switch {
		case i%5 == 0 && step >= 150: // withdrawn: no longer listed from day 37
			return o, false
		case i%17 == 6 && step >= 20: // stopped on day 5: carried in, then withdrawn
			return o, false
		}
		if i%9 == 2 && step >= 100 {
			o.Tier = schemas.TierSpecialist
		}
		if i%7 == 3 && step >= 60 && step < 120 {
			o.PriceBasis = schemas.BasisDerived
		}
		if i%11 == 4 {
			o.PriceScope = schemas.ScopeGPUOnly
		}
		if i%19 == 7 { // a GPU the catalog could not place: compared with nothing
			o.GPU = schemas.UnknownGPU
		}
		if i%13 == 5 && step%8 < 3 {
			o.PriceBasis = schemas.BasisFloor
		}
		if o.Pricing != schemas.Spot && i%3 == 0 {
			o.PriceUSDGPUHour = math.Round(o.PriceUSDGPUHour*(1+0.02*float64((step/37)%4))*1e4) / 1e4
			o.PriceUSDHour = o.PriceUSDGPUHour * 8
		}
		return o, true
	}
	var again []schemas.Observation
	if err := Generate(spec, 5_000, func(obs []schemas.Observation) error {
		keep := make([]schemas.Observation, 0, len(obs))
		for _, o := range obs {
			if o, ok := shape(o); ok {
				keep = append(keep, o)
				if twin, ok := reservedTwin(o); ok {
					keep = append(keep, twin)
				}
				if d := o.EffectiveAt.Sub(start); d >= 30*store.Daily && d < 31*store.Daily {
					o.PriceUSDGPUHour *= 1.1
					o.PriceUSDHour *= 1.1
					again = append(again, o)
				}
			}
		}
		write(t, st, keep)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for d := 0; d <= 9; d++ {
		write(t, st, Collection(d))
	}
	rollup(t, st, time.Time{}, time.Time{})
	write(t, st, again)
	rollup(t, st, again[0].EffectiveAt, again[len(again)-1].EffectiveAt.Add(time.Second))
}

// reservedTwin is a one-year reservation of every fourth on-demand series (the same
// SKU, region and zone at 62 % of the price), so that the commitment discount has
// pairs (analytics.CommitmentDiscount).
func reservedTwin(o schemas.Observation) (schemas.Observation, bool) {
	i, _ := strconv.Atoi(o.SKU[strings.LastIndexByte(o.SKU, '-')+1:])
	if o.Pricing != schemas.OnDemand || i%4 != 1 {
		return o, false
	}
	o.Pricing = schemas.Reserved1Y
	o.PriceUSDGPUHour = math.Round(o.PriceUSDGPUHour*0.62*1e4) / 1e4
	o.PriceUSDHour = o.PriceUSDGPUHour * 8
	return o, true
}

package query

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

type signalsOnly []schemas.Signal

func (s signalsOnly) Signals(_ context.Context, q store.SignalQuery) ([]schemas.Signal, error) {
	var out []schemas.Signal
	for _, g := range s {
		if (q.Provider == "" || g.Provider == q.Provider) && (q.Kind == "" || g.Kind == q.Kind) {
			out = append(out, g)
		}
	}
	return out, nil
}

// TestRiskAdjustAzure: an Azure spot row in eviction band 20+ (a share of an hour,
// λ = −ln(0.75) = 0.2876820725 per hour) with C = 30 min, R = 10 min: factor
// 1 + 0.2876820725 × 25/60 = 1.1198675302, so $2 a GPU-hour is $2.2397350604 of
// work; a row whose label is AWS's (">20%") is not read as an Azure band.
func TestRiskAdjustAzure(t *testing.T) {
	at := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	sig := func(region, label string) schemas.Signal {
		return schemas.Signal{Provider: "azure", SKU: "Standard_ND96isr_H100_v5", Region: region,
			Kind: schemas.SignalInterruption, EffectiveAt: at, Value: 4, Label: label}
	}
	row := func(region string) schemas.Observation {
		return schemas.Observation{Provider: "azure", SKU: "Standard_ND96isr_H100_v5", Region: region,
			Pricing: schemas.Spot, PriceUSDGPUHour: 2}
	}
	got, err := RiskAdjust(context.Background(), signalsOnly{sig("eastus", "20+"), sig("westus", ">20%")},
		[]schemas.Observation{row("eastus"), row("westus")}, analytics.SpotJob{CheckpointMin: 30, RestartMin: 10}, false)
	if err != nil {
		t.Fatal(err)
	}
	if r := got[0].Risk; !r.Known || r.Band != "20+" || math.Abs(r.Factor-1.1198675302) > 1e-9 ||
		math.Abs(r.Expected-2.2397350604) > 1e-9 {
		t.Errorf("eastus %+v", r)
	}
	if r := got[1].Risk; r.Known {
		t.Errorf("westus, an AWS label on an Azure row, read as a band: %+v", r)
	}
}

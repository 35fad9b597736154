package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

func TestSeriesBandDuckDB(t *testing.T) {
	testSeriesBand(t, "duckdb://"+filepath.Join(t.TempDir(), "band.duckdb"))
}

func TestIntegrationClickHouseSeriesBand(t *testing.T) {
	testSeriesBand(t, chtest.FreshDSN(t, "band"))
}

// testSeriesBand: the series' market band is the p10–p90 of every provider's day
// price of the GPU and pricing kind, day by day: it moves with the market.
func testSeriesBand(t *testing.T, dsn string) {
	day := time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)
	// Three days of on-demand H100 prices at three providers (test figures), and a
	// spot price that must stay out of the on-demand band.
	prices := map[string][3]float64{"lambda": {2.0, 2.5, 3.0}, "aws": {4.0, 5.0, 6.0}, "vast": {1.0, 1.0, 1.0}}
	var obs []schemas.Observation
	for provider, ps := range prices {
		for d, p := range ps {
			obs = append(obs, h100Offer(provider, provider+"-h100x8", 8, day.Add(time.Duration(d)*24*time.Hour+12*time.Hour), p))
		}
	}
	spot := obs[0]
	spot.Pricing, spot.SKU, spot.PriceUSDGPUHour, spot.PriceUSDHour, spot.PriceNative = schemas.Spot, "spot-sku", 0.1, 0.8, 0.8
	obs = append(obs, spot)
	storeRolledUp(t, dsn, obs)
	var s struct {
		Bars []struct {
			Close float64 `json:"close"`
		} `json:"bars"`
		Band []struct {
			Day      time.Time `json:"day"`
			P10, P90 float64
			Series   int `json:"series"`
		} `json:"band"`
	}
	out, code := run(t, "series", "--store", dsn, "--provider", "lambda", "--sku", "lambda-h100x8", "--region", "r1", "--pricing", "on_demand",
		"--since", "3d", "--at", "2025-03-12T23:00:00Z", "--bar", "1d", "--format", "json")
	if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil {
		t.Fatalf("series: exit %d %v\n%s", code, err, out)
	}
	if len(s.Bars) != 3 || len(s.Band) != 3 {
		t.Fatalf("series: %d bars, %d band days:\n%s", len(s.Bars), len(s.Band), out)
	}
	// Day d: vast 1, lambda, aws; p10 = 1 + 0.2 × (lambda − 1), p90 = lambda + 0.8 × (aws − lambda).
	for d, b := range s.Band {
		l, a := prices["lambda"][d], prices["aws"][d]
		p10, p90 := 1+0.2*(l-1), l+0.8*(a-l)
		if !b.Day.Equal(day.AddDate(0, 0, d)) || b.Series != 3 || math.Abs(b.P10-p10) > 1e-9 || math.Abs(b.P90-p90) > 1e-9 {
			t.Errorf("band day %d: %+v, want p10 %v p90 %v of 3", d, b, p10, p90)
		}
	}
	// Half a day after the last prices: no bar in the window, but the price in force
	// when it opened (carried in), and the market band of that day.
	var later struct {
		Bars      []any `json:"bars"`
		CarriedIn *struct {
			Start time.Time `json:"start"`
			Close float64   `json:"close"`
		} `json:"carried_in"`
		Band []struct {
			Day time.Time `json:"day"`
			P10 float64   `json:"p10"`
		} `json:"band"`
	}
	out, code = run(t, "series", "--store", dsn, "--provider", "lambda", "--sku", "lambda-h100x8", "--region", "r1", "--pricing", "on_demand",
		"--since", "12h", "--at", "2025-03-13T12:00:00Z", "--bar", "1d", "--format", "json")
	if err := json.Unmarshal([]byte(out), &later); code != 0 || err != nil || len(later.Bars) != 0 || later.CarriedIn == nil ||
		later.CarriedIn.Close != 3.0 || !later.CarriedIn.Start.Equal(day.AddDate(0, 0, 2)) {
		t.Errorf("series after the last bar: exit %d %v\n%s", code, err, out)
	}
	if n := len(later.Band); n == 0 || !later.Band[n-1].Day.Equal(day.AddDate(0, 0, 3)) || math.Abs(later.Band[n-1].P10-1.4) > 1e-9 {
		t.Errorf("band after the last bar: %+v", later.Band)
	}
	csv, _ := run(t, "series", "--store", dsn, "--provider", "lambda", "--sku", "lambda-h100x8", "--region", "r1", "--pricing", "on_demand",
		"--since", "3d", "--at", "2025-03-12T23:00:00Z", "--bar", "1d", "--format", "csv")
	recs := parseCSV(t, csv)
	if len(recs) != 4 || recs[0][7] != "market_p10" || recs[0][8] != "market_p90" || recs[3][7] != "1.4000" || recs[3][8] != "5.4000" {
		t.Errorf("series csv:\n%s", csv)
	}
}

package main

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

func TestAnalyticsWithdrawnOfferDuckDB(t *testing.T) {
	testAnalyticsWithdrawnOffer(t, "duckdb://"+filepath.Join(t.TempDir(), "w.duckdb"))
}

func TestIntegrationClickHouseAnalyticsWithdrawnOffer(t *testing.T) {
	dsn := chtest.FreshDSN(t, "analytics")
	testAnalyticsWithdrawnOffer(t, dsn)
}

// testAnalyticsWithdrawnOffer stores the ten daily collections of
// storetest.Collection (Vast's offer m1 listed on the first four days only;
// Azure's list price effective 2024-10-01 seen every day), backfills the bars
// with `gpuprice rollup`, and reads the last day, 2025-03-12, through the
// commands: m1 is no longer among the offers, Azure's 2024 price still is.
func testAnalyticsWithdrawnOffer(t *testing.T, dsn string) {
	t.Setenv("GPUPRICE_DATA_DIR", t.TempDir())
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for d := 0; d <= 9; d++ {
		if err := st.WriteObservations(ctx, storetest.Collection(d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "rollup", "--store", dsn); code != 0 {
		t.Fatalf("rollup: %d %q", code, out)
	}
	at := "2025-03-12T23:00:00Z"

	var hist struct {
		Overall struct {
			Series  int     `json:"series"`
			Samples int     `json:"samples"`
			Min     float64 `json:"min"`
			Latest  float64 `json:"latest"`
		} `json:"overall"`
		Cheapest []struct {
			SKU      string    `json:"sku"`
			Price    float64   `json:"price_usd_gpu_hour"`
			Since    time.Time `json:"since"`
			LastSeen time.Time `json:"last_seen"`
		} `json:"cheapest"`
	}
	runJSON(t, &hist, "history", "--store", dsn, "--gpu", "H100-SXM-80GB", "--since", "10d", "--at", at, "--format", "json")
	if hist.Overall.Series != 4 || hist.Overall.Samples != 35 || hist.Overall.Min != 2.0 || hist.Overall.Latest != 2.4 {
		t.Errorf("history overall: %+v", hist.Overall)
	}
	if len(hist.Cheapest) != 3 || hist.Cheapest[0].SKU != "m2" || hist.Cheapest[2].SKU != "Standard_ND96isr_H100_v5" ||
		!hist.Cheapest[2].Since.Equal(storetest.AzureListed) || !hist.Cheapest[2].LastSeen.Equal(storetest.W0.AddDate(0, 0, 9)) {
		t.Errorf("cheapest offers: %+v", hist.Cheapest)
	}
	out, code := run(t, "history", "--store", dsn, "--gpu", "H100-SXM-80GB", "--since", "10d", "--at", at)
	if code != 0 || !strings.Contains(out, "LAST_SEEN") || !strings.Contains(out, "2025-03-12T10:00:00Z") || strings.Contains(out, " m1 ") {
		t.Errorf("history table:\n%s", out)
	}

	// Others: 2.49 (lambda) and 2.40 (m2) → 2.445 on the last day; m1 ended on
	// 2025-03-07, the day after its last sighting.
	var idx []struct {
		Group  string    `json:"group"`
		Day    time.Time `json:"day"`
		Price  float64   `json:"price_usd_gpu_hour"`
		Offers int       `json:"offers"`
		Method string    `json:"method"`
	}
	runJSON(t, &idx, "index", "--store", dsn, "--since", "10d", "--at", at, "--format", "json")
	offers := map[string]int{}
	for _, p := range idx {
		if p.Group == "others" {
			offers[p.Day.Format(time.DateOnly)] = p.Offers
			if p.Day.Format(time.DateOnly) == "2025-03-12" && math.Abs(p.Price-2.445) > 1e-12 {
				t.Errorf("others index on the last day: %+v", p)
			}
		}
		if p.Method != "gpuprice-index/2" {
			t.Errorf("index method %q", p.Method)
		}
	}
	if offers["2025-03-07"] != 3 || offers["2025-03-08"] != 2 || offers["2025-03-12"] != 2 || len(offers) != 10 {
		t.Errorf("others' offers per day: %v", offers)
	}
}

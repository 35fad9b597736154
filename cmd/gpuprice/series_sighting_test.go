package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// sightingStore writes two Lambda H100 on-demand series in region r1, collected
// daily at 12:00 from base (test figures): lambda-8x on days 0–9 (3.00, then 3.20
// from day 5), its last sighting day 9 12:00, the provider's newest; lambda-1x at
// 2.50 on days 0–4 only. lambda-1x's last sighting is more than 24 h behind its
// provider's newest: withdrawn, its price in force through the day of its last
// sighting and a day's grace (analytics.PriceEnd), so none from day 6 on.
func sightingStore(t *testing.T, dsn string, base time.Time) {
	t.Helper()
	var obs []schemas.Observation
	for d := 0; d < 10; d++ {
		at := base.AddDate(0, 0, d).Add(12 * time.Hour)
		p := 3.0
		if d >= 5 {
			p = 3.2
		}
		obs = append(obs, h100Offer("lambda", "lambda-8x", 8, at, p))
		if d <= 4 {
			obs = append(obs, h100Offer("lambda", "lambda-1x", 1, at, 2.5))
		}
	}
	storeRolledUp(t, dsn, obs)
}

// h100Offer is a specialist's H100 on-demand observation in region r1 of gpus GPUs
// at p $/GPU-hour, seen at at (test figures).
func h100Offer(provider, sku string, gpus int, at time.Time, p float64) schemas.Observation {
	return schemas.Observation{ObservedAt: at, EffectiveAt: at, Provider: provider, Tier: schemas.TierSpecialist,
		SKU: sku, Region: "r1", GPU: "H100-SXM-80GB", GPUName: "H100", GPUCount: float64(gpus), GPUMemoryGB: 80,
		Pricing: schemas.OnDemand, PriceUSDHour: float64(gpus) * p, PriceUSDGPUHour: p, Currency: "USD", PriceNative: float64(gpus) * p,
		Unit: schemas.UnitHour, FXRate: 1, Interconnect: schemas.InterconnectInfiniband, SourceKind: schemas.SourceAPI,
		SourceURL: "https://example.test", RunID: "r"}
}

// storeRolledUp writes obs into a migrated store at dsn and builds its bars with
// `gpuprice rollup` (the data directory a fresh one).
func storeRolledUp(t *testing.T, dsn string, obs []schemas.Observation) {
	t.Helper()
	t.Setenv("GPUPRICE_DATA_DIR", t.TempDir())
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteObservations(ctx, obs); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if out, code := run(t, "rollup", "--store", dsn); code != 0 {
		t.Fatalf("rollup: %s", out)
	}
}

// seriesSighting is what the series answer says of a series' sightings.
type seriesSighting struct {
	LastSeen  *time.Time `json:"last_seen"`
	Withdrawn *time.Time `json:"withdrawn"`
	Band      []struct {
		Day    time.Time `json:"day"`
		Series int       `json:"series"`
	} `json:"band"`
}

func TestSeriesSightingDuckDB(t *testing.T) {
	testSeriesSighting(t, "duckdb://"+filepath.Join(t.TempDir(), "sighting.duckdb"))
}

func TestIntegrationClickHouseSeriesSighting(t *testing.T) {
	testSeriesSighting(t, chtest.FreshDSN(t, "sighting"))
}

// testSeriesSighting: the series answer says when a series was last seen and, for
// a withdrawn one, the day its price ends, by the rule its market band's day prices
// follow (the band holds lambda-1x through day 5, not on day 6).
func testSeriesSighting(t *testing.T, dsn string) {
	base := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	sightingStore(t, dsn, base)
	get := func(sku string) seriesSighting {
		t.Helper()
		out, code := run(t, "series", "--store", dsn, "--provider", "lambda", "--sku", sku, "--region", "r1", "--pricing", "on_demand",
			"--since", "30d", "--at", "2025-03-20", "--bar", "1d", "--format", "json")
		var s seriesSighting
		if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil {
			t.Fatalf("series %s: exit %d %v\n%s", sku, code, err, out)
		}
		return s
	}
	on := get("lambda-8x")
	if on.LastSeen == nil || !on.LastSeen.Equal(base.AddDate(0, 0, 9).Add(12*time.Hour)) || on.Withdrawn != nil {
		t.Errorf("lambda-8x: last seen %v, withdrawn %v; want day 9 12:00, not withdrawn", on.LastSeen, on.Withdrawn)
	}
	off := get("lambda-1x")
	if off.LastSeen == nil || !off.LastSeen.Equal(base.AddDate(0, 0, 4).Add(12*time.Hour)) || off.Withdrawn == nil ||
		!off.Withdrawn.Equal(base.AddDate(0, 0, 6)) {
		t.Errorf("lambda-1x: last seen %v, withdrawn %v; want day 4 12:00, withdrawn from day 6", off.LastSeen, off.Withdrawn)
	}
	// The market band counts both through day 5 and lambda-8x alone from day 6.
	for _, d := range off.Band {
		want := 2
		if !d.Day.Before(base.AddDate(0, 0, 6)) {
			want = 1
		}
		if d.Series != want {
			t.Errorf("band %s: %d series, want %d", d.Day.Format(time.DateOnly), d.Series, want)
		}
	}
}

// TestWebAppSeriesTimeHonesty: the series chart draws a price carried past its last
// sighting dashed, labelled "last seen <date>", and stops a withdrawn series where
// its price ends; /api/v1/series says both times. The data ends three days before
// today (lambda-8x last seen then; lambda-1x withdrawn eight days ago).
func TestWebAppSeriesTimeHonesty(t *testing.T) {
	chromium(t)
	testWebAppSeriesTimeHonesty(t, "duckdb://"+filepath.Join(t.TempDir(), "honesty.duckdb"))
}

func testWebAppSeriesTimeHonesty(t *testing.T, dsn string) {
	base := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -12)
	sightingStore(t, dsn, base)
	seen8, seen1, ends1 := base.AddDate(0, 0, 9).Add(12*time.Hour), base.AddDate(0, 0, 4).Add(12*time.Hour), base.AddDate(0, 0, 6)
	srv, stop := startServe(t, "--store", dsn)
	defer stop()
	api := func(sku string) seriesSighting {
		t.Helper()
		v := url.Values{"provider": {"lambda"}, "sku": {sku}, "region": {"r1"}, "pricing": {"on_demand"}, "since": {"30d"}}
		resp, err := http.Get(srv + "/api/v1/series?" + v.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans struct {
			Data seriesSighting `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/v1/series %s: %d %v", sku, resp.StatusCode, err)
		}
		return ans.Data
	}
	if s := api("lambda-8x"); s.LastSeen == nil || !s.LastSeen.Equal(seen8) || s.Withdrawn != nil {
		t.Errorf("API lambda-8x: last seen %v, withdrawn %v; want %v, none", s.LastSeen, s.Withdrawn, seen8)
	}
	if s := api("lambda-1x"); s.LastSeen == nil || !s.LastSeen.Equal(seen1) || s.Withdrawn == nil || !s.Withdrawn.Equal(ends1) {
		t.Errorf("API lambda-1x: last seen %v, withdrawn %v; want %v, %v", s.LastSeen, s.Withdrawn, seen1, ends1)
	}
	ctx := browser(t)
	// The chart's numbers: its header (time, then each line) and each row's cells.
	type table struct {
		Head []string   `json:"head"`
		Rows [][]string `json:"rows"`
	}
	const readTable = `({head: [...document.querySelectorAll('#series-chart details thead th')].map(th => th.textContent),
	  rows: [...document.querySelectorAll('#series-chart details tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))})`
	when := func(s string) time.Time {
		t.Helper()
		at, err := time.Parse("2006-01-02 15:04Z", s)
		if err != nil {
			t.Fatalf("chart time %q: %v", s, err)
		}
		return at
	}
	// lastValue is the latest time at which column c of the table has a value.
	lastValue := func(tb table, c int) (last time.Time) {
		for _, r := range tb.Rows {
			if c < len(r) && r[c] != "–" {
				last = when(r[0])
			}
		}
		return last
	}
	open := func(sku string) table {
		t.Helper()
		do(t, ctx, "open series "+sku, chromedp.Navigate(srv+"/series?gpu=H100-SXM-80GB&provider=lambda&pricing=on_demand&region=r1&sku="+sku),
			chromedp.WaitVisible(chromedp.CSS(`#series-chart[data-series-drawn]`)))
		return eval[table](t, ctx, readTable)
	}

	// Carried: solid to the last sighting, dashed from it to now, labelled.
	tb := open("lambda-8x")
	label := "on-demand (carried, last seen " + seen8.Format(time.DateOnly) + ")"
	if len(tb.Head) < 3 || tb.Head[1] != "on-demand" || tb.Head[2] != label {
		t.Fatalf("lambda-8x chart lines %q, want on-demand then %q", tb.Head, label)
	}
	if got := lastValue(tb, 1); !got.Equal(seen8) {
		t.Errorf("lambda-8x observed line ends %v, want at its last sighting %v", got, seen8)
	}
	if got := lastValue(tb, 2); got.Before(time.Now().Add(-time.Hour)) {
		t.Errorf("lambda-8x carried line ends %v, want now", got)
	}
	if n := eval[string](t, ctx, `document.querySelector('#series-chart').dataset.seriesDrawn`); n != "2" {
		t.Errorf("lambda-8x: %s lines drawn, want the observed and the carried part", n)
	}
	if note := eval[string](t, ctx, `(document.querySelector('#series-chart .carried-note') || {}).textContent || ''`); !strings.Contains(note,
		"last seen "+seen8.Format(time.DateOnly)) || !strings.Contains(note, "nothing was observed") {
		t.Errorf("lambda-8x: carried note %q", note)
	}
	shot(t, ctx, "series-carried")

	// Withdrawn: carried through its day of grace, then no line at all.
	tb = open("lambda-1x")
	for c := 1; c < len(tb.Head); c++ {
		if strings.HasPrefix(tb.Head[c], "market") {
			continue
		}
		if got := lastValue(tb, c); got.After(ends1) {
			t.Errorf("lambda-1x line %q drawn until %v, past its end %v", tb.Head[c], got, ends1)
		}
	}
	if got := lastValue(tb, 1); !got.Equal(seen1) {
		t.Errorf("lambda-1x observed line ends %v, want %v", got, seen1)
	}
	if len(tb.Head) < 3 || tb.Head[2] != "on-demand (carried, last seen "+seen1.Format(time.DateOnly)+")" || !lastValue(tb, 2).Equal(ends1) {
		t.Errorf("lambda-1x: lines %q; want its carried part to end at %v", tb.Head, ends1)
	}
	if li := eval[string](t, ctx, `(document.querySelector('.legend-notes li.withdrawn') || {}).textContent || ''`); !strings.Contains(li,
		"no price from "+ends1.Format(time.DateOnly)) {
		t.Errorf("lambda-1x: legend %q does not say it was withdrawn", li)
	}
	shot(t, ctx, "series-withdrawn")
}

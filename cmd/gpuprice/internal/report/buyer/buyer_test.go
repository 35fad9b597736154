package buyer

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
)

func TestChartGapsAndMissing(t *testing.T) {
	d := func(n int) time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n) }
	c := Chart{ID: "c", Title: "t", Lines: []Line{{Name: "a", Points: []Point{{d(0), 1}, {d(1), 2}, {d(5), 3}}}}}
	svg := string(c.SVG())
	path := svg[strings.Index(svg, ` d="`)+4:]
	path = path[:strings.Index(path, `"`)]
	// Days 0–1 one segment, day 5 (after a 4-day gap) a segment of its own: a
	// missing day is a gap, never a line through zero.
	if strings.Count(path, "M") != 2 || strings.Count(path, "L") != 1 {
		t.Errorf("path %q: want two segments", path)
	}
	if strings.Contains(svg, "missing") {
		t.Error("a chart with points says missing")
	}
	empty := string(Chart{ID: "e", Title: "t", Lines: []Line{{Name: "a"}}}.SVG())
	if !strings.Contains(empty, "missing: no prices in the window") || strings.Contains(empty, "<path") {
		t.Errorf("an empty chart: %s", empty)
	}
}

func TestNiceTicksCover(t *testing.T) {
	for _, c := range [][2]float64{{1.38, 15.98}, {0.4, 0.4}, {2, 2.01}, {100, 4000}} {
		ticks, lo, hi := niceTicks(c[0], c[1], 5)
		if lo > c[0] || hi < c[1] || len(ticks) < 2 || len(ticks) > 12 {
			t.Errorf("niceTicks(%v) = %v [%v, %v]", c, ticks, lo, hi)
		}
	}
}

func TestMoney(t *testing.T) {
	for in, want := range map[float64]string{0: "0.00", 1234567.891: "1,234,567.89", -98765.4: "-98,765.40", 999: "999.00"} {
		if got := money(in); got != want {
			t.Errorf("money(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestDiscountsLikeForLike: a reserved offer is compared with the on-demand offer
// of the same SKU, region and zone only; without one its discount is missing.
func TestDiscountsLikeForLike(t *testing.T) {
	of := func(p, sku, region string, price float64) analytics.Offer {
		return analytics.Offer{Provider: p, SKU: sku, Region: region, Price: price}
	}
	got := discounts(map[string][]analytics.Offer{
		schemas.OnDemand:   {of("aws", "p5", "us-east-1", 10), of("aws", "p5", "eu-west-1", 12), of("gcp", "a3", "us", 11)},
		schemas.Reserved1Y: {of("aws", "p5", "us-east-1", 6), of("aws", "p5", "eu-west-1", 9), of("lambda", "x", "", 2)},
	})
	if len(got) != 2 {
		t.Fatalf("discounts: %+v", got)
	}
	a, l := got[0], got[1]
	if a.Provider != "aws" || a.Pairs != 2 || a.Median == nil || *a.Median != 32.5 || *a.Min != 25 || *a.Max != 40 {
		t.Errorf("aws: %+v", a)
	}
	if l.Provider != "lambda" || l.Pairs != 0 || l.Median != nil {
		t.Errorf("lambda (no on-demand twin): %+v, want a missing discount", l)
	}
}

func TestPosition(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	o := analytics.HistoryStats{P10: v(1), P25: v(2), P50: v(3), P75: v(4), P90: v(5)}
	for q, want := range map[float64]string{0.5: "below the p10", 2.5: "between the p25 and the p50", 9: "above the p90"} {
		if got := position(q, o); !strings.HasPrefix(got, want) {
			t.Errorf("position(%v) = %q, want %q…", q, got, want)
		}
	}
	if got := position(1, analytics.HistoryStats{}); !strings.Contains(got, "cannot be placed") {
		t.Errorf("no market: %q", got)
	}
}

func TestCiteStoreHidesPathAndPassword(t *testing.T) {
	for in, want := range map[string]string{
		"duckdb:///home/alice/secret/gpuprice.duckdb":          "duckdb:gpuprice.duckdb",
		"clickhouse://bob:hunter2@db.internal:9000/prices?x=1": "clickhouse://db.internal:9000/prices",
	} {
		if got := CiteStore(in); got != want {
			t.Errorf("CiteStore(%q) = %q, want %q", in, got, want)
		}
	}
}

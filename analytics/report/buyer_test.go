package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
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

// TestTargetLikeForLike: a one-year quote is placed among the one-year offers
// (reserved_1y and commitment_12m) in force, and against today's on-demand and spot
// medians; never against on-demand series-days. By hand: 3.50 is 3rd of 4 (2.69,
// 2.90 cheaper), $0.81 over together; on-demand median (3.99+4.09)/2 = 4.04; the
// saving at the cheapest offer is 0.81 × 8760 × 8 = $56,764.80.
func TestTargetLikeForLike(t *testing.T) {
	rep := &Report{KindOffer: map[string][]analytics.Offer{
		schemas.Reserved1Y: {{Provider: "crusoe", Price: 2.90}, {Provider: "together", Price: 2.69}, {Provider: "aws", Price: 4.18}},
		"commitment_12m":   {{Provider: "azure", Price: 9.34}},
		"commitment_36m":   {{Provider: "azure", Price: 1.00}},
		schemas.OnDemand:   {{Price: 3.99}, {Price: 4.09}},
		schemas.Reserved3Y: {{Provider: "azure", Price: 0.50}},
	}, SpotOffers: []analytics.Offer{{Price: 1.00}}}
	tg := target(query.ReportQuery{Quote: 3.50, Term: "1y", GPUs: 8, Cheapest: 10}, rep)
	v := tg.Verdict
	if v.Rank != 3 || v.Offers != 4 || v.Cheapest.Provider != "together" || *v.OnDemand != 4.04 || *v.Spot != 1 {
		t.Fatalf("verdict %+v", v)
	}
	if tg.SavingOverTerm == nil || math.Abs(*tg.SavingOverTerm-56764.80) > 1e-6 {
		t.Errorf("saving over the term %v", tg.SavingOverTerm)
	}
	names := map[string]float64{}
	for _, a := range tg.Against {
		names[a.Name] = *a.Price
	}
	if len(names) != 4 || names["cheapest one-year offer"] != 2.69 || names["on-demand median today"] != 4.04 {
		t.Errorf("references %v", names)
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

// TestRecordedByRow: the recorded-example note follows the rows, not the last runs:
// a live run of aws since (which failed offline) leaves aws's recorded rows recorded.
func TestRecordedByRow(t *testing.T) {
	live := schemas.Run{RunID: "20261102T000000Z-live", Source: "aws", Status: "failed"}
	r := &Report{RecordedRows: map[string]int{"lambda": 2, "aws": 3}, Sources: []query.SourceRow{{Name: "aws", LastRun: &live}}}
	if got := strings.Join(r.RecordedSources(), ","); got != "aws,lambda" {
		t.Errorf("recorded sources %q, want aws,lambda", got)
	}
	if got := (&Report{}).RecordedSources(); len(got) != 0 {
		t.Errorf("no recorded rows: %q", got)
	}
}

// TestWeightSaidInText: under --weight provider the summary, the market section's
// caption and notes, the spreads and the target price say that each provider was
// counted once; by default, each offer.
func TestWeightSaidInText(t *testing.T) {
	p := 3.0
	for _, c := range []struct{ weight, want string }{
		{analytics.WeightProvider, "each provider counted once"},
		{analytics.WeightOffer, "each offer counted once"},
	} {
		r := &Report{History: analytics.History{Weight: c.weight, Overall: analytics.HistoryStats{P10: &p, P25: &p, P50: &p, P90: &p}},
			Target: &Target{Quote: 3.5, Term: "1y", GPUs: 8, Hours: 8760, Verdict: analytics.QuoteVerdictWeighted(3.5, "1y", 8760,
				[]analytics.Offer{{Provider: "together", Price: 2.69}}, nil, nil, c.weight)}}
		var sum, market, spreads, target Section
		r.summary(&sum)
		r.market(&market)
		r.spreads(&spreads)
		r.target(&target)
		for what, text := range map[string]string{
			"summary's verdict":     sum.Paras[0],
			"summary's percentiles": strings.Join(sum.Paras, "\n"),
			"market notes":          market.Notes[0],
			"spreads":               spreads.Paras[0],
			"target":                target.Paras[0],
		} {
			if !strings.Contains(text, c.want) {
				t.Errorf("%s, weight %s: %q lacks %q", what, c.weight, text, c.want)
			}
		}
		if c.weight == analytics.WeightProvider && !strings.Contains(market.Tables[0].Caption, "each provider once") {
			t.Errorf("market caption %q", market.Tables[0].Caption)
		}
	}
}

package query

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
)

// TestHistoryRowsCarryEverything: the CSV of history holds the statistics and the
// cheapest offers, each row as wide as the header.
func TestHistoryRowsCarryEverything(t *testing.T) {
	p := 2.5
	h := analytics.History{
		Overall:   analytics.HistoryStats{Provider: "all", Series: 2, Samples: 10, P50: &p},
		Providers: []analytics.HistoryStats{{Provider: "lambda", Series: 1, Samples: 5}},
		Cheapest:  []analytics.Offer{{Price: 1.99, Provider: "lambda", Tier: "specialist", SKU: "gpu_1x_h100", Region: "us-east-1", Since: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}},
	}
	header, rows := HistoryRows(h)
	if len(rows) != 3 || rows[0][0] != "stats" || rows[2][0] != "cheapest" {
		t.Fatalf("rows %v", rows)
	}
	for _, r := range rows {
		if len(r) != len(header) {
			t.Errorf("row %v: %d cells, header %d", r, len(r), len(header))
		}
	}
	col := map[string]int{}
	for i, c := range header {
		col[c] = i
	}
	c := rows[2]
	if c[col["provider"]] != "lambda" || c[col["price_usd_gpu_hour"]] != "1.9900" || c[col["sku"]] != "gpu_1x_h100" || c[col["since"]] != "2026-01-02" {
		t.Errorf("cheapest row %v (header %s)", c, strings.Join(header, ","))
	}
	if rows[0][col["p50"]] != "2.5000" || rows[0][col["price_usd_gpu_hour"]] != "" {
		t.Errorf("stats row %v", rows[0])
	}
}

// TestSinceTakesWeeksAndDates: --since reads 2w and a date (the span to --at) in every
// command that parses it here.
func TestSinceTakesWeeksAndDates(t *testing.T) {
	if d, err := ParseSpan("2w"); err != nil || d != 14*24*time.Hour {
		t.Errorf("2w: %v %v", d, err)
	}
	q, err := ParseSpreads(map[string][]string{"since": {"2026-01-01"}, "at": {"2026-01-15T00:00:00Z"}}, NoCaps)
	if err != nil || q.Since != 14*24*time.Hour {
		t.Errorf("since a date: %v %v", q.Since, err)
	}
	if _, err := ParseSpreads(map[string][]string{"since": {"2026-02-01"}, "at": {"2026-01-15T00:00:00Z"}}, NoCaps); err == nil {
		t.Error("--since after --at accepted")
	}
}

// TestCompositionSentence: the figures of TestWindowSpecialistsEnterLate (three
// hyperscaler offers throughout at a median of 10, five specialists entering on the
// last days, today's median 3.75) in the words `history` and the report print.
func TestCompositionSentence(t *testing.T) {
	ten, today := 10.0, 3.75
	o := analytics.HistoryStats{P50: &ten, LatestMedian: &today, FirstDayOffers: 3, LastDayOffers: 8, SeriesEntered: 5,
		MatchedOffers: 3, MatchedP50: &ten, MatchedLatestMedian: &ten}
	want := "Composition: 3 offers were in force on the window's first day with any and 8 on its last; 5 entered and 0 left, " +
		"3 were in force on both. Like for like, those 3 offers had a median of $10.0000 over the window and $10.0000 today (0.0 %). " +
		"The whole market's window p50 ($10.0000) and today's median ($3.7500) are of different offers: their difference is " +
		"composition as well as price."
	if got := Composition(o); got != want {
		t.Errorf("Composition:\n%s\nwant\n%s", got, want)
	}
	o.MatchedOffers, o.MatchedP50, o.MatchedLatestMedian = 0, nil, nil
	if got := Composition(o); !strings.Contains(got, "No offer was in force on both days") {
		t.Errorf("without matched offers: %s", got)
	}
}

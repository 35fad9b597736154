package analytics

import (
	"fmt"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// TestIndexWeightedByProvider: one day, "others" holding x at 3.00 and m's eight
// regions at 1.00. Each offer once: mean 1.2222, sample SD 0.6667, so 3.00 lies
// 1.78 > 2.5 × 0.6667 = 1.67 from the mean and is dropped; the median of the rest
// is 1.00. Each provider once: {3, 1}, fewer than three values, nothing dropped,
// median 2.00. The offers counted stay 9.
func TestIndexWeightedByProvider(t *testing.T) {
	s, m := schemas.TierSpecialist, schemas.TierMarketplace
	prices := []DayPrice{dp("x", s, "on_demand", "a", 0, 3)}
	for r := 1; r <= 8; r++ {
		prices = append(prices, dp("m", m, "on_demand", fmt.Sprintf("r%d", r), 0, 1))
	}
	byOffer, byProvider := Index(prices), IndexWeighted(prices, WeightProvider)
	if len(byOffer) != 1 || byOffer[0].Price != 1 || byOffer[0].Dropped != 1 || byOffer[0].Offers != 9 {
		t.Errorf("by offer: %+v, want 1.00 with 1 dropped of 9", byOffer)
	}
	if len(byProvider) != 1 || byProvider[0].Price != 2 || byProvider[0].Dropped != 0 || byProvider[0].Offers != 9 {
		t.Errorf("by provider: %+v, want 2.00, none dropped, 9 offers", byProvider)
	}
}

// TestCrossSection: by offer the prices sorted; by provider each provider's median.
func TestCrossSection(t *testing.T) {
	got := CrossSection([]float64{6, 1, 1, 1, 3, 2}, []string{"big", "m", "m", "m", "x", "x"}, WeightProvider)
	if fmt.Sprint(got) != "[1 2.5 6]" {
		t.Errorf("by provider %v, want [1 2.5 6]", got)
	}
	if got := CrossSection([]float64{6, 1, 3}, []string{"a", "b", "c"}, WeightOffer); fmt.Sprint(got) != "[1 3 6]" {
		t.Errorf("by offer %v", got)
	}
	if w, err := ParseWeight("provider"); err != nil || w != WeightProvider {
		t.Errorf("ParseWeight: %q %v", w, err)
	}
	if _, err := ParseWeight("series-days"); err == nil {
		t.Error("ParseWeight accepted series-days")
	}
}

// TestCarriedLabels: a price in force on day 2 of a series last seen on day 0 is
// carried; index points, spreads days and history's daily points count it and name
// the last sighting.
func TestCarriedLabels(t *testing.T) {
	s := schemas.TierSpecialist
	seen := day(0).Add(10 * time.Hour)
	var prices []DayPrice
	for d := 0; d < 3; d++ {
		p := dp("x", s, "on_demand", "a", d, 3)
		p.LastSeen = seen
		prices = append(prices, p)
	}
	for _, p := range Index(prices) {
		if want := map[bool]int{true: 0, false: 1}[p.Day.Equal(day(0))]; p.Carried != want || !p.LastSeen.Equal(seen) {
			t.Errorf("index %v: carried %d last seen %v, want %d, %v", p.Day, p.Carried, p.LastSeen, want, seen)
		}
	}
	for _, d := range Spreads(prices) {
		if want := map[bool]int{true: 0, false: 1}[d.Day.Equal(day(0))]; d.Carried != want || !d.LastSeen.Equal(seen) {
			t.Errorf("spreads %v: carried %d last seen %v, want %d", d.Day, d.Carried, d.LastSeen, want)
		}
	}
	for _, d := range HistoryOf("H100-SXM-80GB", "on_demand", prices, day(0), day(3), 1).Daily {
		if want := map[bool]int{true: 0, false: 1}[d.Day.Equal(day(0))]; d.Carried != want {
			t.Errorf("history daily %s %v: carried %d, want %d", d.Group, d.Day, d.Carried, want)
		}
	}
}

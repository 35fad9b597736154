package schemas

import (
	"math"
	"testing"
	"time"
)

func TestDay(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	for in, want := range map[time.Time]time.Time{
		time.Date(2025, 3, 1, 0, 30, 0, 0, cet):                            time.Date(2025, 2, 28, 0, 0, 0, 0, time.UTC),
		time.Date(2025, 3, 1, 23, 59, 59, 999, time.UTC):                   time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 12, 31, 20, 0, 0, 0, time.FixedZone("X", -5*3600)): time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got := Day(in); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("Day(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestFXRateValidate(t *testing.T) {
	d := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := (FXRate{Date: d, Currency: "EUR", USDPerUnit: 1.04, Source: "ecb"}).Validate(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []FXRate{
		{Date: d, USDPerUnit: 1},
		{Currency: "EUR", USDPerUnit: 1},
		{Date: d, Currency: "EUR"},
		{Date: d, Currency: "EUR", USDPerUnit: -2},
		{Date: d, Currency: "EUR", USDPerUnit: math.NaN()},
		{Date: d, Currency: "EUR", USDPerUnit: math.Inf(1)},
	} {
		if err := r.Validate(); err == nil {
			t.Errorf("Validate(%+v): no error", r)
		}
	}
}

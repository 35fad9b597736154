package schemas

import (
	"fmt"
	"math"
	"time"
)

// FXRate is the value of one unit of a currency in US dollars on one day, as a
// source (e.g. the ECB reference rates) published it. Its identity is
// (Currency, Date); storing the same identity again replaces the rate.
type FXRate struct {
	Date       time.Time `json:"date"`         // the day, as UTC midnight
	Currency   string    `json:"currency"`     // ISO 4217 code, e.g. "EUR"
	USDPerUnit float64   `json:"usd_per_unit"` // USD for one unit of Currency
	Source     string    `json:"source"`       // where the rate came from, e.g. "ecb"
}

// Day returns t's calendar day in UTC, as UTC midnight.
func Day(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Validate checks that r can be stored: a currency, a date, and a finite positive
// rate.
func (r FXRate) Validate() error {
	switch {
	case r.Currency == "":
		return fmt.Errorf("schemas: fx rate on %s: empty currency", r.Date.Format(time.DateOnly))
	case r.Date.IsZero():
		return fmt.Errorf("schemas: fx rate of %s: zero date", r.Currency)
	case math.IsNaN(r.USDPerUnit) || math.IsInf(r.USDPerUnit, 0) || r.USDPerUnit <= 0:
		return fmt.Errorf("schemas: fx rate of %s on %s: %v USD per unit is not a positive number",
			r.Currency, r.Date.Format(time.DateOnly), r.USDPerUnit)
	}
	return nil
}

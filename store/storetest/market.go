package storetest

import (
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// M0 is the first day of the market cross-section data: 2025-04-01.
var M0 = time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)

// MarketData is a market where one provider has many regions and series enter and
// leave, collected daily at 10:00 on days 0…5 from M0: big (hyperscaler, one
// region) at $6.00 every day; x/a (specialist) at $3.00 every day; x/b at $2.00 on
// days 0 and 1 only (withdrawn: its price ends the day after the day after its last
// sighting, so it is in force on days 0–2); m (marketplace) in eight regions at
// $1.00 from day 4 (entering).
func MarketData() []schemas.Observation {
	var out []schemas.Observation
	for d := 0; d < 6; d++ {
		at := M0.AddDate(0, 0, d).Add(10 * time.Hour)
		out = append(out, h100("big", schemas.TierHyperscaler, "big", at, at, 6),
			h100("x", schemas.TierSpecialist, "a", at, at, 3))
		if d <= 1 {
			out = append(out, h100("x", schemas.TierSpecialist, "b", at, at, 2))
		}
		if d >= 4 {
			for r := 1; r <= 8; r++ {
				o := h100("m", schemas.TierMarketplace, "m", at, at, 1)
				o.Region = fmt.Sprintf("r%d", r)
				out = append(out, o)
			}
		}
	}
	return out
}

package analytics

import (
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// CurrentOnly keeps the series still on offer: those observed within stale of their
// provider's newest observation. A marketplace offer that vanished, or an instance a
// provider withdrew, stops being listed once the provider's next collection no longer
// sees it; a provider that was not collected lately keeps its last known prices
// (their observed_at shows how old they are). stale ≤ 0 keeps every series. The order
// of rows is kept and rows is not modified.
//
// It is the one rule of "on offer" for latest prices: `gpuprice prices` and `tokens`,
// the HTTP API, the page, the metrics and the alert rules all apply it (with
// StaleAfter unless the caller chose otherwise). DailyPrices applies the same rule to
// bars through PriceEnd.
func CurrentOnly(rows []schemas.Observation, stale time.Duration) []schemas.Observation {
	if stale <= 0 {
		return rows
	}
	newest := map[string]time.Time{}
	for _, o := range rows {
		if o.ObservedAt.After(newest[o.Provider]) {
			newest[o.Provider] = o.ObservedAt
		}
	}
	out := rows[:0:0]
	for _, o := range rows {
		if !o.ObservedAt.Before(newest[o.Provider].Add(-stale)) {
			out = append(out, o)
		}
	}
	return out
}

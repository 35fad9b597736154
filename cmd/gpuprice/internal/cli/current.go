package cli

import (
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// defaultStale is how far behind its provider's newest observation a series may be
// and still count as on offer.
const defaultStale = 24 * time.Hour

// currentOnly keeps the series still on offer: those observed within stale of their
// provider's newest observation. A marketplace offer that vanished, or an instance a
// provider withdrew, stops being listed once the provider's next collection no longer
// sees it; a provider that was not collected lately keeps its last known prices
// (their observed_at shows how old they are). stale ≤ 0 keeps every series. The order
// of rows is kept.
func currentOnly(rows []schemas.Observation, stale time.Duration) []schemas.Observation {
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

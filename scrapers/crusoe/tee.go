package crusoe

import (
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// teeRows passes every row to e and keeps a copy in rows: the capacity signals are
// matched to the page's rows of the same run.
type teeRows struct {
	e    scrapers.Emitter
	rows *[]schemas.Observation
}

// Emit implements scrapers.Emitter.
func (t teeRows) Emit(o schemas.Observation) {
	*t.rows = append(*t.rows, o)
	t.e.Emit(o)
}

// teeRejecter is teeRows for an emitter that quarantines: unreadable rows still reach
// its quarantine (an emitter that cannot gets a teeRows, which cannot either, so the
// page's ErrUnquarantined is kept).
type teeRejecter struct{ teeRows }

// Reject implements scrapers.Rejecter.
func (t teeRejecter) Reject(raw, reason string) { scrapers.Reject(t.e, raw, reason) }

// tee wraps e as teeRows or teeRejecter, by what e can do.
func tee(e scrapers.Emitter, rows *[]schemas.Observation) scrapers.Emitter {
	t := teeRows{e: e, rows: rows}
	if _, ok := e.(scrapers.Rejecter); ok {
		return teeRejecter{t}
	}
	return t
}

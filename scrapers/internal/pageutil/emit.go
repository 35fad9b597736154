package pageutil

import (
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// ErrUnquarantined is scrapers.ErrUnquarantined.
var ErrUnquarantined = scrapers.ErrUnquarantined

// Rejected is a record a parser found but could not read (scrapers.Rejected).
type Rejected = scrapers.Rejected

// Result is what a page parser returns: every source's scrapers.Result.
type Result = scrapers.Result

// Emit hands every row to e with SourceURL set, and every rejected record to e's
// Rejecter (scrapers.EmitResult).
func Emit(e scrapers.Emitter, res Result, sourceURL string) error {
	return scrapers.EmitResult(e, res, sourceURL)
}

// UnitFromPer maps the text after a price ("GPU-hr", "GPU-hour", "Hour", "hr", "month")
// to a unit; an empty text gives def, a text it does not know is returned verbatim so
// that ingest quarantines the row with it.
func UnitFromPer(per, def string) string {
	p := strings.ToLower(Clean(per))
	if p == "" {
		return def
	}
	gpu := strings.Contains(p, "gpu")
	p = strings.NewReplacer("gpu", "", "-", " ", "/", " ", "per", " ").Replace(p)
	switch strings.Join(strings.Fields(p), " ") {
	case "hr", "hour", "h":
		if gpu {
			return schemas.UnitGPUHour
		}
		return schemas.UnitHour
	case "mo", "month":
		if gpu {
			return schemas.UnitGPUMonth
		}
		return schemas.UnitMonth
	}
	return per
}

// RawText is a record's text for a Rejected: cleaned and cut to at most 2,000 bytes.
func RawText(s string) string {
	s = Clean(s)
	if len(s) > 2000 {
		s = s[:2000]
	}
	return s
}

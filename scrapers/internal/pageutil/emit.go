package pageutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// ErrUnquarantined is returned by Emit when unreadable records were found and the
// emitter could not quarantine them (it is not a scrapers.Rejecter).
var ErrUnquarantined = errors.New("unreadable records could not be quarantined")

// Rejected is a record a parser found but could not read.
type Rejected struct {
	Raw    string `json:"raw"`
	Reason string `json:"reason"`
}

// Result is what a page parser returns: the rows it read and the records it could not.
type Result struct {
	Rows    []schemas.Observation `json:"rows"`
	Rejects []Rejected            `json:"rejects,omitempty"`
}

// Emit hands every row to e with SourceURL set, and every rejected record to e's
// Rejecter. When e cannot quarantine, the rows are still emitted and the error (wrapping
// ErrUnquarantined) lists the reasons, so the run is recorded degraded instead of losing
// them silently.
func Emit(e scrapers.Emitter, res Result, sourceURL string) error {
	for _, o := range res.Rows {
		o.SourceURL = sourceURL
		e.Emit(o)
	}
	var lost []string
	for _, r := range res.Rejects {
		if !scrapers.Reject(e, r.Raw, r.Reason) {
			lost = append(lost, r.Reason)
		}
	}
	if len(lost) > 0 {
		return fmt.Errorf("%w: %d (%s)", ErrUnquarantined, len(lost), strings.Join(lost, "; "))
	}
	return nil
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

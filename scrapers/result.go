package scrapers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// ErrUnquarantined is returned by EmitResult when unreadable records were found and
// the emitter could not quarantine them (it is not a Rejecter).
var ErrUnquarantined = errors.New("unreadable records could not be quarantined")

// Rejected is a record a parser found but could not read, kept for quarantine.
type Rejected struct {
	Raw    string `json:"raw"`
	Reason string `json:"reason"`
}

// Result is what every source's parser returns (alone, or embedded in a page type
// that adds what the source needs to go on: a next-page token, a count of items): the
// rows it read, the records it could not read (quarantined with the reason), and the
// records it passed over on purpose, counted by reason. Parsers are pure: no HTTP, no
// clock; golden tests compare a Result with testdata/<case>/expected.json.
type Result struct {
	Rows    []schemas.Observation `json:"rows"`
	Rejects []Rejected            `json:"rejects,omitempty"`
	Skipped map[string]int        `json:"skipped,omitempty"`
}

// Reject records a record that could not be read.
func (r *Result) Reject(raw, reason string) {
	r.Rejects = append(r.Rejects, Rejected{Raw: raw, Reason: reason})
}

// Skip counts a record passed over on purpose.
func (r *Result) Skip(reason string) {
	if r.Skipped == nil {
		r.Skipped = map[string]int{}
	}
	r.Skipped[reason]++
}

// EmitResult hands every row to e (with SourceURL set when sourceURL is not empty),
// and every rejected record to e's Rejecter. When e cannot quarantine, the rows are
// still emitted and the error (wrapping ErrUnquarantined) lists the reasons, so the
// run is recorded degraded instead of losing them silently.
func EmitResult(e Emitter, res Result, sourceURL string) error {
	for _, o := range res.Rows {
		if sourceURL != "" {
			o.SourceURL = sourceURL
		}
		e.Emit(o)
	}
	var lost []string
	for _, r := range res.Rejects {
		if !Reject(e, r.Raw, r.Reason) {
			lost = append(lost, r.Reason)
		}
	}
	if len(lost) > 0 {
		return fmt.Errorf("%w: %d (%s)", ErrUnquarantined, len(lost), strings.Join(lost, "; "))
	}
	return nil
}

// PlaceholderPrefix starts the price_text of a row whose price a parser knows to be
// a placeholder the provider publishes (RunPod's round $0.50 in a cloud without the
// GPU): emitted with price 0, it is quarantined with that text as the reason and
// counts toward the source's Info.QuarantineShare.
const PlaceholderPrefix = "placeholder:"

// NotOfferedPrefix starts the price_text of a row the provider says is not offered
// ("not offered in community cloud (communityCloud false; listed 0.5)").
const NotOfferedPrefix = "not offered"

// NotOffered reports whether the price text of a row emitted with price 0 says the
// provider does not offer it: no text (a price of 0 means not offered), "null" (an
// API's null price), a dash, "N/A", "none", "not available", "unavailable", or a
// text starting with NotOfferedPrefix. Ingest counts such rows as not offered
// (runs.rows_not_offered): neither stored nor quarantined, and no problem of the
// source. Page sources pass over such cells with no row (pageutil.NotOffered).
func NotOffered(text string) bool {
	t := strings.ToLower(strings.Join(strings.Fields(text), " "))
	switch t {
	case "", "null", "-", "–", "—", "n/a", "na", "none", "not available", "unavailable":
		return true
	}
	return strings.HasPrefix(t, NotOfferedPrefix)
}

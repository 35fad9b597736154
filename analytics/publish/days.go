package publish

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// ErrSelection marks a Selection that names no day that may be published.
var ErrSelection = errors.New("publish: bad selection of days")

// selectionError is an error of a Selection, its message as the user wrote the flags.
type selectionError struct{ msg string }

func (e selectionError) Error() string        { return e.msg }
func (e selectionError) Is(target error) bool { return target == ErrSelection }

func selectionf(format string, args ...any) error {
	return selectionError{fmt.Sprintf(format, args...)}
}

// Selection is the days a publish run is asked for: Days (YYYY-MM-DD, each possibly
// a comma-separated list), or the days from Since (SinceText as the user gave it)
// through the day before Until, or neither (the days after the catalog's last).
type Selection struct {
	Days         []string
	Since, Until time.Time // zero when not given
	SinceText    string
}

// Select returns the days a publish run into dir writes: the Selection's days, or
// its span, or the days after the catalog's last through yesterday (yesterday alone
// when the directory is new), with a note for the user when there is one. Only whole
// UTC days that are over are published. A selection naming a day that may not be
// published is an ErrSelection.
func Select(dir string, sel Selection, now time.Time) ([]time.Time, string, error) {
	yesterday := now.UTC().Truncate(store.Daily).Add(-store.Daily)
	if len(sel.Days) > 0 {
		var out []time.Time
		for _, s := range sel.Days {
			for _, s := range strings.Split(s, ",") {
				d, err := ParseDay(strings.TrimSpace(s))
				if err != nil {
					return nil, "", selectionf("--day: %v", err)
				}
				if d.After(yesterday) {
					return nil, "", selectionf("--day %s: the UTC day is not over yet (the last whole day is %s)",
						s, DayString(yesterday))
				}
				out = append(out, d)
			}
		}
		return out, "", nil
	}
	last := yesterday
	if !sel.Until.IsZero() {
		if l := sel.Until.Add(-store.Daily).Truncate(store.Daily); l.Before(last) {
			last = l
		}
	}
	if !sel.Since.IsZero() {
		list := Days(sel.Since.Truncate(store.Daily), last)
		if len(list) == 0 {
			return nil, "", selectionf("--since %s: no whole UTC day that is over lies from it to --until "+
				"(the last whole day is %s)", sel.SinceText, DayString(last))
		}
		return list, "", nil
	}
	cat, err := ReadCatalog(dir)
	if errors.Is(err, ErrNoCatalog) {
		return []time.Time{last}, fmt.Sprintf("new snapshot directory: publishing %s only; "+
			"--since publishes earlier days", DayString(last)), nil
	}
	if err != nil {
		return nil, "", err
	}
	if len(cat.Days) == 0 {
		return []time.Time{last}, "", nil
	}
	first, err := ParseDay(cat.Days[len(cat.Days)-1].Day)
	if err != nil {
		return nil, "", err
	}
	first = first.Add(store.Daily)
	if first.After(last) {
		return nil, fmt.Sprintf("every day through %s is published; --since checks published days against the store",
			DayString(last)), nil
	}
	return Days(first, last), "", nil
}

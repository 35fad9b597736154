package publish

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// CitedDay is one published day a citation covers: its newest version.
type CitedDay struct {
	Day            string `json:"day"`
	Version        int    `json:"version"`
	Manifest       string `json:"manifest"` // path, relative to the snapshot directory
	ManifestSHA256 string `json:"manifest_sha256"`
	Rows           Rows   `json:"rows"`
}

// Citation names the snapshot days that cover a span of days: what a report built
// from that span cites so that its numbers can be checked later.
type Citation struct {
	Dir  string `json:"dir"`
	From string `json:"from"` // first day of the span, YYYY-MM-DD
	To   string `json:"to"`   // last day of the span (inclusive)
	// Days are the published days of the span (newest version of each), by day.
	Days []CitedDay `json:"days"`
	// Missing are the days of the span that are not published.
	Missing []string `json:"missing"`
	// ID identifies what is cited: the SHA-256 of one line per cited day,
	// "DAY VERSION MANIFEST_SHA256\n", in day order. Anyone holding the directory
	// can recompute it from catalog.json.
	ID string `json:"id"`
	// Method is the method of the newest cited day.
	Method Method `json:"method"`
}

// Complete reports whether every day of the span is published.
func (c Citation) Complete() bool { return len(c.Missing) == 0 && len(c.Days) > 0 }

// String is the citation in one sentence, e.g. for a report's method section.
func (c Citation) String() string {
	if len(c.Days) == 0 {
		return fmt.Sprintf("no gpuprice snapshot in %s covers %s to %s", c.Dir, c.From, c.To)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "gpuprice snapshot %s (%s), days %s to %s: %d of %d days published",
		c.ID, c.Dir, c.From, c.To, len(c.Days), len(c.Days)+len(c.Missing))
	if n := len(c.Missing); n > 0 {
		fmt.Fprintf(&b, " (missing %s", c.Missing[0])
		if n > 1 {
			fmt.Fprintf(&b, " and %d more", n-1)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; check with `gpuprice verify %s`", c.Dir)
	return b.String()
}

// Cite finds the published days of the snapshot directory dir that cover the UTC
// days from through to (inclusive), taking each day's newest version, and checks
// the catalog's and each cited manifest's own hash (not the data files: Verify
// does). Days of the span that are not published are listed in Missing; a span with
// no published day at all is not an error (Complete says false).
func Cite(dir string, from, to time.Time) (Citation, error) {
	from, to = from.UTC().Truncate(24*time.Hour), to.UTC().Truncate(24*time.Hour)
	c := Citation{Dir: dir, From: DayString(from), To: DayString(to), Days: []CitedDay{}, Missing: []string{}}
	if to.Before(from) {
		return c, fmt.Errorf("publish: cite: span ends (%s) before it starts (%s)", c.To, c.From)
	}
	cat, err := ReadCatalog(dir)
	if err != nil {
		return c, fmt.Errorf("publish: cite: %w", err)
	}
	h := sha256.New()
	for d := from; !d.After(to); d = d.Add(24 * time.Hour) {
		e, ok := cat.Latest(DayString(d))
		if !ok {
			c.Missing = append(c.Missing, DayString(d))
			continue
		}
		m, err := ReadManifest(dir, e.Manifest)
		if err != nil {
			return c, fmt.Errorf("publish: cite: %w", err)
		}
		if m.ManifestSHA256 != e.ManifestSHA256 || m.Day != e.Day || m.Version != e.Version {
			return c, fmt.Errorf("publish: cite: %s is not the manifest the catalog lists for %s v%d", e.Manifest, e.Day,
				e.Version)
		}
		c.Days = append(c.Days, CitedDay{Day: e.Day, Version: e.Version, Manifest: e.Manifest,
			ManifestSHA256: e.ManifestSHA256, Rows: e.Rows})
		c.Method = m.Method
		fmt.Fprintf(h, "%s %d %s\n", e.Day, e.Version, e.ManifestSHA256)
	}
	if len(c.Days) > 0 {
		c.ID = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return c, nil
}

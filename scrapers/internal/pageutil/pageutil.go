// Package pageutil holds the text helpers the pricing-page sources share: whitespace
// clean-up, a careful number parser (thousands separators and decimal commas), a price
// reader that keeps "from" qualifiers and per-unit suffixes, a classifier of price
// texts that are not prices ("Contact sales", "N/A", "—"), pricing kinds from column
// labels ("On-demand", "Spot", "1-year reserved", "6 months") and SKU slugs.
//
// It also holds how pages are read: Crawl (colly through the shared HTTP client:
// robots.txt, cancellation, one request at a time per host, the document as a goquery
// selection) and Page, a source made of one pricing page and its pure parser. The
// text helpers are pure functions of their input: no HTTP, no clock.
package pageutil

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// ErrNumber is returned for a text that is not a number this parser accepts.
var ErrNumber = errors.New("pageutil: not a number")

// ParseNumber reads a published number with schemas.ParseNumber (thousands
// separators, decimal commas), failing with ErrNumber.
func ParseNumber(s string) (float64, error) {
	v, err := schemas.ParseNumber(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrNumber, s)
	}
	return v, nil
}

// Clean collapses every run of white space (non-breaking spaces included) into one
// space and trims the ends.
func Clean(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == '\u00a0' || r == '\u200b'
	}), " ")
}

// Price is what ReadPrice found in a price text.
type Price struct {
	Value     float64 // the amount
	Currency  string  // ISO 4217 code: USD for "$", EUR for "€", GBP for "£", or the code written
	Qualifier string  // "from" for "from $2.00", "Starting at", "As low as"; "" otherwise
	Per       string  // what follows the amount after "/" or "per", cleaned ("GPU-hr", "Hour"); "" when none
}

var (
	priceRE = regexp.MustCompile(
		`(?i)(US\$|\$|€|£|\b(?:USD|EUR|GBP)\b)\s*([0-9]{1,3}(?:[ ` +
			`'\x{00a0}\x{202f}][0-9]{3})+(?:[.,][0-9]+)?|[0-9][0-9.,]*[0-9]|[0-9])`,
	)
	fromRE = regexp.MustCompile(`(?i)\b(from|starting at|starts at|as low as|starting from)\b`)
	perRE  = regexp.MustCompile(`(?i)^\s*(?:/|per\b)\s*(.+)$`)
)

// ReadPrice finds the first amount with a currency in text. ok is false when the text
// holds no amount (then the text is a note such as "Contact sales"). err is set when an
// amount is there but unreadable: "$1,23,4", or an amount running into letters
// ("$4x.00", "$8k").
func ReadPrice(text string) (p Price, ok bool, err error) {
	t := Clean(text)
	loc := priceRE.FindStringSubmatchIndex(t)
	if loc == nil {
		return Price{}, false, nil
	}
	sym := t[loc[2]:loc[3]]
	num := t[loc[4]:loc[5]]
	if rest := t[loc[5]:]; rest != "" {
		rs := []rune(rest)
		r := rs[0]
		mark := (r == '.' || r == ',') && len(rs) > 1 && unicode.IsDigit(rs[1])
		if unicode.IsLetter(r) || unicode.IsDigit(r) || mark {
			return Price{}, true, fmt.Errorf("pageutil: price %q: %w", text, ErrNumber)
		}
	}
	v, err := ParseNumber(num)
	if err != nil {
		return Price{}, true, fmt.Errorf("pageutil: price %q: %w", text, err)
	}
	p.Value = v
	switch strings.ToUpper(sym) {
	case "$", "US$", "USD":
		p.Currency = "USD"
	case "€", "EUR":
		p.Currency = "EUR"
	case "£", "GBP":
		p.Currency = "GBP"
	}
	if fromRE.MatchString(t[:loc[0]]) {
		p.Qualifier = "from"
	}
	if m := perRE.FindStringSubmatch(t[loc[1]:]); m != nil {
		p.Per = Clean(m[1])
	}
	return p, true, nil
}

// NotOffered reports whether a price text says the offering has no price of this kind
// at all (an empty cell, "N/A", a dash: scrapers.NotOffered): such cells produce no
// row.
func NotOffered(text string) bool { return scrapers.NotOffered(Clean(text)) }

// notSoldMarkers are the texts pricing pages show where a price would be for an
// offering they do not sell at a published price (letters only, lower case): the
// provider's own "not available" markers.
var notSoldMarkers = map[string]bool{
	"contact sales": true, "contact us": true, "talk to sales": true,
	"pre order": true, "preorder": true, "coming soon": true,
}

var nonLetters = regexp.MustCompile(`[^\pL]+`)

// NotSold reports whether a price text is one of the provider's own "not available"
// markers ("Contact sales", "Contact us", "Pre order", "Pre-order", "Coming soon",
// in any case, with an arrow or other punctuation around it).
func NotSold(text string) bool {
	return notSoldMarkers[strings.TrimSpace(nonLetters.ReplaceAllString(strings.ToLower(Clean(text)), " "))]
}

// UnpricedText is Attrs["price_text"] of a row a page lists with a text and no
// amount, emitted with price 0. A NotSold marker becomes a scrapers.NotOffered text
// (`not offered (the page shows "Contact sales")`): ingest counts the row as not
// offered (runs.rows_not_offered), neither stored nor quarantined. Any other note is
// returned as written: ingest quarantines the row (no price published), for a person
// to read.
func UnpricedText(text string) string {
	t := Clean(text)
	if NotSold(t) {
		return fmt.Sprintf("%s (the page shows %q)", scrapers.NotOfferedPrefix, t)
	}
	return t
}

var (
	termRE   = regexp.MustCompile(`(?i)\b(\d+)\s*[- ]?\s*(months?|mo|years?|yrs?|yr)\b`)
	daysRE   = regexp.MustCompile(`(?i)\b(\d+)\s*(?:[-–]\s*(\d+)|(\+))\s*days?\b`)
	yearWord = regexp.MustCompile(`(?i)\b(one|three)[- ]year\b`)
)

// KindFromLabel maps a column label or heading to a pricing kind: "On-demand", "Pay as
// you go", "Hourly" → on_demand; "Spot", "Current spot" → spot; a stated term ("1-year
// reserved", "3 years", "6 months", "12-month commitment", "Monthly") → reserved_1y,
// reserved_3y or commitment_<n>m. ok is false for a label that names no kind, or a
// reserved label without a term ("Reserved").
func KindFromLabel(label string) (kind string, ok bool) {
	l := strings.ToLower(Clean(label))
	if months, ok := TermMonths(l); ok {
		return KindForMonths(months), true
	}
	switch {
	case strings.Contains(l, "spot"), strings.Contains(l, "preemptible"):
		return schemas.Spot, true
	case strings.Contains(l, "on-demand"), strings.Contains(l, "on demand"),
		strings.Contains(l, "pay as you go"), strings.Contains(l, "pay-as-you-go"), l == "hourly":
		return schemas.OnDemand, true
	}
	return "", false
}

// TermMonths reads a commitment term from a label: "1 year" → 12, "3-year" → 36,
// "6 months" → 6, "monthly" → 1; a range of days is the longest term it covers in
// months of 30 days ("7-30 days" → 1, "31-90 days" → 3, "91-180 days" → 6) and an
// open range its shortest, rounded up ("181+ days" → 7). ok is false when no term is
// stated.
func TermMonths(label string) (int, bool) {
	l := strings.ToLower(label)
	if m := daysRE.FindStringSubmatch(l); m != nil {
		days, err := strconv.Atoi(m[1])
		if m[2] != "" {
			days, err = strconv.Atoi(m[2])
		}
		if err != nil || days <= 0 || days > 3660 {
			return 0, false
		}
		return (days + 29) / 30, true
	}
	if m := termRE.FindStringSubmatch(l); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n <= 0 || n > 120 {
			return 0, false
		}
		if strings.HasPrefix(m[2], "y") {
			return n * 12, true
		}
		return n, true
	}
	if m := yearWord.FindStringSubmatch(l); m != nil {
		if m[1] == "one" {
			return 12, true
		}
		return 36, true
	}
	if strings.Contains(l, "monthly") {
		return 1, true
	}
	if strings.Contains(l, "annual") || strings.Contains(l, "yearly") {
		return 12, true
	}
	return 0, false
}

// KindForMonths is the pricing kind of a commitment of n months: reserved_1y for 12,
// reserved_3y for 36, commitment_<n>m otherwise.
func KindForMonths(n int) string {
	switch n {
	case 12:
		return schemas.Reserved1Y
	case 36:
		return schemas.Reserved3Y
	}
	return schemas.CommitmentPricing(n)
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// Slug lower-cases s and turns every run of other characters into "-", dropping the
// words in drop (compared lower case): Slug("NVIDIA HGX H100", "nvidia") → "hgx-h100".
func Slug(s string, drop ...string) string {
	var keep []string
	for _, w := range strings.Fields(strings.ToLower(Clean(s))) {
		skip := false
		for _, d := range drop {
			if w == d {
				skip = true
				break
			}
		}
		if !skip {
			keep = append(keep, w)
		}
	}
	return strings.Trim(slugRE.ReplaceAllString(strings.Join(keep, " "), "-"), "-")
}

// MentionsInfiniBand reports whether text states an InfiniBand interconnect.
func MentionsInfiniBand(text string) bool {
	return strings.Contains(strings.ToLower(text), "infiniband")
}

var memRE = regexp.MustCompile(`(?i)\b([0-9]+(?:[.,][0-9]+)?)\s*(GB|GiB|TB)\b`)

// MemoryGB reads the first memory size in text ("141GB", "80 GB", "1.5 TB"); 0 when
// there is none.
func MemoryGB(text string) float64 {
	m := memRE.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	v, err := ParseNumber(m[1])
	if err != nil {
		return 0
	}
	if strings.EqualFold(m[2], "TB") {
		v *= 1000
	}
	return v
}

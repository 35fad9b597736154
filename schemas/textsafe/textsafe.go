// Package textsafe holds the rules for strings gpuprice did not write: a marketplace
// host's GPU name or location, a scraped page's text. Ingest passes every such string
// through Clean (controls and bidi overrides removed, length capped) and regions through
// Region (a boring code, the raw text kept apart); every sink then applies its own
// escaping: Slack, Markdown, CSV, Terminal and PromLabel. It imports nothing of gpuprice,
// so the CLI, the server, analytics and ingest all use the same rules.
package textsafe

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Length caps of Clean, in runes, per kind of field.
const (
	MaxName   = 128  // a GPU name, a region, a zone
	MaxKey    = 256  // a SKU, an attribute's name
	MaxText   = 1024 // an attribute's value, a description
	MaxURL    = 2048 // a source URL
	MaxRegion = 64   // a region after Region
)

// Ellipsis ends a string Clean cut.
const Ellipsis = "…"

// bidi reports the Unicode bidirectional controls (embeddings, overrides, isolates,
// marks), which reorder what a reader sees without being seen.
func bidi(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200E, r == 0x200F, r == 0x061C:
		return true
	}
	return false
}

// invisible reports runes that Clean drops: C0 and C1 controls (except whitespace,
// which becomes a space), DEL, bidi controls, zero-width characters and other format
// characters (Cf), and the byte-order mark.
func invisible(r rune) bool {
	return bidi(r) || unicode.Is(unicode.Cf, r) || (unicode.IsControl(r) && !unicode.IsSpace(r))
}

// Clean is the one rule every third-party string passes at ingest: invalid UTF-8
// becomes U+FFFD, whitespace (newlines, tabs) becomes one space, control, bidi and
// other invisible format characters are removed, the ends are trimmed, and the result
// is cut to max runes (ending with Ellipsis). max <= 0 means no cap.
func Clean(s string, max int) string {
	if isClean(s, max) {
		return s
	}
	out := make([]rune, 0, len(s))
	space := false
	for _, r := range strings.ToValidUTF8(s, string(utf8.RuneError)) {
		switch {
		case unicode.IsSpace(r):
			space = len(out) > 0
			continue
		case invisible(r):
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
	}
	if max > 0 && len(out) > max {
		out = append(out[:max-1], []rune(Ellipsis)...)
	}
	return string(out)
}

// isClean reports whether Clean would return s unchanged (the common case: no work).
func isClean(s string, max int) bool {
	if max > 0 && len(s) > max && utf8.RuneCountInString(s) > max {
		return false
	}
	// Printable ASCII, the common case, needs no Unicode table: no byte of 0x21–0x7E
	// is a space or invisible, and a space is clean unless it doubles or ends s.
	prevSpace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			return isCleanRunes(s)
		}
		sp := c == ' '
		if sp && prevSpace {
			return false
		}
		prevSpace = sp
	}
	return !prevSpace || s == ""
}

// isCleanRunes is isClean's test of every rune, for a string that is not all
// printable ASCII.
func isCleanRunes(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	prevSpace := true
	for _, r := range s {
		sp := r == ' '
		switch {
		case sp && prevSpace:
			return false
		case !sp && (unicode.IsSpace(r) || invisible(r)):
			return false
		}
		prevSpace = sp
	}
	return !prevSpace || s == ""
}

// Boring reports whether s is a region, zone or label value that needs no escaping
// anywhere: 1 to MaxRegion letters, digits, '.', '_', '-' and inner spaces, starting
// with a letter or digit.
func Boring(s string) bool {
	if s == "" || len(s) > MaxRegion {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '.' || c == '_' || c == '-' || c == ' '):
		default:
			return false
		}
	}
	return s[len(s)-1] != ' '
}

// Region makes a region boring: a Boring one is kept; otherwise a country code is
// taken from free text where it can be (Location), else "". raw is what was there
// when the region changed (cleaned, for attrs), "" when it did not.
func Region(s string) (region, raw string) {
	if s == "" || Boring(s) {
		return s, ""
	}
	return Location(s), Clean(s, MaxText)
}

// Location maps a marketplace's free-text location to an ISO-3166 style country code
// where it can: the two letters that start the text after its last comma ("Texas, US"
// → "US", "Sweden, SE" → "SE", "Texas, US\') OR 1=1 --" → "US"), or the whole text when
// it is two letters ("de" → "DE"). Anything else gives "".
func Location(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, ','); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	n := 0
	for n < len(s) && letter(s[n]) {
		n++
	}
	if n != 2 {
		return ""
	}
	return strings.ToUpper(s[:2])
}

func letter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Slack escapes s for Slack's mrkdwn: &, < and > as entities (so no <!channel>,
// <!here>, <@user> or <url|text> can come from data), and every line break or
// control shown as a space or removed, so a value cannot forge a line of its own.
func Slack(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(Clean(s, 0))
}

// SlackURL makes u the target of a Slack link (<u|text>): every byte that is a
// control, a space, not ASCII, or one of < > | (which would end the link) is
// percent-encoded, so the link holds one URL and the text is gpuprice's.
func SlackURL(u string) string {
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		c := u[i]
		if c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == '|' {
			b.WriteString(fmt.Sprintf("%%%02X", c))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// markdown escapes what Markdown and the HTML it may contain give a meaning to.
var markdown = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;",
	`\`, `\\`, "|", `\|`, "`", "\\`", "[", `\[`, "]", `\]`,
)

// Markdown escapes s for a Markdown table cell or paragraph: HTML (<, >, &, ") as
// entities, Markdown's link, code and table characters with a backslash,
// and line breaks as spaces, so a value is text and one cell.
func Markdown(s string) string {
	c := Clean(s, 0)
	if strings.IndexFunc(c, func(r rune) bool { return strings.ContainsRune("&<>\"\\|`[]", r) }) < 0 {
		return c
	}
	return markdown.Replace(c)
}

var markdownText = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`)

// MarkdownText escapes s for a Markdown paragraph, heading or list item that
// gpuprice wrote around data: HTML as entities, no link from [ ], one line. Code
// spans (`gpuprice prices`) are kept; table cells take Markdown.
func MarkdownText(s string) string {
	return markdownText.Replace(Clean(s, 0))
}

// CSV makes a cell safe to open in a spreadsheet, as OWASP's CSV injection guidance
// says: a cell starting with =, +, -, @, a tab or a carriage return is prefixed with
// a single quote, so it is shown as text, not run as a formula. A number (-3.5,
// +1e3) is left as it is: it is a number, not a formula, and numeric columns stay
// numeric.
func CSV(s string) string {
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && s[0] != '=' && s[0] != '@' {
		return s
	}
	return "'" + s
}

// Terminal shows s safely in a terminal table: printable text as it is, everything
// else (ESC and other controls, newlines, tabs, bidi and invisible characters,
// invalid UTF-8) as a Go escape (\x1b, \n, \u202e), so no sequence reaches the
// terminal and a value stays one cell of one row.
func Terminal(s string) string {
	ok := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) || bidi(r) {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w <= 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case unicode.IsPrint(r) && !bidi(r):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += w
	}
	return b.String()
}

// Other is the label value PromLabel folds an unknown or hostile value into.
const Other = "other"

// PromLabel bounds a Prometheus label value: a Boring value is kept, anything else
// becomes Other, so a host's free text cannot create series of its own.
func PromLabel(s string) string {
	if s == "" || Boring(s) {
		return s
	}
	return Other
}

// CSVRecord is rec with every cell passed through CSV (a new slice; rec is kept).
func CSVRecord(rec []string) []string {
	out := make([]string, len(rec))
	for i, c := range rec {
		out[i] = CSV(c)
	}
	return out
}

// UnCSV undoes CSV: a cell of a file gpuprice wrote ('=…, '+…, '-…, '@…) reads back
// as the value it held, so that export → import loses nothing.
func UnCSV(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@\t\r", rune(s[1])) {
		return s[1:]
	}
	return s
}

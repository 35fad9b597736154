package query

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpuprice/gpuprice/schemas"
)

// ParamError is a parameter (a CLI flag, an API query parameter: the same names)
// that is missing, unknown or does not parse, with the nearest valid names when
// there are some.
type ParamError struct {
	Param       string   `json:"parameter"`
	Msg         string   `json:"error"`
	Suggestions []string `json:"did_you_mean,omitempty"`
}

func (e *ParamError) Error() string { return e.Param + " " + e.Msg }

// FlagError rewrites a ParamError as a command-line error (--name …; it still
// unwraps to the ParamError, which the CLI's exit status reads as a usage error);
// other errors pass unchanged.
func FlagError(err error) error {
	var pe *ParamError
	if errors.As(err, &pe) {
		return flagError{pe}
	}
	return err
}

type flagError struct{ pe *ParamError }

func (e flagError) Error() string { return "--" + e.pe.Param + " " + e.pe.Msg }
func (e flagError) Unwrap() error { return e.pe }

// Caps bounds what one request may ask for. The HTTP API uses APICaps; the command
// line NoCaps (a person at a terminal may ask for ten years).
type Caps struct {
	MaxWindow time.Duration // longest window (since, window); 0: no bound
	MaxRows   int           // largest limit, and the limit when none is given; 0: no bound
	API       bool          // limit 0 ("all") is refused
}

// APICaps are the HTTP API's bounds.
var APICaps = Caps{MaxWindow: 3 * 366 * 24 * time.Hour, MaxRows: 50000, API: true}

// NoCaps are the command line's.
var NoCaps = Caps{}

// params reads url.Values as the CLI's flags read the command line: each known
// name once, defaults for the absent ones, and an error naming the first parameter
// that is unknown, repeated or wrong.
type params struct {
	v    url.Values
	caps Caps
	seen map[string]bool
	err  error
}

func newParams(v url.Values, caps Caps) *params {
	p := &params{v: v, caps: caps, seen: map[string]bool{}}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !utf8.ValidString(k) {
			p.fail(strconv.QuoteToASCII(k), "is not valid UTF-8")
			break
		}
		for _, x := range v[k] {
			if !utf8.ValidString(x) {
				p.fail(k, "is not valid UTF-8")
				break
			}
		}
	}
	return p
}

func (p *params) fail(name, format string, a ...any) {
	if p.err == nil {
		p.err = &ParamError{Param: name, Msg: fmt.Sprintf(format, a...)}
	}
}

// str returns the parameter's value ("" when absent); a repeated one is an error.
func (p *params) str(name string) string {
	p.seen[name] = true
	vs := p.v[name]
	if len(vs) > 1 {
		p.fail(name, "is given %d times; give it once", len(vs))
	}
	if len(vs) == 0 {
		return ""
	}
	return strings.TrimSpace(vs[0])
}

func (p *params) has(name string) bool { _, ok := p.v[name]; return ok }

// span reads a length of time ("90d", "12h", "30m" or Go duration text), def when
// absent; it must be positive and within the caps.
func (p *params) span(name, def string) time.Duration {
	s := p.str(name)
	if s == "" {
		s = def
	}
	d, err := ParseSpan(s)
	if t, ok := parseDate(s); err != nil && ok && name == "since" {
		// --since a date or time: the span from it to --at or --until (default now).
		at := time.Now().UTC()
		if a, ok := parseDate(p.str("at")); ok {
			at = a
		} else if u, err := ParseUntil(p.str("until")); err == nil {
			at = u
		}
		if d, err = at.Sub(t), nil; d <= 0 {
			err = errors.New("is not before --at (or now)")
		}
	}
	if err != nil && name == "since" {
		err = fmt.Errorf("%v, or a date (2026-01-31)", err)
	}
	if err != nil {
		p.fail(name, "%q: %v", s, err)
		return 0
	}
	if p.caps.MaxWindow > 0 && d > p.caps.MaxWindow {
		p.fail(name, "%q: longer than the %s this server allows", s, FormatSpan(p.caps.MaxWindow))
	}
	return d
}

// parseDate reads a date (2026-01-31, UTC midnight) or an RFC 3339 time.
func parseDate(s string) (time.Time, bool) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// ParseSpan reads a length of time: "2w", "90d", "12h", "30m" or any
// time.ParseDuration text; it must be positive.
func ParseSpan(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "w"); ok {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v > 1e4 {
			return 0, errors.New("not a number of weeks")
		}
		d = time.Duration(v * float64(7*24*time.Hour))
	} else if n, ok := strings.CutSuffix(s, "d"); ok {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v > 1e5 {
			return 0, errors.New("not a number of days")
		}
		d = time.Duration(v * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, errors.New("use a length of time such as 2w, 7d, 36h, 30m or 1h30m")
		}
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return d, nil
}

// FormatSpan writes a span the way ParseSpan reads it: whole days as "90d".
func FormatSpan(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// at reads the end of a window: RFC 3339 or a date; absent means now (to the second).
// The end named "at" may be given as "until" instead, which also takes a span back
// from now (2w: two weeks ago), as --since does (ParseUntil).
func (p *params) at(name string) time.Time {
	s := p.str(name)
	if name == "at" {
		if u := p.str("until"); u != "" {
			if s != "" {
				p.fail("until", "and at both end the window: give one")
			}
			t, err := ParseUntil(u)
			if err != nil {
				p.fail("until", "%q: %v", u, err)
			}
			return t
		}
	}
	t, err := ParseAt(s)
	if err != nil {
		p.fail(name, "%q: use RFC 3339 (2025-03-01T12:00:00Z) or a date (2025-03-01)", s)
	}
	return t
}

// ParseUntil reads the end of a span as --until takes it: a length of time back from
// now (2w, 90d, 36h: ParseSpan), a date (2026-01-31, UTC midnight) or an RFC 3339
// time; "" means now (to the second).
func ParseUntil(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	if t, ok := parseDate(s); ok {
		return t, nil
	}
	d, err := ParseSpan(s)
	if err != nil {
		return time.Time{}, errors.New("use a span back from now (2w, 90d, 36h), a date (2026-01-31) or an RFC 3339 time")
	}
	return time.Now().UTC().Add(-d).Truncate(time.Second), nil
}

// ParseSince reads the start of a span as --since takes it: a length of time back
// from end (2w, 90d), a date or an RFC 3339 time; "" means no start (zero time).
func ParseSince(s string, end time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, ok := parseDate(s); ok {
		return t, nil
	}
	d, err := ParseSpan(s)
	if err != nil {
		return time.Time{}, errors.New("use a span back from now (2w, 90d, 36h), a date (2026-01-31) or an RFC 3339 time")
	}
	return end.Add(-d), nil
}

// ParseAt reads the end of a window (RFC 3339 or a date); "" means now.
func ParseAt(s string) (time.Time, error) {
	if s == "" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("not a time")
}

// enum reads one of allowed, def when absent.
func (p *params) enum(name, def string, allowed ...string) string {
	s := p.str(name)
	if s == "" {
		return def
	}
	for _, a := range allowed {
		if strings.EqualFold(s, a) {
			return a
		}
	}
	p.fail(name, "%q: use %s", s, strings.Join(allowed, ", "))
	return def
}

// integer reads an integer in [lo, hi], def when absent.
func (p *params) integer(name string, def, lo, hi int) int {
	s := p.str(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		p.fail(name, "%q: an integer from %d to %d", s, lo, hi)
		return def
	}
	return n
}

// limit reads a row limit: on the command line 0 (the default) means all; over the
// API it is 1…MaxRows and defaults to MaxRows.
func (p *params) limit(name string) int {
	if p.caps.API {
		return p.integer(name, p.caps.MaxRows, 1, p.caps.MaxRows)
	}
	return p.integer(name, 0, 0, math.MaxInt32)
}

// number reads a finite number in [lo, hi], def when absent.
func (p *params) number(name string, def, lo, hi float64) float64 {
	s := p.str(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
		p.fail(name, "%q: a number from %g to %g", s, lo, hi)
		return def
	}
	return v
}

// boolean reads true/false (1/0); absent is false.
func (p *params) boolean(name string) bool {
	s := p.str(name)
	if s == "" {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		p.fail(name, "%q: use true or false", s)
	}
	return b
}

// done reports the first parameter nobody asked for (a misspelt name explains a
// "required" error that follows from it), else the first error; extra names
// (format, the API's) are accepted.
func (p *params) done(extra ...string) error {
	for _, e := range extra {
		p.seen[e] = true
	}
	var unknown []string
	for k := range p.v {
		if !p.seen[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		var known []string
		for k := range p.seen {
			known = append(known, k)
		}
		sort.Strings(known)
		return &ParamError{Param: unknown[0], Msg: "is not a parameter of this request (known: " + strings.Join(known,
			", ") + ")",
			Suggestions: schemas.Near(unknown[0], known)}
	}
	return p.err
}

// vals builds url.Values from name/value pairs, leaving out empty values.
func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			v.Set(kv[i], kv[i+1])
		}
	}
	return v
}

package schemas

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrNumber is returned for a text that is not a number ParseNumber accepts.
var ErrNumber = errors.New("not a number")

// ParseNumber reads a decimal number written with optional thousands separators and
// either a decimal point or a decimal comma: "4,096" → 4096, "1,234.56" → 1234.56,
// "1.234,56" → 1234.56, "3,90" → 3.9, "1 234,5" → 1234.5, "12'345.50" → 12345.5.
// A single separator followed by exactly three digits is a thousands separator
// ("4,096", "4.096" is read as 4096 only when the page writes decimals with commas
// elsewhere, which this function cannot know, so "4.096" stays 4.096). Anything else
// (two decimal marks, letters, an empty string) is an ErrNumber error, never a
// silent zero. A leading minus sign and a leading currency symbol ($ € £ ¥) are
// allowed: "-1" → -1 (for the gates to judge), "€2,49" → 2.49.
func ParseNumber(s string) (float64, error) {
	t := strings.TrimSpace(s)
	neg := false
	if r, ok := strings.CutPrefix(t, "-"); ok {
		neg, t = true, strings.TrimSpace(r)
	}
	t = strings.TrimLeft(t, "$€£¥")
	t = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\u00a0', '\u202f', '\'', '’':
			return -1
		}
		return r
	}, t)
	if t == "" {
		return 0, fmt.Errorf("%w: %q", ErrNumber, s)
	}
	for _, r := range t {
		if (r < '0' || r > '9') && r != ',' && r != '.' {
			return 0, fmt.Errorf("%w: %q", ErrNumber, s)
		}
	}
	lastComma, lastDot := strings.LastIndexByte(t, ','), strings.LastIndexByte(t, '.')
	var intPart, frac string
	switch {
	case lastComma >= 0 && lastDot >= 0:
		// Both marks: the later one is the decimal mark, the other groups thousands.
		dec, grp := byte('.'), ","
		if lastComma > lastDot {
			dec, grp = ',', "."
		}
		i := strings.LastIndexByte(t, dec)
		intPart, frac = t[:i], t[i+1:]
		if strings.ContainsAny(frac, ",.") || !groupedOK(intPart, grp) {
			return 0, fmt.Errorf("%w: %q", ErrNumber, s)
		}
		intPart = strings.ReplaceAll(intPart, grp, "")
	case lastComma >= 0:
		parts := strings.Split(t, ",")
		if len(parts) == 2 && len(parts[1]) != 3 {
			intPart, frac = parts[0], parts[1] // decimal comma: "3,90"
		} else if groupedOK(t, ",") {
			intPart = strings.ReplaceAll(t, ",", "")
		} else {
			return 0, fmt.Errorf("%w: %q", ErrNumber, s)
		}
	case lastDot >= 0:
		parts := strings.Split(t, ".")
		if len(parts) == 2 {
			intPart, frac = parts[0], parts[1]
		} else if groupedOK(t, ".") {
			intPart = strings.ReplaceAll(t, ".", "")
		} else {
			return 0, fmt.Errorf("%w: %q", ErrNumber, s)
		}
	default:
		intPart = t
	}
	if intPart == "" && frac == "" {
		return 0, fmt.Errorf("%w: %q", ErrNumber, s)
	}
	if intPart == "" {
		intPart = "0"
	}
	num := intPart
	if frac != "" {
		num += "." + frac
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q", ErrNumber, s)
	}
	if neg {
		v = -v
	}
	return v, nil
}

// groupedOK reports whether s is digits in groups of three after the first group
// (1 to 3 digits), separated by sep.
func groupedOK(s, sep string) bool {
	groups := strings.Split(s, sep)
	if len(groups[0]) == 0 || len(groups[0]) > 3 {
		return len(groups) == 1 && len(groups[0]) > 0
	}
	for _, g := range groups[1:] {
		if len(g) != 3 {
			return false
		}
	}
	return true
}

// FormatNum prints a number a source computed for an attribute with at most 9
// decimals and no trailing zeros, so that binary noise never reaches a stored
// attribute or an output: 0.0016666666666666666 → "0.001666667", 1.5 → "1.5".
func FormatNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r := Round9(v)
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

package analytics

import (
	"math"
	"strconv"
)

// Round rounds v to digits decimals, so that binary noise (0.42000000000000004)
// never reaches an output; NaN and infinities pass through.
func Round(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(digits))
	r := math.Round(v*p) / p
	if r == 0 {
		return 0 // no "-0"
	}
	return r
}

// FormatNumber prints v with at most digits decimals and no trailing zeros:
// 0.42000000000000004 → "0.42", 989.4 → "989.4", 2 → "2".
func FormatNumber(v float64, digits int) string {
	return strconv.FormatFloat(Round(v, digits), 'f', -1, 64)
}

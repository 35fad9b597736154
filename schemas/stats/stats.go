// Package stats holds the order statistics every layer computes the same way: the
// type-7 percentile and the median. The ingest gates and the analytics both use
// them, so a median is one definition whether it judges a row or reports a price.
package stats

import (
	"math"
	"slices"
)

// Percentile returns the p-th quantile (0 ≤ p ≤ 1) of xs by linear interpolation
// between closest ranks (Hyndman–Fan type 7, the default of R and NumPy): with xs
// sorted and h = (n−1)·p, x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). It returns NaN for
// no values. xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	return PercentileSorted(s, p)
}

// PercentileSorted is Percentile of s, which is sorted already.
func PercentileSorted(s []float64, p float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	h := float64(len(s)-1) * p
	l := int(math.Floor(h))
	if l >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[l] + (h-float64(l))*(s[l+1]-s[l])
}

// Median is Percentile(xs, 0.5): the middle value, or the mean of the two middle
// ones. xs is not modified.
func Median(xs []float64) float64 { return Percentile(xs, 0.5) }

// MedianInPlace is Median(xs), sorting xs.
func MedianInPlace(xs []float64) float64 {
	slices.Sort(xs)
	return PercentileSorted(xs, 0.5)
}

// Package analytics turns bars and observations into the figures gpuprice reports:
// spot volatility, effective $ per 1B training tokens, tier spreads, negotiation
// history and the daily reference index. Every function here is pure: the stores
// provide bars (store.Rollups), this package does the arithmetic, so that one
// definition serves both backends. The definitions are written out in
// docs/analytics.md.
package analytics

import (
	"math"

	"github.com/gpuprice/gpuprice/schemas/stats"
)

// Percentile returns the p-th quantile (0 ≤ p ≤ 1) of xs, type 7 (stats.Percentile:
// the definition the ingest gates share). It returns NaN for no values.
func Percentile(xs []float64, p float64) float64 { return stats.Percentile(xs, p) }

// medianInPlace is Median(xs), sorting xs.
func medianInPlace(xs []float64) float64 { return stats.MedianInPlace(xs) }

func percentileSorted(s []float64, p float64) float64 { return stats.PercentileSorted(s, p) }

// Median is Percentile(xs, 0.5).
func Median(xs []float64) float64 { return stats.Median(xs) }

// Mean returns the arithmetic mean, NaN for no values.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// SampleStd returns the sample standard deviation (divisor n−1), NaN for fewer
// than two values.
func SampleStd(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// TrimSD is the cut of TrimmedMedian, in sample standard deviations.
const TrimSD = 2.5

// TrimmedMedian drops the values farther than TrimSD sample standard deviations
// from the mean (only with three or more values and a positive deviation), then
// returns the median of the rest and how many were dropped.
func TrimmedMedian(xs []float64) (float64, int) {
	if len(xs) < 3 {
		return Median(xs), 0
	}
	m, sd := Mean(xs), SampleStd(xs)
	if !(sd > 0) {
		return Median(xs), 0
	}
	kept := make([]float64, 0, len(xs))
	for _, x := range xs {
		if math.Abs(x-m) <= TrimSD*sd {
			kept = append(kept, x)
		}
	}
	return Median(kept), len(xs) - len(kept)
}

// OLSSlope returns the least-squares slope of ys against xs, NaN when xs has no
// spread.
func OLSSlope(xs, ys []float64) float64 {
	if len(xs) != len(ys) || len(xs) < 2 {
		return math.NaN()
	}
	mx, my := Mean(xs), Mean(ys)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// finite returns x, or 0 when x is NaN or infinite, for JSON output (which has no
// NaN); the figures that can be undefined say so with a count next to them.
// Opt returns a pointer to x, or nil when x is NaN or infinite: a figure that is
// undefined (no values, one day, a tier without a price) is JSON null, "-" in tables
// and empty in CSV, never 0.
func Opt(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

package store

import (
	"context"
	"math"
	"time"
)

// SeriesVolatility is the volatility of one series over a window, from its bars
// (analytics.SeriesVolatility; the definitions are in docs/analytics.md).
type SeriesVolatility struct {
	Provider string `json:"provider"`
	SKU      string `json:"sku"`
	Region   string `json:"region"`
	Zone     string `json:"zone"`
	Pricing  string `json:"pricing"`
	GPU      string `json:"gpu"`
	Tier     string `json:"tier"`

	Bars    int `json:"bars"`    // non-empty bars in the window
	Returns int `json:"returns"` // log returns between consecutive non-empty bars: Bars−1

	// StdLogReturn is the sample standard deviation (n−1) of ln(close_i/close_{i−1})
	// over consecutive non-empty bars; 0 when Returns < 2.
	StdLogReturn float64 `json:"std_log_return"`
	// Annualised is StdLogReturn × √(bars in 365 days of the bar width).
	Annualised float64 `json:"annualised"`
	// CV is the sample standard deviation of the closes over their mean.
	CV float64 `json:"cv"`
	// Range is max(high)/min(low) − 1 over the window's bars.
	Range float64 `json:"range"`
	// MaxDrawdown is the largest fall of a close from the highest close before it,
	// as a fraction of that high: max_i (1 − close_i / max_{j≤i} close_j).
	MaxDrawdown float64 `json:"max_drawdown"`
	// Changes counts the bars whose close differs from the previous bar's close.
	Changes int `json:"changes"`
	// ShareBelow is the share of time, from the first bar's start to the window's
	// end in steps of the bar width, whose price in force (the last close at or
	// before the step) is below the threshold; nil (null) when no threshold was given.
	ShareBelow *float64 `json:"share_below"`

	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"` // of the closes
	Close float64 `json:"close"`
}

// Key is the series key, as Bar.SeriesKey.
func (v SeriesVolatility) Key() string {
	return v.Provider + "|" + v.SKU + "|" + v.Region + "|" + v.Zone + "|" + v.Pricing
}

// VolatilityStats is the optional ability of a store to compute the volatility of
// every series where its bars are, returning only the figures (ClickHouse does).
//
// Volatilities returns, ordered by series, what analytics.Volatilities computes
// from the bars q selects (q.CarryIn is ignored) with the same end and below.
type VolatilityStats interface {
	Volatilities(ctx context.Context, q BarQuery, end time.Time, below float64) ([]SeriesVolatility, error)
}

// Finite returns x, or 0 when x is NaN or infinite (as analytics reports figures
// that are undefined).
func Finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// AnnualFactor is √(bars of width w in 365 days): Annualised = StdLogReturn × it.
func AnnualFactor(w time.Duration) float64 {
	return math.Sqrt(float64(365*24*time.Hour) / float64(w))
}

// VolatilitySums is what a series' bars of a window fold into, from which its
// figures follow (Set): a store that keeps per-day summaries combines them into
// these sums without reading the bars (ClickHouse in Go, DuckDB in SQL), and both
// finish the same way.
type VolatilitySums struct {
	Bars, Returns, Changes int
	// The smallest and largest log return (when Returns > 0) and Σ (r − mean)².
	RetMin, RetMax, RetSS float64
	// The smallest and largest close, their mean and Σ (close − mean)².
	CloseMin, CloseMax, CloseMean, CloseSS float64
	// The largest drawdown, and the hours below the threshold of the total hours.
	Drawdown     float64
	Under, Total uint64
}

// Set fills v's figures from the sums (v's Min and Max, from the bars' lows and
// highs, are already set), for bars of width w and threshold below (0: none). Sets
// of equal values (a flat series, equal returns) take the figures the sequential
// sums of analytics.Mean and SampleStd give them (SequentialMeanStd), so that a
// series that never moved reads exactly what it reads from its bars.
func (s VolatilitySums) Set(v *SeriesVolatility, w time.Duration, below float64) {
	v.Bars, v.Returns, v.Changes = s.Bars, s.Returns, s.Changes
	v.StdLogReturn = 0
	switch {
	case s.Returns < 2:
	case s.RetMin == s.RetMax:
		_, v.StdLogReturn = SequentialMeanStd(s.Returns, s.RetMin)
	default:
		v.StdLogReturn = math.Sqrt(math.Max(s.RetSS, 0) / float64(s.Returns-1))
	}
	v.StdLogReturn = Finite(v.StdLogReturn)
	v.Annualised = v.StdLogReturn * AnnualFactor(w)
	sd := math.NaN()
	if s.CloseMin == s.CloseMax {
		v.Mean, sd = SequentialMeanStd(s.Bars, s.CloseMin)
	} else {
		v.Mean, sd = s.CloseMean, math.Sqrt(math.Max(s.CloseSS, 0)/float64(s.Bars-1))
	}
	v.CV = Finite(sd / v.Mean)
	v.Range = 0
	if v.Min > 0 {
		v.Range = v.Max/v.Min - 1
	}
	v.MaxDrawdown = math.Max(s.Drawdown, 0)
	v.ShareBelow = nil
	if below > 0 {
		share := 0.0
		if s.Total > 0 {
			share = float64(s.Under) / float64(s.Total)
		}
		v.ShareBelow = &share
	}
}

// SequentialMeanStd returns the mean and sample standard deviation of n copies of
// x as analytics.Mean and analytics.SampleStd compute them (sequential sums: the
// mean of copies of 0.1 is not exactly 0.1, nor their deviation 0); the deviation
// is NaN for n < 2.
func SequentialMeanStd(n int, x float64) (mean, std float64) {
	var sum float64
	for range n {
		sum += x
	}
	mean = sum / float64(n)
	if n < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for range n {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(n-1))
}

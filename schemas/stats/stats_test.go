package stats

import (
	"math"
	"testing"
)

// Hand-computed type-7 quantiles: the ones R's quantile(x, type = 7) gives.
func TestPercentile(t *testing.T) {
	xs := []float64{4, 1, 3, 2} // sorted: 1 2 3 4
	for _, c := range []struct{ p, want float64 }{{0, 1}, {.1, 1.3}, {.5, 2.5}, {.9, 3.7}, {1, 4}} {
		if got := Percentile(xs, c.p); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if xs[0] != 4 {
		t.Errorf("Percentile sorted its argument: %v", xs)
	}
	if got := Median([]float64{5, 1, 3}); got != 3 {
		t.Errorf("Median of 5 1 3 = %v, want 3", got)
	}
	if got := MedianInPlace([]float64{2, 8}); got != 5 {
		t.Errorf("MedianInPlace of 2 8 = %v, want 5", got)
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
}

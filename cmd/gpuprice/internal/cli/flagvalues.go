package cli

import (
	"time"

	"github.com/gpuprice/gpuprice/analytics/query"
)

// parsedValue is a flag read by one of report's parsers, so that a kind of value is
// read the same way by every flag that takes it.
type parsedValue[T comparable] struct {
	p      *T
	parse  func(string) (T, error)
	format func(T) string
	kind   string
}

func (v parsedValue[T]) String() string {
	var zero T
	if v.p == nil || *v.p == zero {
		return ""
	}
	return v.format(*v.p)
}

func (v parsedValue[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

func (v parsedValue[T]) Type() string { return v.kind }

// spanFlag is a length of time in the one form every span flag takes
// (query.ParseSpan: 2w, 7d, 36h, 30m or Go duration text), so that --stale 1d reads
// like --window 7d.
func spanFlag(d *time.Duration) parsedValue[time.Duration] {
	return parsedValue[time.Duration]{d, query.ParseSpan, query.FormatSpan, "span"}
}

// countFlag is a count as people write one (query.ParseCount: 7B, 70e9, 1.5T), as
// report --model-params takes it.
func countFlag(n *float64) parsedValue[float64] {
	return parsedValue[float64]{n, query.ParseCount, query.FormatCount, "count"}
}

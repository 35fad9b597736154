package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// recordedSeries checks store.RecordedSeries (the backend's RecordedCounter, and the
// fallback over Each) by row: a recorded example loaded on 2025-03-01, a later live
// row in one of its series, a live-only series, and windows before, across and
// after the recorded rows.
func (s *suite) recordedSeries(t *testing.T) {
	st := s.fresh(t)
	day := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	rec := func(o schemas.Observation) schemas.Observation {
		o.Attrs = map[string]string{schemas.AttrOrigin: schemas.OriginRecorded}
		return o
	}
	write(t, st, []schemas.Observation{
		// lambda a: recorded on day 0, seen live on day 5 (a later collection).
		rec(h100("lambda", schemas.TierSpecialist, "a", day, day, 2.49)),
		h100("lambda", schemas.TierSpecialist, "a", day.AddDate(0, 0, 5), day.AddDate(0, 0, 5), 2.39),
		// lambda b and azure c: recorded only; vast d: live only.
		rec(h100("lambda", schemas.TierSpecialist, "b", day, day, 2.99)),
		rec(h100("azure", schemas.TierHyperscaler, "c", day, day, 6.98)),
		h100("vast", schemas.TierMarketplace, "d", day, day, 2.00),
	})
	for _, c := range []struct {
		name string
		f    store.Filter
		want map[string]int
	}{
		{"all", store.Filter{}, map[string]int{"lambda": 2, "azure": 1}},
		{"window over the recorded day", store.Filter{Since: day.Add(-time.Hour), Until: day.Add(time.Hour)},
			map[string]int{"lambda": 2, "azure": 1}},
		// Carried in: the newest row before the window is recorded for b and c, live for a.
		{"window after, carried in", store.Filter{Since: day.AddDate(0, 0, 6), Until: day.AddDate(0, 0, 9)},
			map[string]int{"lambda": 1, "azure": 1}},
		{"window before", store.Filter{Until: day.Add(-time.Hour)}, map[string]int{}},
		{"provider", store.Filter{Provider: "azure", Since: day.AddDate(0, 0, 6)}, map[string]int{"azure": 1}},
		{"tier", store.Filter{Tier: schemas.TierMarketplace}, map[string]int{}},
		{"gpu", store.Filter{GPU: "A100-SXM-80GB"}, map[string]int{}},
	} {
		got, err := store.RecordedSeries(ctx(t), st, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: RecordedSeries = %v, want %v", c.name, got, c.want)
		}
		// The fallback over Each gives the same answer.
		fb, err := store.RecordedSeries(ctx(t), eachOnly{st}, c.f)
		if err != nil {
			t.Fatalf("%s: fallback: %v", c.name, err)
		}
		if !reflect.DeepEqual(fb, c.want) {
			t.Errorf("%s: RecordedSeries over Each = %v, want %v", c.name, fb, c.want)
		}
	}
}

// eachOnly hides a store's optional abilities.
type eachOnly struct{ store.Store }

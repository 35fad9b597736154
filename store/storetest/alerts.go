package storetest

import (
	"reflect"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// alertEpisodes: episodes are upserted by (rule, subject, start), a resolution
// replaces the firing record, and the window selects the episodes that fired in it.
func (s *suite) alertEpisodes(t *testing.T) {
	st := s.fresh(t)
	h, ok := st.(store.AlertHistory)
	if !ok {
		t.Fatalf("%T keeps no alert history", st)
	}
	if got, err := h.AlertEpisodes(ctx(t), store.AlertQuery{}); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v %v", got, err)
	}
	at := func(h int) time.Time { return T0.Add(time.Duration(h) * time.Hour) }
	old := store.AlertEpisode{
		Rule:     "cheap-h100",
		Kind:     "price_below",
		Subject:  "H100-SXM-80GB on_demand",
		StartsAt: at(-48),
		EndsAt:   at(-40),
		Fired:    `{"value":1.5}`,
		Resolved: `{"value":2.5}`,
	}
	firing := store.AlertEpisode{
		Rule:     "cheap-h100",
		Kind:     "price_below",
		Subject:  "H100-SXM-80GB on_demand",
		StartsAt: at(-10),
		Fired:    `{"value":1.4,"summary":"it's \"cheap\"; 'quoted'"}`,
	}
	down := store.AlertEpisode{
		Rule:     "source-down",
		Kind:     "source_failed",
		Subject:  "crusoe",
		StartsAt: at(-5),
		Fired:    `{"value":1}`,
	}
	if err := h.PutAlertEpisodes(ctx(t), []store.AlertEpisode{old, firing, down}); err != nil {
		t.Fatal(err)
	}
	// crusoe recovers: the same episode, resolved.
	resolved := down
	resolved.EndsAt, resolved.Resolved = at(-2), `{"value":0}`
	if err := h.PutAlertEpisodes(ctx(t), []store.AlertEpisode{resolved}); err != nil {
		t.Fatal(err)
	}
	check := func(what string, q store.AlertQuery, want ...store.AlertEpisode) {
		t.Helper()
		got, err := h.AlertEpisodes(ctx(t), q)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
		}
	}
	check("all", store.AlertQuery{}, resolved, firing, old)
	check("open", store.AlertQuery{Open: true}, firing)
	check("the last day", store.AlertQuery{Since: at(-24), Until: at(0)}, resolved, firing)
	check("before crusoe failed", store.AlertQuery{Since: at(-24), Until: at(-6)}, firing)
	check("after crusoe recovered", store.AlertQuery{Since: at(-1), Until: at(0)}, firing)
	check("two days ago", store.AlertQuery{Since: at(-47), Until: at(-46)}, old)
	check("limit", store.AlertQuery{Limit: 1}, resolved)
}

package alert

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

// Episode is one time an alert instance fired, as the store keeps it: when it
// started and resolved, and the instance (series, prices and times compared,
// threshold, link) at both moments.
type Episode struct {
	Rule    string `json:"rule"`
	Kind    Kind   `json:"kind"`
	Subject string `json:"subject"`
	// State is "firing" or "resolved" as of the time asked about.
	State    string     `json:"state"`
	StartsAt time.Time  `json:"starts_at"`
	EndsAt   *time.Time `json:"ends_at"` // null while firing
	// Fired is the instance when it started firing; Resolved when it resolved
	// (null while firing).
	Fired    Instance  `json:"fired"`
	Resolved *Instance `json:"resolved"`
}

// Episode states.
const (
	EpisodeFiring   = "firing"
	EpisodeResolved = "resolved"
)

// RecordEpisodes brings the store's alert history in line with the state after a
// (not dry) evaluation at now: an entry firing with no open episode starts one; an
// open episode whose entry no longer fires (resolved, or its rule removed) ends at
// now, with the instance rep reports as resolved. Running it again changes
// nothing, so a write that failed is made good by the next evaluation.
func RecordEpisodes(ctx context.Context, h store.AlertHistory, st *State, rep Report, now time.Time) error {
	open, err := h.AlertEpisodes(ctx, store.AlertQuery{Open: true})
	if err != nil {
		return fmt.Errorf("alert: history: %w", err)
	}
	key := func(rule, subject string, start time.Time) string {
		return rule + "/" + subject + "@" + start.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	firing := map[string]*Entry{}
	for _, e := range st.Alerts {
		if e.EndsAt.IsZero() && e.Firing {
			firing[key(e.Rule, e.Subject, e.StartsAt)] = e
		}
	}
	resolved := map[string]Instance{}
	for _, r := range rep.Rules {
		for _, in := range r.Instances {
			if in.State == Resolved {
				resolved[in.Key()] = in.Instance
			}
		}
	}
	var put []store.AlertEpisode
	stored := map[string]bool{}
	for _, ep := range open {
		k := key(ep.Rule, ep.Subject, ep.StartsAt)
		stored[k] = true
		if firing[k] != nil {
			continue
		}
		in, ok := resolved[ep.Rule+"/"+ep.Subject]
		if !ok {
			in = Instance{Rule: ep.Rule, Kind: Kind(ep.Kind), Subject: ep.Subject,
				Summary: ep.Subject + ": no longer evaluated (the rule was removed or renamed)"}
		}
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("alert: history: %w", err)
		}
		ep.EndsAt, ep.Resolved = now, string(b)
		put = append(put, ep)
	}
	for k, e := range firing {
		if stored[k] {
			continue
		}
		b, err := json.Marshal(e.Instance)
		if err != nil {
			return fmt.Errorf("alert: history: %w", err)
		}
		put = append(put, store.AlertEpisode{Rule: e.Rule, Kind: string(e.Kind), Subject: e.Subject, StartsAt: e.StartsAt,
			Fired: string(b)})
	}
	if err := h.PutAlertEpisodes(ctx, put); err != nil {
		return fmt.Errorf("alert: history: %w", err)
	}
	return nil
}

// RecentEpisodes returns the episodes that fired at some time in (at − window,
// at], newest start first (at most limit), as of at: an episode that resolved
// after at is still firing then.
func RecentEpisodes(ctx context.Context, h store.AlertHistory, at time.Time, window time.Duration,
	limit int) ([]Episode, error) {
	eps, err := h.AlertEpisodes(ctx, store.AlertQuery{Since: at.Add(-window), Until: at, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("alert: history: %w", err)
	}
	out := make([]Episode, 0, len(eps))
	for _, e := range eps {
		ep := Episode{Rule: e.Rule, Kind: Kind(e.Kind), Subject: e.Subject, State: EpisodeFiring, StartsAt: e.StartsAt.UTC()}
		if err := json.Unmarshal([]byte(e.Fired), &ep.Fired); err != nil {
			return nil, fmt.Errorf("alert: history: %s/%s: %w", e.Rule, e.Subject, err)
		}
		if !e.EndsAt.IsZero() && !e.EndsAt.After(at) {
			end := e.EndsAt.UTC()
			ep.State, ep.EndsAt = EpisodeResolved, &end
			if e.Resolved != "" {
				var in Instance
				if err := json.Unmarshal([]byte(e.Resolved), &in); err != nil {
					return nil, fmt.Errorf("alert: history: %s/%s: %w", e.Rule, e.Subject, err)
				}
				ep.Resolved = &in
			}
		}
		out = append(out, ep)
	}
	return out, nil
}

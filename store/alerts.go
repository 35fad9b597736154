package store

import (
	"context"
	"time"
)

// AlertEpisode is one time an alert instance fired: from StartsAt until EndsAt
// (zero while it still fires). Fired and Resolved are the instance (rule, subject,
// series, the prices and times compared, threshold, link) as JSON when it started
// firing and when it resolved ("" while firing). Identity: (Rule, Subject,
// StartsAt); the last write wins.
type AlertEpisode struct {
	Rule     string
	Kind     string
	Subject  string
	StartsAt time.Time
	EndsAt   time.Time
	Fired    string
	Resolved string
}

// AlertQuery selects alert episodes.
type AlertQuery struct {
	// Since and Until: the episodes that fired at some time in [Since, Until]:
	// started at or before Until and not resolved before Since. Zero Since: every
	// episode started by Until; zero Until: no bound.
	Since, Until time.Time
	// Open keeps only the episodes still firing (EndsAt zero), whenever they started.
	Open bool
	// Limit bounds the episodes returned (newest start first); 0: no bound.
	Limit int
}

// AlertHistory is the optional ability of a store to keep alert episodes: every
// start and resolution of an alert instance, with its figures, so that the API
// and the web app can list recently resolved alerts as well as firing ones. Both
// stores have it.
type AlertHistory interface {
	// PutAlertEpisodes writes episodes; an episode already stored (same rule,
	// subject and start) is replaced.
	PutAlertEpisodes(ctx context.Context, eps []AlertEpisode) error
	// AlertEpisodes returns the episodes q selects, newest start first (ties by
	// rule, subject).
	AlertEpisodes(ctx context.Context, q AlertQuery) ([]AlertEpisode, error)
}

package alert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// StateVersion is the version of the state file's format.
const StateVersion = 1

// Entry is the remembered state of one alert instance: firing, or resolved and
// not yet delivered to every notifier.
type Entry struct {
	Instance
	// StartsAt is when the instance started firing; EndsAt when it resolved (zero
	// while firing).
	StartsAt time.Time `json:"starts_at"`
	EndsAt   time.Time `json:"ends_at,omitzero"`
	// Notified holds, per notifier, when it was last told of the current state
	// (firing, or resolved); a notifier missing here has not been told yet.
	Notified map[string]time.Time `json:"notified"`
	// Errors holds, per notifier, the last delivery error (sent again next time).
	Errors map[string]string `json:"errors,omitempty"`
}

// State is what the alerts remember between evaluations: one entry per instance
// that fires, or that resolved and is still to be delivered. `gpuprice alerts`
// and `serve` keep it in one JSON file (LoadState, Save).
type State struct {
	Version int               `json:"version"`
	Alerts  map[string]*Entry `json:"alerts"`
}

// NewState returns an empty state.
func NewState() *State { return &State{Version: StateVersion, Alerts: map[string]*Entry{}} }

// LoadState reads the state file; a missing file is an empty state.
func LoadState(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewState(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("alert: state: %w", err)
	}
	s := NewState()
	if err := json.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("alert: state %s: %w", path, err)
	}
	if s.Version != StateVersion {
		return nil, fmt.Errorf("alert: state %s: version %d, want %d", path, s.Version, StateVersion)
	}
	if s.Alerts == nil {
		s.Alerts = map[string]*Entry{}
	}
	for _, e := range s.Alerts {
		if e.Notified == nil {
			e.Notified = map[string]time.Time{}
		}
	}
	return s, nil
}

// Save writes the state atomically: a temporary file in the same directory,
// synced, then renamed over path.
func (s *State) Save(path string) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("alert: state: %w", err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("alert: state: %w", err)
	}
	f, err := os.CreateTemp(dir, ".alerts-state-*.json")
	if err != nil {
		return fmt.Errorf("alert: state: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("alert: state: %w", err)
	}
	return nil
}

// Transition is how an instance's state changed at an evaluation.
type Transition string

// Transitions.
const (
	Started  Transition = "started"  // began firing
	Firing   Transition = "firing"   // was firing and still is
	Resolved Transition = "resolved" // stopped firing
	OK       Transition = "ok"       // not firing, was not firing
)

// Step applies an evaluation at now to the state: an instance that fires and had
// no firing entry starts one; an entry whose instance no longer fires (or is no
// longer found by its rule) resolves; a rule that failed to evaluate leaves its
// entries as they were; entries of rules no longer configured are dropped. It
// returns each instance's transition, by key.
func (s *State) Step(results []Result, now time.Time) map[string]Transition {
	out := map[string]Transition{}
	rules := map[string]bool{}
	failed := map[string]bool{}
	seen := map[string]bool{}
	for _, res := range results {
		rules[res.Rule.Name] = true
		if res.Err != nil {
			failed[res.Rule.Name] = true
			continue
		}
		for _, in := range res.Instances {
			k := in.Key()
			seen[k] = true
			e := s.Alerts[k]
			switch {
			case in.Firing && (e == nil || !e.EndsAt.IsZero()):
				s.Alerts[k] = &Entry{Instance: in, StartsAt: now, Notified: map[string]time.Time{}}
				out[k] = Started
			case in.Firing:
				e.Instance = in
				out[k] = Firing
			case e != nil && e.EndsAt.IsZero():
				e.Instance, e.EndsAt = in, now
				e.Notified, e.Errors = map[string]time.Time{}, nil
				out[k] = Resolved
			default:
				out[k] = OK
			}
		}
	}
	for k, e := range s.Alerts {
		switch {
		case !rules[e.Rule]:
			delete(s.Alerts, k)
		case seen[k] || failed[e.Rule] || !e.EndsAt.IsZero():
		default: // the rule no longer finds the subject: the condition no longer holds
			e.Firing, e.EndsAt = false, now
			e.Summary = e.Subject + ": no longer found by the rule (no current data)"
			e.Notified, e.Errors = map[string]time.Time{}, nil
			out[k] = Resolved
		}
	}
	return out
}

// Keys returns the state's keys, sorted.
func (s *State) Keys() []string {
	ks := make([]string, 0, len(s.Alerts))
	for k := range s.Alerts {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

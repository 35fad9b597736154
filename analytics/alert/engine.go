package alert

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"time"
)

// Engine evaluates rules and delivers the changes to its targets.
type Engine struct {
	Rules   []Rule
	Targets []Target
	// RepeatInterval sends a firing alert again after this long (0: never); a
	// rule's own RepeatInterval wins.
	RepeatInterval time.Duration
	// Sources are the sources source_failed rules watch when they name none.
	Sources []string
	// Log receives delivery failures (nil: not logged; they are in the Report).
	Log *slog.Logger
	// Redact, when set, masks secrets in every text evaluation produces (summaries,
	// errors) before it is sent, stored or reported.
	Redact func(string) string
	// PublicURL is where the web app is served (serve.public_url, e.g.
	// https://gpuprice.example.com): each instance links to its series' view
	// there (ViewURL). Empty: no links.
	PublicURL string
}

// InstanceReport is one instance of a Report.
type InstanceReport struct {
	Instance
	// State is the instance's transition at this evaluation (started, firing,
	// resolved, ok).
	State    Transition `json:"state"`
	StartsAt time.Time  `json:"starts_at,omitzero"`
}

// RuleReport is one rule of a Report.
type RuleReport struct {
	Rule      string           `json:"rule"`
	Kind      Kind             `json:"kind"`
	Error     string           `json:"error,omitempty"`
	Instances []InstanceReport `json:"instances"`
}

// Delivery is what one notifier was sent (or, dry, would have been sent).
type Delivery struct {
	Notifier string       `json:"notifier"`
	Kind     NotifierKind `json:"kind"`
	Firing   int          `json:"firing"`
	Resolved int          `json:"resolved"`
	Events   []Event      `json:"events"`
	Sent     bool         `json:"sent"`
	Error    string       `json:"error,omitempty"`
}

// Report is the outcome of Engine.Run.
type Report struct {
	At         time.Time    `json:"at"`
	DryRun     bool         `json:"dry_run"`
	Rules      []RuleReport `json:"rules"`
	Deliveries []Delivery   `json:"deliveries"`
	// Recent are the alert episodes of the window before At kept in the store
	// (firing, and recently resolved), newest first; filled by the readers that
	// have a store (RecentEpisodes), empty otherwise.
	Recent []Episode `json:"recent"`
}

// Failed reports whether a rule could not be evaluated or a delivery failed.
func (r Report) Failed() bool {
	for _, x := range r.Rules {
		if x.Error != "" {
			return true
		}
	}
	for _, d := range r.Deliveries {
		if d.Error != "" {
			return true
		}
	}
	return false
}

// Run evaluates every rule at now, steps the state and tells each target what is
// new for it: alerts that started firing, alerts that resolved, firing alerts due
// again (repeat interval, Alertmanager refresh) and anything a failed delivery
// left untold. One failing target does not stop the others: its error is in the
// report and its events are sent again at the next Run. With dryRun nothing is
// sent and st is left as it was.
func (e Engine) Run(ctx context.Context, rd Reader, st *State, now time.Time, dryRun bool) Report {
	results := Evaluate(ctx, rd, e.Rules, e.Sources, now)
	for i := range results {
		for j := range results[i].Instances {
			results[i].Instances[j].URL = ViewURL(e.PublicURL, results[i].Instances[j])
		}
	}
	if e.Redact != nil {
		for i := range results {
			for j := range results[i].Instances {
				results[i].Instances[j].Summary = e.Redact(results[i].Instances[j].Summary)
			}
			if results[i].Err != nil {
				results[i].Err = errors.New(e.Redact(results[i].Err.Error()))
			}
		}
	}
	work := st
	if dryRun {
		work = st.clone()
	}
	trans := work.Step(results, now)
	rep := Report{At: now, DryRun: dryRun}
	for _, res := range results {
		rr := RuleReport{Rule: res.Rule.Name, Kind: res.Rule.Kind, Instances: []InstanceReport{}}
		if res.Err != nil {
			rr.Error = res.Err.Error()
		}
		for _, in := range res.Instances {
			ir := InstanceReport{Instance: in, State: trans[in.Key()]}
			if en := work.Alerts[in.Key()]; en != nil && in.Firing {
				ir.StartsAt = en.StartsAt
			}
			rr.Instances = append(rr.Instances, ir)
		}
		for k, t := range trans { // resolved because the rule no longer finds them
			if en := work.Alerts[k]; t == Resolved && en != nil && en.Rule == res.Rule.Name && !hasInstance(res.Instances, k) {
				rr.Instances = append(rr.Instances, InstanceReport{Instance: en.Instance, State: Resolved})
			}
		}
		rep.Rules = append(rep.Rules, rr)
	}
	rules := map[string]Rule{}
	for _, r := range e.Rules {
		rules[r.Name] = r
	}
	for _, t := range e.Targets {
		d := Delivery{Notifier: t.Config.Name, Kind: t.Config.Kind}
		var keys []string
		for _, k := range work.Keys() {
			en := work.Alerts[k]
			if !t.wants(en.Rule) {
				continue
			}
			last, told := en.Notified[t.Config.Name]
			repeat := false
			if told {
				every := t.resend(rules[en.Rule], e.RepeatInterval)
				if !en.EndsAt.IsZero() || every <= 0 || now.Sub(last) < every {
					continue
				}
				repeat = true
			}
			ev := en.event(repeat)
			if ev.Status == StatusFiring {
				d.Firing++
			} else {
				d.Resolved++
			}
			d.Events = append(d.Events, ev)
			keys = append(keys, k)
		}
		if len(d.Events) == 0 {
			continue
		}
		if !dryRun {
			err := t.Notifier.Notify(ctx, d.Events)
			for _, k := range keys {
				en := work.Alerts[k]
				if err != nil {
					if en.Errors == nil {
						en.Errors = map[string]string{}
					}
					en.Errors[t.Config.Name] = err.Error()
					continue
				}
				en.Notified[t.Config.Name] = now
				delete(en.Errors, t.Config.Name)
			}
			if err != nil && e.Redact != nil {
				err = errors.New(e.Redact(err.Error()))
			}
			if err != nil {
				d.Error = err.Error()
				if e.Log != nil {
					e.Log.Error("alert notification failed", "notifier", t.Config.Name, "events", len(d.Events), "error", d.Error)
				}
			} else {
				d.Sent = true
			}
		}
		rep.Deliveries = append(rep.Deliveries, d)
	}
	// A resolution told to every target it concerns is done with.
	for k, en := range work.Alerts {
		if en.EndsAt.IsZero() {
			continue
		}
		done := true
		for _, t := range e.Targets {
			if _, ok := en.Notified[t.Config.Name]; t.wants(en.Rule) && !ok {
				done = false
			}
		}
		if done {
			delete(work.Alerts, k)
		}
	}
	sort.SliceStable(rep.Deliveries,
		func(i, j int) bool { return rep.Deliveries[i].Notifier < rep.Deliveries[j].Notifier })
	return rep
}

func hasInstance(ins []Instance, key string) bool {
	for _, in := range ins {
		if in.Key() == key {
			return true
		}
	}
	return false
}

// clone returns a deep copy of the state, for a dry run.
func (s *State) clone() *State {
	c := NewState()
	for k, e := range s.Alerts {
		x := *e
		x.Notified = map[string]time.Time{}
		for n, t := range e.Notified {
			x.Notified[n] = t
		}
		x.Errors = map[string]string{}
		for n, m := range e.Errors {
			x.Errors[n] = m
		}
		c.Alerts[k] = &x
	}
	return c
}

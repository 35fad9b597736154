package alert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// Event is what a notifier is told about one alert instance.
type Event struct {
	// Status is "firing" or "resolved".
	Status    string             `json:"status"`
	Rule      string             `json:"rule"`
	Kind      Kind               `json:"kind"`
	Subject   string             `json:"subject"`
	Summary   string             `json:"summary"`
	Value     float64            `json:"value"`
	Threshold float64            `json:"threshold"`
	Unit      string             `json:"unit"`
	Detail    map[string]float64 `json:"detail,omitempty"`
	Labels    map[string]string  `json:"labels"`
	// Series is what the alert is about; Compared the figures it compares, each
	// with when it held; URL the web app's view of the series (serve.public_url).
	Series   *SeriesRef `json:"series,omitempty"`
	Compared []Point    `json:"compared,omitempty"`
	URL      string     `json:"url,omitempty"`
	StartsAt time.Time  `json:"starts_at"`
	EndsAt   time.Time  `json:"ends_at,omitzero"` // resolved only
	// Repeat marks a firing alert sent again (repeat_interval, Alertmanager refresh).
	Repeat bool `json:"repeat,omitempty"`
}

// Event statuses.
const (
	StatusFiring   = "firing"
	StatusResolved = "resolved"
)

func (e *Entry) event(repeat bool) Event {
	ev := Event{Status: StatusFiring, Rule: e.Rule, Kind: e.Kind, Subject: e.Subject, Summary: e.Summary, Value: e.Value,
		Threshold: e.Threshold, Unit: e.Unit, Detail: e.Detail, Labels: e.Labels, Series: e.Series, Compared: e.Compared,
		URL:      e.URL,
		StartsAt: e.StartsAt, Repeat: repeat}
	if !e.EndsAt.IsZero() {
		ev.Status, ev.EndsAt = StatusResolved, e.EndsAt
	}
	return ev
}

// Notifier delivers events; one call carries every event of an evaluation.
type Notifier interface {
	Notify(ctx context.Context, events []Event) error
}

// Doer sends one HTTP request, retrying a POST only under fetch.Idempotent; *fetch.Client
// is one.
type Doer interface {
	Do(ctx context.Context, method, url string, hdr http.Header, body []byte) (*fetch.Response, error)
}

// Target is a configured notifier.
type Target struct {
	Config   NotifierConfig
	Notifier Notifier
}

// wants reports whether the target takes the rule's alerts.
func (t Target) wants(rule string) bool {
	if len(t.Config.Rules) == 0 {
		return true
	}
	for _, r := range t.Config.Rules {
		if r == rule {
			return true
		}
	}
	return false
}

// resend is how long after the last delivery a firing alert is sent to t again:
// a quarter of the TTL for Alertmanager (which expires alerts not posted again),
// else the rule's repeat interval or the default one (0: never).
func (t Target) resend(r Rule, repeat time.Duration) time.Duration {
	if t.Config.Kind == Alertmanager {
		return t.Config.ttl() / 4
	}
	if r.RepeatInterval > 0 {
		return r.RepeatInterval
	}
	return repeat
}

func (n NotifierConfig) ttl() time.Duration {
	if n.TTL > 0 {
		return n.TTL
	}
	return DefaultAlertmanagerTTL
}

// BuildTargets makes the notifiers of the configuration. URLs named by url_env are
// read with getenv; an unset one is an error naming the variable (never its value).
// HTTP notifiers post through d; log notifiers write to log.
func BuildTargets(cfgs []NotifierConfig, d Doer, getenv func(string) string, log *slog.Logger) ([]Target, error) {
	var out []Target
	var errs []error
	for _, c := range cfgs {
		u := c.URL
		if c.URLEnv != "" {
			u = getenv(c.URLEnv)
			if u == "" {
				errs = append(errs, fmt.Errorf("alert: notifier %s: $%s is not set", c.Name, c.URLEnv))
				continue
			}
			if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				errs = append(errs, fmt.Errorf("alert: notifier %s: $%s is not an http(s) URL", c.Name, c.URLEnv))
				continue
			}
		}
		shown := c.URL
		if c.URLEnv != "" {
			shown = "$" + c.URLEnv
		}
		h := httpNotifier{name: c.Name, url: u, shown: shown, d: d}
		var n Notifier
		switch c.Kind {
		case Webhook:
			n = webhook{h}
		case Slack:
			n = slack{h}
		case Alertmanager:
			h.url = strings.TrimRight(u, "/") + "/api/v2/alerts"
			h.idempotent = true
			n = alertmanager{httpNotifier: h, ttl: c.ttl()}
		case Log:
			n = logNotifier{log: log}
		default:
			errs = append(errs, fmt.Errorf("alert: notifier %s: unknown kind %q", c.Name, c.Kind))
			continue
		}
		out = append(out, Target{Config: c, Notifier: n})
	}
	return out, errors.Join(errs...)
}

// httpNotifier posts JSON to a URL; errors name the URL as shown (the variable it
// came from), never the URL itself. A post is sent again after a failure only when
// idempotent is set (Alertmanager deduplicates alerts); a webhook or Slack post that
// failed is sent at the next evaluation, as the engine's state says.
type httpNotifier struct {
	name, url, shown string
	d                Doer
	idempotent       bool
}

func (h httpNotifier) post(ctx context.Context, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("alert: notifier %s: %w", h.name, err)
	}
	if h.idempotent {
		ctx = fetch.Idempotent(ctx)
	}
	_, err = h.d.Do(ctx, http.MethodPost, h.url, http.Header{"Content-Type": {"application/json"}}, body)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), h.url, h.shown)
		if red := fetch.RedactURL(h.url); red != h.url {
			msg = strings.ReplaceAll(msg, red, h.shown)
		}
		return fmt.Errorf("alert: notifier %s: %s", h.name, msg)
	}
	return nil
}

// Poster is the optional ability of a notifier to post another JSON body to its
// URL, once (the weekly digest of analytics/digest): the webhook and Slack
// notifiers have it.
type Poster interface {
	PostJSON(ctx context.Context, v any) error
}

// PostJSON posts v as the webhook's body.
func (w webhook) PostJSON(ctx context.Context, v any) error { return w.post(ctx, v) }

// PostJSON posts v (a Slack message: text, blocks) to the incoming webhook.
func (s slack) PostJSON(ctx context.Context, v any) error { return s.post(ctx, v) }

// PayloadVersion names the webhook payload's format.
const PayloadVersion = "gpuprice-alerts/1"

// Payload is the body a webhook notifier posts.
type Payload struct {
	Version  string    `json:"version"`
	SentAt   time.Time `json:"sent_at"`
	Firing   int       `json:"firing"`
	Resolved int       `json:"resolved"`
	Events   []Event   `json:"events"`
}

type webhook struct{ httpNotifier }

func (w webhook) Notify(ctx context.Context, events []Event) error {
	p := Payload{Version: PayloadVersion, SentAt: time.Now().UTC(), Events: events}
	for _, e := range events {
		if e.Status == StatusFiring {
			p.Firing++
		} else {
			p.Resolved++
		}
	}
	return w.post(ctx, p)
}

type slack struct{ httpNotifier }

// SlackText is the text a Slack notifier posts for events: a line per event, and
// under it, when the event has them, the figures compared with the threshold, and
// a link to the series in the web app.
func SlackText(events []Event) string {
	var b strings.Builder
	esc := textsafe.Slack
	for i, e := range events {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch {
		case e.Status == StatusResolved:
			fmt.Fprintf(&b, ":white_check_mark: RESOLVED *%s* %s", esc(e.Rule), esc(e.Summary))
		case e.Repeat:
			fmt.Fprintf(&b, ":rotating_light: STILL FIRING *%s* (since %s) %s", esc(e.Rule),
				e.StartsAt.UTC().Format(time.RFC3339), esc(e.Summary))
		default:
			fmt.Fprintf(&b, ":rotating_light: FIRING *%s* %s", esc(e.Rule), esc(e.Summary))
		}
		if len(e.Compared) > 0 {
			fmt.Fprintf(&b, "\n>compared: %s; threshold %s", esc(ComparedText(e.Compared)), esc(thresholdText(e.Threshold,
				e.Unit)))
		}
		if e.Series != nil {
			fmt.Fprintf(&b, "\n>series: %s", esc(e.Series.String()))
			if e.URL != "" {
				// The link is gpuprice's: nothing in its query can end it or add one.
				fmt.Fprintf(&b, " <%s|view in gpuprice>", textsafe.SlackURL(e.URL))
			}
		}
	}
	return b.String()
}

func (s slack) Notify(ctx context.Context, events []Event) error {
	return s.post(ctx, map[string]string{"text": SlackText(events)})
}

// AMAlert is one alert of Alertmanager's POST /api/v2/alerts.
type AMAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
	EndsAt      time.Time         `json:"endsAt"`
	// GeneratorURL is the web app's view of the series (Alertmanager links it as
	// the alert's source).
	GeneratorURL string `json:"generatorURL,omitempty"`
}

type alertmanager struct {
	httpNotifier
	ttl time.Duration
}

// AMAlerts converts events for Alertmanager at now: a firing alert ends at now +
// ttl unless posted again, a resolved one at its resolution. Annotations: summary,
// value, threshold, unit, and when the event has them series (key=value pairs),
// compared (the figures and when each held), compared_json (the same as JSON) and
// url (the web app's view, also the generatorURL).
func AMAlerts(events []Event, now time.Time, ttl time.Duration) []AMAlert {
	out := make([]AMAlert, 0, len(events))
	for _, e := range events {
		a := AMAlert{Labels: e.Labels, StartsAt: e.StartsAt.UTC(), EndsAt: now.Add(ttl).UTC(), GeneratorURL: e.URL,
			Annotations: map[string]string{"summary": e.Summary, "value": strconv.FormatFloat(e.Value, 'g', 6, 64),
				"threshold": strconv.FormatFloat(e.Threshold, 'g', 6, 64), "unit": e.Unit}}
		if e.Series != nil {
			a.Annotations["series"] = e.Series.String()
		}
		if len(e.Compared) > 0 {
			a.Annotations["compared"] = ComparedText(e.Compared)
			if js, err := json.Marshal(e.Compared); err == nil {
				a.Annotations["compared_json"] = string(js)
			}
		}
		if e.URL != "" {
			a.Annotations["url"] = e.URL
		}
		if e.Status == StatusResolved {
			a.EndsAt = e.EndsAt.UTC()
		}
		out = append(out, a)
	}
	return out
}

func (a alertmanager) Notify(ctx context.Context, events []Event) error {
	return a.post(ctx, AMAlerts(events, time.Now(), a.ttl))
}

type logNotifier struct{ log *slog.Logger }

func (l logNotifier) Notify(_ context.Context, events []Event) error {
	if l.log == nil {
		return nil
	}
	for _, e := range events {
		l.log.Warn("alert", "status", e.Status, "rule", e.Rule, "subject", e.Subject, "value", e.Value,
			"threshold", e.Threshold, "unit", e.Unit, "since", e.StartsAt, "summary", e.Summary)
	}
	return nil
}

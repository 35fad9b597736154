// Package alert evaluates gpuprice's alert rules and tells notifiers when an alert
// starts or stops firing. Rules read the same figures the analytics commands print
// (analytics.Spreads for tier spreads, analytics.SeriesVolatilityOf for spot moves,
// the latest prices still on offer, run records); each evaluation yields instances
// (one per rule and subject: a GPU and pricing kind, an offering, a source) that are
// firing or not. State (state.go) remembers which instances fire, so that a
// notification goes out when an instance starts firing and when it resolves, not on
// every evaluation; notifiers (notify.go) post to webhooks, Slack, Alertmanager or
// the log. docs/alerts.md describes the rules and their arithmetic.
package alert

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"

	"github.com/gpuprice/gpuprice/schemas"
)

// Kind names what a rule watches.
type Kind string

// Rule kinds.
const (
	// SpreadShift: the tier spread (median hyperscaler ÷ median specialist day
	// price) of a GPU and pricing kind moved by at least ThresholdPct per cent of
	// its value Window ago.
	SpreadShift Kind = "spread_shift"
	// SpotMove: a spot offering (GPU × provider) or series moved by at least
	// ThresholdPct within Window, or its annualised volatility reached
	// VolatilityPct.
	SpotMove Kind = "spot_move"
	// PriceBelow: the cheapest current offer of a GPU and pricing kind is below
	// BelowUSDGPUHour.
	PriceBelow Kind = "price_below"
	// SourceFailed: a source's last Runs runs all failed.
	SourceFailed Kind = "source_failed"
	// RiskRise: a spot offer's interruption band (AWS Spot Advisor's frequency of
	// interruption, `gpuprice risk`) is higher now than when Window began.
	RiskRise Kind = "risk_rise"
	// OutOfStock: an offer that was in stock says none can be rented now (its
	// newest stock signal, `gpuprice availability`).
	OutOfStock Kind = "out_of_stock"
	// BackInStock: an offer in stock now was out of stock within Window.
	BackInStock Kind = "back_in_stock"
	// CapacityBelow: the GPUs a provider's offers of a GPU can supply now are
	// fewer than BelowGPUs.
	CapacityBelow Kind = "capacity_below"
)

// DefaultSchedule is when `serve` evaluates the rules unless alerts.schedule says.
const DefaultSchedule = "*/15 * * * *"

// DefaultAlertmanagerTTL is how long Alertmanager keeps a firing alert that is not
// posted again (endsAt = the post + TTL); a firing alert is posted again once a
// quarter of it has passed.
const DefaultAlertmanagerTTL = 4 * time.Hour

// Span is a length of time in the configuration: "7d", "24h", "90m" (days, or any
// time.ParseDuration text).
type Span time.Duration

// ParseSpan reads a Span; it must be positive.
func ParseSpan(s string) (Span, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: not a number of days", s)
		}
		d = time.Duration(v * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q: use e.g. 7d, 24h or 30m", s)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q: must be positive", s)
	}
	return Span(d), nil
}

// UnmarshalYAML reads a Span from a scalar.
func (s *Span) UnmarshalYAML(n *yaml.Node) error {
	var text string
	if err := n.Decode(&text); err != nil {
		return err
	}
	v, err := ParseSpan(text)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = v
	return nil
}

// MarshalYAML writes a Span as days when whole, else as a duration.
func (s Span) MarshalYAML() (any, error) { return s.String(), nil }

// String is "7d" for whole days, else the time.Duration text.
func (s Span) String() string {
	d := time.Duration(s)
	if d > 0 && d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// Rule is one alert rule of the configuration (alerts.rules).
type Rule struct {
	Name string `yaml:"name"`
	Kind Kind   `yaml:"kind"`
	// Selection: GPU (spread_shift, spot_move: empty means every GPU; price_below:
	// required), Pricing (spread_shift and price_below; default on_demand),
	// Provider (spot_move, price_below: empty means every provider).
	GPU      string `yaml:"gpu,omitempty"`
	Pricing  string `yaml:"pricing,omitempty"`
	Provider string `yaml:"provider,omitempty"`
	// Window: spread_shift compares the last day's ratio with the ratio Window
	// earlier (default 7d); spot_move looks at the hourly bars of the last Window
	// (default 24h).
	Window Span `yaml:"window,omitempty"`
	// ThresholdPct: spread_shift fires when |Δratio| ÷ ratio Window ago ≥ this;
	// spot_move when |price change| ÷ price at the window's start ≥ this.
	ThresholdPct float64 `yaml:"threshold_pct,omitempty"`
	// VolatilityPct: spot_move also fires when the annualised volatility (the
	// `volatility` command's annualised_pct, over hourly bars) reaches this.
	VolatilityPct float64 `yaml:"volatility_pct,omitempty"`
	// By: spot_move per "offering" (GPU × provider, median over its series; the
	// default) or per "series".
	By string `yaml:"by,omitempty"`
	// BelowUSDGPUHour: price_below's price, USD per GPU-hour.
	BelowUSDGPUHour float64 `yaml:"below_usd_gpu_hour,omitempty"`
	// BelowGPUs: capacity_below fires while fewer GPUs than this can be rented
	// now (per provider and GPU).
	BelowGPUs int `yaml:"below_gpus,omitempty"`
	// Runs: source_failed fires when this many latest runs all failed (default 3);
	// Source limits it to one source (default: every enabled source).
	Runs   int    `yaml:"runs,omitempty"`
	Source string `yaml:"source,omitempty"`
	// RepeatInterval sends a firing alert again after this long (overrides
	// alerts.repeat_interval; 0: only when it starts firing).
	RepeatInterval time.Duration `yaml:"repeat_interval,omitempty"`
	// Severity is a label for receivers (default "warning").
	Severity string `yaml:"severity,omitempty"`
	// Labels are added to every instance's labels (Alertmanager routing).
	Labels map[string]string `yaml:"labels,omitempty"`
}

// NotifierKind names a notifier.
type NotifierKind string

// Notifier kinds.
const (
	Webhook      NotifierKind = "webhook"      // JSON POST of the events (Payload)
	Slack        NotifierKind = "slack"        // Slack incoming webhook: {"text": …}
	Alertmanager NotifierKind = "alertmanager" // POST /api/v2/alerts
	Log          NotifierKind = "log"          // one log line per event
)

// NotifierConfig is one notifier of the configuration (alerts.notifiers).
type NotifierConfig struct {
	Name string       `yaml:"name"`
	Kind NotifierKind `yaml:"kind"`
	// URLEnv names the environment variable holding the URL (webhook and Slack:
	// required, their URLs are secrets; alertmanager: instead of URL).
	URLEnv string `yaml:"url_env,omitempty"`
	// URL is Alertmanager's base URL, e.g. http://alertmanager:9093 (no password).
	URL string `yaml:"url,omitempty"`
	// TTL (alertmanager) is how long a posted firing alert lasts in Alertmanager
	// without being posted again (default DefaultAlertmanagerTTL).
	TTL time.Duration `yaml:"ttl,omitempty"`
	// Rules limits the notifier to these rules (default: every rule).
	Rules []string `yaml:"rules,omitempty"`
}

// Config is the alerts section of the configuration.
type Config struct {
	// Schedule is the cron spec on which `serve` evaluates (default DefaultSchedule).
	Schedule string `yaml:"schedule,omitempty"`
	// RepeatInterval sends a firing alert again after this long (0: never; only
	// when it starts firing and when it resolves).
	RepeatInterval time.Duration `yaml:"repeat_interval,omitempty"`
	// StateFile keeps which alerts fire (default <data_dir>/alerts-state.json).
	StateFile string           `yaml:"state_file,omitempty"`
	Rules     []Rule           `yaml:"rules,omitempty"`
	Notifiers []NotifierConfig `yaml:"notifiers,omitempty"`
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
var envRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks every field (no network, no environment); messages are prefixed
// with the key, e.g. "alerts.rules[0] (h100-premium): threshold_pct …".
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Schedule != "" {
		parser := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
		if _, err := parser.Parse(c.Schedule); err != nil {
			bad("alerts.schedule: %v", err)
		}
	}
	if c.RepeatInterval < 0 {
		bad("alerts.repeat_interval must not be negative")
	}
	names := map[string]bool{}
	for i, r := range c.Rules {
		p := fmt.Sprintf("alerts.rules[%d] (%s)", i, r.Name)
		if !nameRE.MatchString(r.Name) {
			bad("alerts.rules[%d].name: %q: give a name of letters, digits, '.', '_' or '-'", i, r.Name)
		} else if names[r.Name] {
			bad("%s: name used twice", p)
		}
		names[r.Name] = true
		if r.Pricing != "" && !schemas.ValidPricing(r.Pricing) {
			bad("%s.pricing: %q is not a pricing kind", p, r.Pricing)
		}
		if r.RepeatInterval < 0 {
			bad("%s.repeat_interval must not be negative", p)
		}
		for k := range r.Labels {
			if !envRE.MatchString(k) {
				bad("%s.labels: %q is not a label name", p, k)
			}
		}
		unused := func(field string, set bool) {
			if set {
				bad("%s.%s: not used by kind %s", p, field, r.Kind)
			}
		}
		switch r.Kind {
		case SpreadShift:
			if !(r.ThresholdPct > 0) {
				bad("%s.threshold_pct: must be positive (per cent of the ratio)", p)
			}
			unused("provider", r.Provider != "")
			unused("volatility_pct", r.VolatilityPct != 0)
			unused("by", r.By != "")
			unused("below_usd_gpu_hour", r.BelowUSDGPUHour != 0)
			unused("runs", r.Runs != 0)
			unused("source", r.Source != "")
		case SpotMove:
			if r.ThresholdPct < 0 || r.VolatilityPct < 0 || (r.ThresholdPct == 0 && r.VolatilityPct == 0) {
				bad("%s: give threshold_pct (price move, %%) and/or volatility_pct (annualised, %%), positive", p)
			}
			if r.By != "" && r.By != "offering" && r.By != "series" {
				bad("%s.by: %q: use offering or series", p, r.By)
			}
			if r.Pricing != "" && r.Pricing != schemas.Spot {
				bad("%s.pricing: spot_move watches spot prices; leave pricing out", p)
			}
			unused("below_usd_gpu_hour", r.BelowUSDGPUHour != 0)
			unused("runs", r.Runs != 0)
			unused("source", r.Source != "")
		case PriceBelow:
			if r.GPU == "" {
				bad("%s.gpu: required (e.g. H100-SXM-80GB)", p)
			}
			if !(r.BelowUSDGPUHour > 0) {
				bad("%s.below_usd_gpu_hour: must be positive", p)
			}
			unused("window", r.Window != 0)
			unused("threshold_pct", r.ThresholdPct != 0)
			unused("volatility_pct", r.VolatilityPct != 0)
			unused("by", r.By != "")
			unused("runs", r.Runs != 0)
			unused("source", r.Source != "")
		case SourceFailed:
			if r.Runs < 0 {
				bad("%s.runs: must be positive", p)
			}
			unused("gpu", r.GPU != "")
			unused("pricing", r.Pricing != "")
			unused("provider", r.Provider != "")
			unused("window", r.Window != 0)
			unused("threshold_pct", r.ThresholdPct != 0)
			unused("volatility_pct", r.VolatilityPct != 0)
			unused("by", r.By != "")
			unused("below_usd_gpu_hour", r.BelowUSDGPUHour != 0)
		case RiskRise:
			if r.Pricing != "" && r.Pricing != schemas.Spot {
				bad("%s.pricing: risk_rise watches spot offers' interruption bands; leave pricing out", p)
			}
			unused("threshold_pct", r.ThresholdPct != 0)
			unused("volatility_pct", r.VolatilityPct != 0)
			unused("by", r.By != "")
			unused("below_usd_gpu_hour", r.BelowUSDGPUHour != 0)
			unused("runs", r.Runs != 0)
			unused("source", r.Source != "")
		case OutOfStock, BackInStock, CapacityBelow:
			if r.Pricing != "" {
				bad("%s.pricing: %s watches offers' stock, whatever their pricing; leave pricing out", p, r.Kind)
			}
			if r.Kind == CapacityBelow && r.BelowGPUs <= 0 {
				bad("%s.below_gpus: required, a positive count of GPUs", p)
			}
			unused("window", r.Kind == OutOfStock && r.Window != 0)
			unused("below_gpus", r.Kind != CapacityBelow && r.BelowGPUs != 0)
			unused("threshold_pct", r.ThresholdPct != 0)
			unused("volatility_pct", r.VolatilityPct != 0)
			unused("by", r.By != "")
			unused("below_usd_gpu_hour", r.BelowUSDGPUHour != 0)
			unused("runs", r.Runs != 0)
			unused("source", r.Source != "")
		default:
			bad("%s.kind: %q: use spread_shift, spot_move, price_below, source_failed, risk_rise, out_of_stock, "+
				"back_in_stock or capacity_below", p, r.Kind)
		}
	}
	nn := map[string]bool{}
	for i, n := range c.Notifiers {
		p := fmt.Sprintf("alerts.notifiers[%d] (%s)", i, n.Name)
		if !nameRE.MatchString(n.Name) {
			bad("alerts.notifiers[%d].name: %q: give a name of letters, digits, '.', '_' or '-'", i, n.Name)
		} else if nn[n.Name] {
			bad("%s: name used twice", p)
		}
		nn[n.Name] = true
		if n.URLEnv != "" && !envRE.MatchString(n.URLEnv) {
			bad("%s.url_env: %q is not an environment variable name", p, n.URLEnv)
		}
		for _, r := range n.Rules {
			if !names[r] {
				bad("%s.rules: no rule named %q", p, r)
			}
		}
		if n.TTL != 0 && n.Kind != Alertmanager {
			bad("%s.ttl: only for kind alertmanager", p)
		}
		switch n.Kind {
		case Webhook, Slack:
			if n.URL != "" {
				bad("%s.url: a %s URL is a secret (Slack's embeds a token): give url_env, the environment variable that holds it",
					p, n.Kind)
			}
			if n.URLEnv == "" {
				bad("%s.url_env: required (the environment variable holding the URL)", p)
			}
		case Alertmanager:
			if (n.URL == "") == (n.URLEnv == "") {
				bad("%s: give url or url_env (one of them)", p)
			}
			if n.URL != "" {
				if err := checkURL(n.URL); err != nil {
					bad("%s.url: %v", p, err)
				}
			}
			if n.TTL < 0 {
				bad("%s.ttl: must be positive", p)
			}
		case Log:
			if n.URL != "" || n.URLEnv != "" {
				bad("%s: a log notifier takes no url", p)
			}
		default:
			bad("%s.kind: %q: use webhook, slack, alertmanager or log", p, n.Kind)
		}
	}
	if len(c.Rules) > 0 && len(c.Notifiers) == 0 {
		bad("alerts.notifiers: rules are configured but no notifier (add at least {name: log, kind: log})")
	}
	return errors.Join(errs...)
}

// SecretEnv lists the environment variables the notifiers read URLs from: their
// values are secrets to redact.
func (c Config) SecretEnv() []string {
	var out []string
	for _, n := range c.Notifiers {
		if n.URLEnv != "" {
			out = append(out, n.URLEnv)
		}
	}
	return out
}

// ScheduleSpec returns the configured schedule or DefaultSchedule.
func (c Config) ScheduleSpec() string {
	if c.Schedule != "" {
		return c.Schedule
	}
	return DefaultSchedule
}

func checkURL(s string) error {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return errors.New("not an http(s) URL")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return errors.New("not a valid URL")
	}
	if u.User != nil {
		return errors.New("holds credentials; put the URL in the environment and give url_env")
	}
	return nil
}

// window returns the rule's window or the kind's default.
func (r Rule) window() time.Duration {
	if r.Window > 0 {
		return time.Duration(r.Window)
	}
	if r.Kind == SpotMove || r.Kind == BackInStock {
		return 24 * time.Hour
	}
	return 7 * 24 * time.Hour
}

func (r Rule) pricing() string {
	if r.Pricing != "" {
		return r.Pricing
	}
	if r.Kind == SpotMove {
		return schemas.Spot
	}
	return schemas.OnDemand
}

func (r Rule) runs() int {
	if r.Runs > 0 {
		return r.Runs
	}
	return 3
}

func (r Rule) severity() string {
	if r.Severity != "" {
		return r.Severity
	}
	return "warning"
}

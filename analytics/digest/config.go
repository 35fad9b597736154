package digest

import (
	"errors"
	"fmt"
	"slices"

	"github.com/robfig/cron/v3"

	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/schemas"
)

// Config is the digest section of the configuration.
type Config struct {
	// GPUs are the GPUs the team follows, as typed (default: the GPUs the alert
	// rules name).
	GPUs []string `yaml:"gpus,omitempty"`
	// Pricing are the pricing kinds shown (default on_demand and spot).
	Pricing []string `yaml:"pricing,omitempty"`
	// Since is the digest's week (default 7d).
	Since alert.Span `yaml:"since,omitempty"`
	// Schedule is the cron spec on which `serve` sends the digest ("": never, the
	// default), e.g. "0 8 * * 1" (Mondays 08:00) or "@weekly".
	Schedule string `yaml:"schedule,omitempty"`
	// Notifiers are the alerts.notifiers (webhook or slack) it is sent to (default:
	// every webhook and slack notifier).
	Notifiers []string `yaml:"notifiers,omitempty"`
}

// Validate checks the fields against the alert notifiers (no network).
func (c Config) Validate(notifiers []alert.NotifierConfig) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Schedule != "" {
		parser := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
		if _, err := parser.Parse(c.Schedule); err != nil {
			bad("digest.schedule: %v", err)
		}
	}
	for _, p := range c.Pricing {
		if !schemas.ValidPricing(p) {
			bad("digest.pricing: %q is not a pricing kind", p)
		}
	}
	for _, n := range c.Notifiers {
		i := slices.IndexFunc(notifiers, func(nc alert.NotifierConfig) bool { return nc.Name == n })
		switch {
		case i < 0:
			bad("digest.notifiers: no notifier named %q in alerts.notifiers", n)
		case notifiers[i].Kind != alert.Webhook && notifiers[i].Kind != alert.Slack:
			bad("digest.notifiers: %q is a %s notifier; the digest goes to webhook and slack ones", n, notifiers[i].Kind)
		}
	}
	if c.Schedule != "" && len(c.Targets(notifiers)) == 0 {
		bad("digest.schedule: no webhook or slack notifier in alerts.notifiers to send the digest to")
	}
	return errors.Join(errs...)
}

// Targets are the notifiers the digest goes to.
func (c Config) Targets(notifiers []alert.NotifierConfig) []alert.NotifierConfig {
	var out []alert.NotifierConfig
	for _, n := range notifiers {
		if n.Kind != alert.Webhook && n.Kind != alert.Slack {
			continue
		}
		if len(c.Notifiers) == 0 || slices.Contains(c.Notifiers, n.Name) {
			out = append(out, n)
		}
	}
	return out
}

// Followed are the GPUs of the digest: gpus, else those the alert rules name.
func (c Config) Followed(rules []alert.Rule) []string {
	if len(c.GPUs) > 0 {
		return c.GPUs
	}
	var out []string
	for _, r := range rules {
		if r.GPU != "" && !slices.Contains(out, r.GPU) {
			out = append(out, r.GPU)
		}
	}
	return out
}

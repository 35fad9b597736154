package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

func init() { addCommand((*app).alertsCmd) }

// ErrAlertsFailed is returned by `alerts` when a rule could not be evaluated or a
// notifier failed (the others went on; the report says which).
var ErrAlertsFailed = errors.New("alerts: a rule or a notifier failed")

func (a *app) alertsCmd() *cobra.Command {
	var dryRun bool
	var format, at, until, window string
	cmd := &cobra.Command{
		Use:   "alerts",
		Short: "Evaluate the alert rules now and notify what started firing or resolved",
		Long: `alerts evaluates every rule of the configuration's alerts section (see
docs/alerts.md) against the stored bars and latest prices, prints each rule's
instances with their value and state (started, firing, resolved, ok), and tells
the notifiers about alerts that started firing or resolved since the last
evaluation. Which alerts fire is kept in the data directory (alerts-state.json),
so running this from cron and running serve behave the same.

The exit status is 1 when a rule could not be evaluated or a notifier failed; the
other rules and notifiers still ran, and a failed notification is sent again at
the next evaluation.

Below the rules, the alert history kept in the store: every alert that fired in
the --window before now (or --at), still firing or resolved, with when it started
and ended and the figures it fired and resolved on.`,
		Example: `  gpuprice alerts --dry-run
  gpuprice alerts --dry-run --window 30d   # and what fired and resolved in the last 30 days
  gpuprice alerts --format json
  gpuprice alerts --window 30d --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, query.Formats...); err != nil {
				return err
			}
			now, err := parseAt(at)
			if err != nil {
				return err
			}
			if until != "" {
				if at != "" {
					return usagef("--at and --until both say when: give one")
				}
				if now, err = query.ParseUntil(until); err != nil {
					return usagef("--until %q: %v", until, err)
				}
			}
			span, err := query.ParseSpan(window)
			if err != nil {
				return usagef("--window %q: %v", window, err)
			}
			noRules := len(a.cfg.Alerts.Rules) == 0
			if noRules {
				// Nothing to evaluate; the history kept in the store is still worth showing.
				fmt.Fprintln(a.stderr,
					"gpuprice: alerts: no rules configured (add an alerts section to the config file, see "+
						"deploy/gpuprice.example.yaml); showing the alert history only")
				dryRun = true
			}
			st, err := a.openExistingStore(cmd.Context())
			if err != nil {
				// A dry run only reads: while serve holds the embedded store, ask it.
				if base, ok := a.runningServer(); ok && dryRun && errors.Is(err, store.ErrLocked) {
					fmt.Fprintf(a.stderr, "gpuprice: the store is held by gpuprice serve; asking it at %s\n", base)
					res, err := (&query.Client{Base: base}).Alerts(cmd.Context(), query.AlertsQuery{At: now, Window: span})
					if err != nil {
						return query.FlagError(err)
					}
					if err := a.printAlerts(res.Data, format); err != nil {
						return err
					}
					if res.Data.Failed() {
						return ErrAlertsFailed
					}
					return nil
				}
				return err
			}
			defer st.Close()
			rep := alert.Report{At: now, DryRun: true}
			if !noRules {
				if rep, err = a.evaluateAlerts(cmd.Context(), st, now, dryRun); err != nil {
					return err
				}
			}
			rep.Rules, rep.Deliveries = nonNilSlice(rep.Rules), nonNilSlice(rep.Deliveries)
			if rep.Recent, err = query.RecentAlerts(cmd.Context(), st, now, span); err != nil {
				return err
			}
			if err := a.printAlerts(rep, format); err != nil {
				return err
			}
			if rep.Failed() {
				return ErrAlertsFailed
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&dryRun, "dry-run", false,
		"evaluate and show what would be sent; send nothing and keep the state as it was")
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	fl.StringVar(&at, "at", "", "evaluate as of this time, RFC 3339 or a date (default: now)")
	untilFlag(fl, &until)
	fl.StringVar(&window, "window", "7d", "how far back the alert history goes (e.g. 24h, 7d, 30d)")
	return cmd
}

// alertEngine builds the engine of the configuration: its rules, its notifiers
// (posting through the shared fetch client) and the enabled sources.
func (a *app) alertEngine() (alert.Engine, error) {
	targets, err := alert.BuildTargets(a.cfg.Alerts.Notifiers, a.client(), os.Getenv, a.redactLogger(a.log))
	if err != nil {
		return alert.Engine{}, err
	}
	var sources []string
	for _, n := range scrapers.Names() {
		if a.cfg.Sources[n].IsEnabled() {
			sources = append(sources, n)
		}
	}
	return alert.Engine{Rules: a.cfg.Alerts.Rules, Targets: targets, RepeatInterval: a.cfg.Alerts.RepeatInterval,
		Sources: sources, Log: a.redactLogger(a.log), Redact: a.redactor().Redact, PublicURL: a.cfg.Serve.PublicURL}, nil
}

// evaluateAlerts evaluates the rules at now with the state file, sends what is
// due (not when dry) and saves the state (not when dry). Every text the engine
// produces is redacted (the configuration's Redactor).
func (a *app) evaluateAlerts(ctx context.Context, st store.Store, now time.Time, dry bool) (alert.Report, error) {
	r, err := a.rollups(st)
	if err != nil {
		return alert.Report{}, err
	}
	eng, err := a.alertEngine()
	if err != nil {
		return alert.Report{}, err
	}
	path, err := a.cfg.AlertStatePath()
	if err != nil {
		return alert.Report{}, err
	}
	return eng.Evaluate(ctx, st, r, path, now, dry)
}

func (a *app) printAlerts(rep alert.Report, format string) error {
	if format == "json" {
		return output(a.stdout, "json", nil, nil, rep)
	}
	tab := query.AlertTablesOf(rep)
	if format == "csv" {
		head, rows := tab.CSV()
		return output(a.stdout, "csv", head, rows, nil)
	}
	if err := output(a.stdout, format, tab.RuleHeader, tab.Rules, nil, "(no rule)"); err != nil {
		return err
	}
	bullet := ""
	if format == "markdown" {
		bullet = "- "
		fmt.Fprintln(a.stdout)
	}
	for _, n := range tab.Notes {
		fmt.Fprintln(a.stdout, bullet+n)
	}
	if len(tab.History) == 0 {
		fmt.Fprintln(a.stdout, "\nno alert fired in the window (history kept in the store)")
		return nil
	}
	if format == "markdown" {
		fmt.Fprint(a.stdout, "\n### History (newest first)\n\n")
	} else {
		fmt.Fprintln(a.stdout, "\nHISTORY (newest first)")
	}
	return output(a.stdout, format, tab.HistoryHeader, tab.History, nil)
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

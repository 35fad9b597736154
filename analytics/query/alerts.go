package query

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics/alert"
)

// AlertTables is an alert evaluation (alert.Report) as tables: the rules' instances,
// a sentence per notifier delivery, and the history of episodes, newest first.
// Every format carries the whole answer: tables and Markdown print the three in
// turn, CSV is one table with a section column (CSV).
type AlertTables struct {
	RuleHeader    []string
	Rules         [][]string
	Notes         []string
	HistoryHeader []string
	History       [][]string
}

// AlertTablesOf lays out rep.
func AlertTablesOf(rep alert.Report) AlertTables {
	t := AlertTables{
		RuleHeader:    []string{"rule", "kind", "subject", "state", "value", "threshold", "since", "summary"},
		HistoryHeader: []string{"rule", "subject", "state", "started", "ended", "value_fired", "value_resolved", "summary"},
	}
	for _, r := range rep.Rules {
		if r.Error != "" {
			t.Rules = append(t.Rules, []string{r.Rule, string(r.Kind), Missing, "error", Missing, Missing,
				Missing, firstLineOf(r.Error)})
			continue
		}
		if len(r.Instances) == 0 {
			t.Rules = append(t.Rules, []string{r.Rule, string(r.Kind), Missing, "no data", Missing, Missing,
				Missing, "nothing matches the rule yet"})
			continue
		}
		for _, in := range r.Instances {
			since := Missing
			if !in.StartsAt.IsZero() {
				since = in.StartsAt.UTC().Format(time.RFC3339)
			}
			t.Rules = append(t.Rules, []string{r.Rule, string(r.Kind), in.Subject, string(in.State),
				alertNum(in.Value, in.Unit), alertNum(in.Threshold, in.Unit), since, in.Summary})
		}
	}
	for _, d := range rep.Deliveries {
		what := fmt.Sprintf("%d firing, %d resolved", d.Firing, d.Resolved)
		switch {
		case rep.DryRun:
			t.Notes = append(t.Notes, fmt.Sprintf("notifier %s (%s): would send %s (dry run)", d.Notifier, d.Kind, what))
		case d.Error != "":
			t.Notes = append(t.Notes, fmt.Sprintf("notifier %s (%s): FAILED to send %s: %s (sent again next time)",
				d.Notifier, d.Kind, what, d.Error))
		default:
			t.Notes = append(t.Notes, fmt.Sprintf("notifier %s (%s): sent %s", d.Notifier, d.Kind, what))
		}
	}
	if len(rep.Deliveries) == 0 {
		t.Notes = append(t.Notes, "nothing to notify")
	}
	for _, e := range rep.Recent {
		ended, endValue, summary := Missing, Missing, e.Fired.Summary
		if e.EndsAt != nil {
			ended = e.EndsAt.UTC().Format(time.RFC3339)
		}
		if e.Resolved != nil {
			endValue, summary = alertNum(e.Resolved.Value, e.Resolved.Unit), e.Resolved.Summary
		}
		t.History = append(t.History, []string{e.Rule, e.Subject, e.State, e.StartsAt.UTC().Format(time.RFC3339), ended,
			alertNum(e.Fired.Value, e.Fired.Unit), endValue, summary})
	}
	return t
}

// CSV is the three parts as one table, a section column (rule, notifier, history)
// saying which part a row is of.
func (t AlertTables) CSV() ([]string, [][]string) {
	head := []string{"section", "rule", "kind", "subject", "state", "value", "threshold", "since", "ended",
		"value_resolved", "summary"}
	var rows [][]string
	for _, r := range t.Rules {
		rows = append(rows, []string{"rule", r[0], r[1], r[2], r[3], r[4], r[5], r[6], Missing, Missing, r[7]})
	}
	for _, n := range t.Notes {
		rows = append(rows, []string{"notifier", Missing, Missing, Missing, Missing, Missing,
			Missing, Missing, Missing, Missing, n})
	}
	for _, h := range t.History {
		rows = append(rows, []string{"history", h[0], Missing, h[1], h[2], h[5], Missing, h[3], h[4], h[6], h[7]})
	}
	return head, rows
}

// alertNum shows an alert's value in its unit.
func alertNum(v float64, unit string) string {
	switch unit {
	case "pct":
		return strconv.FormatFloat(v, 'f', 2, 64) + "%"
	case "usd_gpu_hour":
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// firstLineOf is s up to its first line break.
func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

package digest

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// Formats are the forms a digest is written in.
var Formats = []string{"markdown", "html", "slack", "json"}

// Title is the digest's heading.
func (d *Digest) Title() string {
	return fmt.Sprintf("gpuprice weekly digest: %s to %s", d.From.Format(time.DateOnly), d.To.Format(time.DateOnly))
}

func money(v float64) string { return fmt.Sprintf("$%.4f", v) }

func changeText(c Change) string {
	if c.Pct == nil {
		return "no matched series: no change told"
	}
	return fmt.Sprintf("%+.2f %% (%s → %s, %s to %s, up to %d series matched day to day)", *c.Pct, money(c.From),
		money(c.To), c.FromDay.Format(time.DateOnly), c.ToDay.Format(time.DateOnly), c.Matched)
}

// recordedNote is said when the digest read a recorded example.
func (d *Digest) recordedNote() string {
	if len(d.Recorded) == 0 {
		return ""
	}
	return "Built from a recorded example (examples/recorded): not today's prices."
}

// Markdown writes the digest as Markdown: provider- and host-written text through
// textsafe.Markdown, each section's command in a code span.
func Markdown(w io.Writer, d *Digest) error {
	var b strings.Builder
	cell := textsafe.Markdown
	fmt.Fprintf(&b, "# %s\n\n", textsafe.MarkdownText(d.Title()))
	if n := d.recordedNote(); n != "" {
		fmt.Fprintf(&b, "_%s_\n\n", n)
	}
	for _, g := range d.GPUs {
		fmt.Fprintf(&b, "## %s\n\n", cell(g.GPU))
		for _, ln := range g.Lines {
			fmt.Fprintf(&b, "### %s\n\n`%s`", cell(ln.Pricing), ln.Command)
			if ln.URL != "" {
				fmt.Fprintf(&b, " · [chart](%s)", mdURL(ln.URL))
			}
			b.WriteString("\n\n| tier | series | median | cheapest | at |\n|---|---:|---:|---:|---|\n")
			for _, t := range ln.Tiers {
				fmt.Fprintf(&b, "| %s | %d | %s | %s | %s %s |\n", cell(t.Tier), t.Series, money(t.Median), money(t.Cheapest),
					cell(t.Provider), cell(t.Region))
			}
			b.WriteString("\nWeek over week (matched-sample chained index), ")
			mdCommand(&b, ln.IndexCommand, ln.IndexURL, "chart")
			b.WriteString(":\n\n")
			for _, c := range ln.Changes {
				fmt.Fprintf(&b, "- %s: %s\n", cell(c.Group), changeText(c))
			}
			b.WriteString("\n")
		}
		b.WriteString("Spreads, ")
		mdCommand(&b, g.SpreadsCommand, g.SpreadsURL, "chart")
		b.WriteString(":\n\n")
		for _, s := range g.Spreads {
			fmt.Fprintf(&b, "- %s\n", cell(spreadText(s.Pricing, s.FirstRatio, s.LastRatio, s.PremiumMoved)))
		}
		if len(g.Spreads) == 0 {
			b.WriteString("- no day with both a hyperscaler and a specialist price\n")
		}
		b.WriteString("\nLargest spot moves, ")
		mdCommand(&b, g.SpotCommand, g.SpotURL, "chart")
		b.WriteString(":\n\n")
		for _, m := range g.SpotMoves {
			fmt.Fprintf(&b, "- %s\n", cell(moveText(m)))
		}
		if len(g.SpotMoves) == 0 {
			b.WriteString("- no spot price moved\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("## Sources\n\n")
	mdCommand(&b, d.RunsCommand, d.RunsURL, "sources")
	b.WriteString("\n\n")
	for _, r := range d.failedShown() {
		fmt.Fprintf(&b, "- %s\n", cell(runText(r.Source, r.Status, r.StartedAt, r.Error)))
	}
	if len(d.Failed) == 0 {
		b.WriteString("- no run failed\n")
	} else if n := len(d.Failed) - len(d.failedShown()); n > 0 {
		fmt.Fprintf(&b, "- and %d more\n", n)
	}
	if d.RiskCollected {
		fmt.Fprintf(&b, "\n## Interruption risk\n\n`%s`\n\n", d.RiskCommand)
		for _, c := range d.riskShown() {
			line := riskText(c.Provider, c.SKU, c.Region, c.FromLabel, c.ToLabel, c.Rise)
			fmt.Fprintf(&b, "- %s\n", cell(line))
		}
		if len(d.Risk) == 0 {
			b.WriteString("- no band changed\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdURL makes a link target safe inside Markdown's ( ): gpuprice's own URL, with
// the characters that end it percent-encoded.
func mdURL(u string) string {
	return strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E").Replace(u)
}

func (d *Digest) failedShown() []runShown {
	var out []runShown
	for i, r := range d.Failed {
		if i == maxRows {
			break
		}
		out = append(out, runShown{r.Source, r.Status, r.StartedAt, r.Error})
	}
	return out
}

type runShown struct {
	Source, Status string
	StartedAt      time.Time
	Error          string
}

func (d *Digest) riskShown() []riskShown {
	var out []riskShown
	for i, c := range d.Risk {
		if i == maxRows {
			break
		}
		out = append(out, riskShown{c.Provider, c.SKU, c.Region, c.FromLabel, c.ToLabel, c.Rise})
	}
	return out
}

type riskShown struct {
	Provider, SKU, Region, FromLabel, ToLabel string
	Rise                                      int
}

func spreadText(pricing string, first, last, moved float64) string {
	return fmt.Sprintf("%s: hyperscaler ÷ specialist median %.4f → %.4f (premium %+.2f points)", pricing, first, last, moved)
}

func moveText(m Move) string {
	return fmt.Sprintf("%s %s %s: %s to %s (range %.2f %%, drawdown %.2f %%, %d changes), now %s", m.Provider, m.SKU,
		m.Region, money(m.Min), money(m.Max), m.RangePct, m.DrawdownPct, m.Changes, money(m.Close))
}

func runText(source, status string, at time.Time, msg string) string {
	s := fmt.Sprintf("%s %s at %s", source, status, at.UTC().Format(time.RFC3339))
	if msg != "" {
		if r := []rune(msg); len(r) > 200 {
			msg = string(r[:200]) + textsafe.Ellipsis
		}
		s += ": " + msg
	}
	return s
}

func riskText(provider, sku, region, from, to string, rise int) string {
	dir := "down"
	if rise > 0 {
		dir = "up"
	}
	return fmt.Sprintf("%s %s %s: %s → %s (%s)", provider, sku, region, from, to, dir)
}

//go:embed digest.html.tmpl
var htmlTemplate string

var page = template.Must(template.New("digest").Funcs(template.FuncMap{
	"money": money, "change": changeText, "date": func(t time.Time) string { return t.Format(time.DateOnly) },
	"spread": spreadText, "move": moveText, "run": runText, "risk": riskText,
}).Parse(htmlTemplate))

// HTML writes the digest as one HTML document (html/template escapes every text).
func HTML(w io.Writer, d *Digest) error {
	var b bytes.Buffer
	if err := page.Execute(&b, htmlView{d, d.recordedNote(), d.failedShown(), d.riskShown(),
		len(d.Failed) - len(d.failedShown())}); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

type htmlView struct {
	*Digest
	Note       string
	FailedRows []runShown
	RiskRows   []riskShown
	MoreFailed int
}

// mdCommand writes a section's command as a code span and, when the web app's URL
// is known, a link to its chart labelled label.
func mdCommand(b *strings.Builder, command, url, label string) {
	fmt.Fprintf(b, "`%s`", command)
	if url != "" {
		fmt.Fprintf(b, " · [%s](%s)", label, mdURL(url))
	}
}

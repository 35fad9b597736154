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
		mdList(&b, g.SpreadLines())
		b.WriteString("\nLargest spot moves, ")
		mdCommand(&b, g.SpotCommand, g.SpotURL, "chart")
		b.WriteString(":\n\n")
		mdList(&b, g.MoveLines())
		b.WriteString("\n")
	}
	b.WriteString("## Sources that failed\n\n")
	mdCommand(&b, d.RunsCommand, d.RunsURL, "sources")
	b.WriteString("\n\n")
	mdList(&b, d.FailedLines())
	if d.RiskCollected {
		fmt.Fprintf(&b, "\n## Interruption risk\n\n`%s`\n\n", d.RiskCommand)
		mdList(&b, d.RiskLines())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdURL makes a link target safe inside Markdown's ( ): gpuprice's own URL, with
// the characters that end it percent-encoded.
func mdURL(u string) string {
	return strings.NewReplacer("(", "%28", ")", "%29", " ", "%20", "<", "%3C", ">", "%3E").Replace(u)
}

// mdList writes lines as a Markdown list, each through textsafe.Markdown.
func mdList(b *strings.Builder, lines []string) {
	for _, l := range lines {
		fmt.Fprintf(b, "- %s\n", textsafe.Markdown(l))
	}
}

// The lines of each list of the digest, as plain text (every form escapes them as
// it must): at most maxRows of the longer ones, and a line that says when a list
// is empty.

// SpreadLines are the lines of the GPU's spreads.
func (g GPUWeek) SpreadLines() []string {
	var out []string
	for _, s := range g.Spreads {
		out = append(out, fmt.Sprintf("%s: hyperscaler ÷ specialist median %.4f → %.4f (premium %+.2f points)",
			s.Pricing, s.FirstRatio, s.LastRatio, s.PremiumMoved))
	}
	return orNone(out, "no day with both a hyperscaler and a specialist price")
}

// MoveLines are the lines of the GPU's largest spot moves, each with the command
// that prints its series.
func (g GPUWeek) MoveLines() []string {
	var out []string
	for _, m := range g.SpotMoves {
		from := "the week's first price"
		if m.CarriedIn {
			from = "the price in force when the week began"
		}
		where := strings.TrimSpace(m.Region + " " + m.Zone)
		out = append(out, fmt.Sprintf("%s %s %s: %s → %s (%+.2f %% from %s; low %s, high %s, %d changes): %s",
			m.Provider, m.SKU, where, money(m.From), money(m.To), m.MovePct, from, money(m.Low), money(m.High),
			m.Changes, m.Command))
	}
	return orNone(out, "no spot price moved")
}

// FailedLines are the lines of the sources that failed.
func (d *Digest) FailedLines() []string {
	var out []string
	for i, f := range d.Failed {
		if i == maxRows {
			out = append(out, fmt.Sprintf("and %d more", len(d.Failed)-maxRows))
			break
		}
		r := f.Last
		s := fmt.Sprintf("%s: %d of %d runs did not end ok; the last %s at %s", f.Source, f.Failed, f.Runs, r.Status,
			r.StartedAt.UTC().Format(time.RFC3339))
		if msg := r.Error; msg != "" {
			if r := []rune(msg); len(r) > 200 {
				msg = string(r[:200]) + textsafe.Ellipsis
			}
			s += ": " + msg
		}
		out = append(out, s)
	}
	return orNone(out, "no run failed")
}

// RiskLines are the lines of the interruption-band changes.
func (d *Digest) RiskLines() []string {
	var out []string
	for i, c := range d.Risk {
		if i == maxRows {
			out = append(out, fmt.Sprintf("and %d more", len(d.Risk)-maxRows))
			break
		}
		dir := "down"
		if c.Rise > 0 {
			dir = "up"
		}
		out = append(out, fmt.Sprintf("%s %s %s: %s → %s (%s)", c.Provider, c.SKU, c.Region, c.FromLabel, c.ToLabel, dir))
	}
	return orNone(out, "no band changed")
}

func orNone(lines []string, none string) []string {
	if len(lines) == 0 {
		return []string{none}
	}
	return lines
}

//go:embed digest.html.tmpl
var htmlTemplate string

var page = template.Must(template.New("digest").Funcs(template.FuncMap{
	"money": money, "change": changeText,
}).Parse(htmlTemplate))

// HTML writes the digest as one HTML document (html/template escapes every text).
func HTML(w io.Writer, d *Digest) error {
	var b bytes.Buffer
	if err := page.Execute(&b, htmlView{d, d.recordedNote()}); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

type htmlView struct {
	*Digest
	Note string
}

// mdCommand writes a section's command as a code span and, when the web app's URL
// is known, a link to its chart labelled label.
func mdCommand(b *strings.Builder, command, url, label string) {
	fmt.Fprintf(b, "`%s`", command)
	if url != "" {
		fmt.Fprintf(b, " · [%s](%s)", label, mdURL(url))
	}
}

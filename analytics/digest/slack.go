package digest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// Block is one Slack Block Kit block (header, section, context, divider).
type Block struct {
	Type     string `json:"type"`
	Text     *Text  `json:"text,omitempty"`
	Elements []Text `json:"elements,omitempty"`
}

// Text is a Block Kit text object: plain_text or mrkdwn.
type Text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// SlackMessage is the body posted to a Slack incoming webhook: the blocks, and
// text for notifications and clients without blocks.
type SlackMessage struct {
	Text   string  `json:"text"`
	Blocks []Block `json:"blocks"`
}

// sectionMax is Slack's limit on a section's text.
const sectionMax = 3000

// Slack is the digest as Block Kit blocks: every text gpuprice did not write goes
// through textsafe.Slack (no <!channel>, no link of a host's), links through
// textsafe.SlackURL, each section's command in a context block.
func Slack(d *Digest) SlackMessage {
	esc := textsafe.Slack
	m := SlackMessage{Text: d.Title()}
	section := func(s string) {
		if r := []rune(s); len(r) > sectionMax {
			s = string(r[:sectionMax-1]) + textsafe.Ellipsis
		}
		m.Blocks = append(m.Blocks, Block{Type: "section", Text: &Text{Type: "mrkdwn", Text: s}})
	}
	cmd := func(c, u, label string) {
		s := "`" + esc(c) + "`"
		if u != "" {
			s += fmt.Sprintf(" <%s|%s>", textsafe.SlackURL(u), label)
		}
		m.Blocks = append(m.Blocks, Block{Type: "context", Elements: []Text{{Type: "mrkdwn", Text: s}}})
	}
	m.Blocks = append(m.Blocks, Block{Type: "header", Text: &Text{Type: "plain_text", Text: d.Title()}})
	if n := d.recordedNote(); n != "" {
		m.Blocks = append(m.Blocks, Block{Type: "context", Elements: []Text{{Type: "mrkdwn", Text: "_" + esc(n) + "_"}}})
	}
	for _, g := range d.GPUs {
		m.Blocks = append(m.Blocks, Block{Type: "divider"})
		for _, ln := range g.Lines {
			var b strings.Builder
			fmt.Fprintf(&b, "*%s %s*", esc(g.GPU), esc(ln.Pricing))
			for _, t := range ln.Tiers {
				fmt.Fprintf(&b, "\n• %s (%d series): median %s, cheapest %s at %s %s", esc(t.Tier), t.Series,
					money(t.Median), money(t.Cheapest), esc(t.Provider), esc(t.Region))
			}
			section(b.String())
			cmd(ln.Command, ln.URL, "chart")
			b.Reset()
			b.WriteString("*Week over week* (matched-sample chained index)")
			for _, c := range ln.Changes {
				fmt.Fprintf(&b, "\n• %s: %s", esc(c.Group), esc(changeText(c)))
			}
			section(b.String())
			cmd(ln.IndexCommand, ln.IndexURL, "chart")
		}
		var b strings.Builder
		fmt.Fprintf(&b, "*%s spreads*", esc(g.GPU))
		for _, s := range g.Spreads {
			fmt.Fprintf(&b, "\n• %s", esc(spreadText(s.Pricing, s.FirstRatio, s.LastRatio, s.PremiumMoved)))
		}
		if len(g.Spreads) == 0 {
			b.WriteString("\n• no day with both a hyperscaler and a specialist price")
		}
		section(b.String())
		cmd(g.SpreadsCommand, g.SpreadsURL, "chart")
		b.Reset()
		fmt.Fprintf(&b, "*%s largest spot moves*", esc(g.GPU))
		for _, mv := range g.SpotMoves {
			fmt.Fprintf(&b, "\n• %s", esc(moveText(mv)))
		}
		if len(g.SpotMoves) == 0 {
			b.WriteString("\n• no spot price moved")
		}
		section(b.String())
		cmd(g.SpotCommand, g.SpotURL, "chart")
	}
	m.Blocks = append(m.Blocks, Block{Type: "divider"})
	var b strings.Builder
	b.WriteString("*Sources*")
	for _, r := range d.failedShown() {
		fmt.Fprintf(&b, "\n• %s", esc(runText(r.Source, r.Status, r.StartedAt, r.Error)))
	}
	if len(d.Failed) == 0 {
		b.WriteString("\n• no run failed")
	} else if n := len(d.Failed) - len(d.failedShown()); n > 0 {
		fmt.Fprintf(&b, "\n• and %d more", n)
	}
	section(b.String())
	cmd(d.RunsCommand, d.RunsURL, "sources")
	if d.RiskCollected {
		b.Reset()
		b.WriteString("*Interruption risk*")
		for _, c := range d.riskShown() {
			fmt.Fprintf(&b, "\n• %s", esc(riskText(c.Provider, c.SKU, c.Region, c.FromLabel, c.ToLabel, c.Rise)))
		}
		if len(d.Risk) == 0 {
			b.WriteString("\n• no band changed")
		}
		section(b.String())
		cmd(d.RiskCommand, "", "")
	}
	return m
}

// PayloadVersion names the webhook body's format.
const PayloadVersion = "gpuprice-digest/1"

// Payload is the body a webhook notifier posts: the digest's figures and its
// Markdown.
type Payload struct {
	Version  string    `json:"version"`
	SentAt   time.Time `json:"sent_at"`
	Digest   *Digest   `json:"digest"`
	Markdown string    `json:"markdown"`
}

// Delivery is what sending the digest to one notifier did.
type Delivery struct {
	Notifier string `json:"notifier"`
	Error    string `json:"error,omitempty"`
}

// Send posts d to every Slack (Block Kit) and webhook (Payload) target; a failed
// post is recorded and the others go on. Other notifier kinds take no digest.
func Send(ctx context.Context, targets []alert.Target, d *Digest, now time.Time) ([]Delivery, error) {
	var md strings.Builder
	if err := Markdown(&md, d); err != nil {
		return nil, err
	}
	var out []Delivery
	var errs []error
	for _, t := range targets {
		p, ok := t.Notifier.(alert.Poster)
		if !ok {
			continue
		}
		var body any
		switch t.Config.Kind {
		case alert.Slack:
			body = Slack(d)
		case alert.Webhook:
			body = Payload{Version: PayloadVersion, SentAt: now.UTC(), Digest: d, Markdown: md.String()}
		default:
			continue
		}
		dl := Delivery{Notifier: t.Config.Name}
		if err := p.PostJSON(ctx, body); err != nil {
			dl.Error = err.Error()
			errs = append(errs, err)
		}
		out = append(out, dl)
	}
	return out, errors.Join(errs...)
}

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
	// list is a section of a heading and lines, each line through textsafe.Slack.
	list := func(heading string, lines []string) {
		var b strings.Builder
		b.WriteString(heading)
		for _, l := range lines {
			b.WriteString("\n• " + esc(l))
		}
		section(b.String())
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
		list(fmt.Sprintf("*%s spreads*", esc(g.GPU)), g.SpreadLines())
		cmd(g.SpreadsCommand, g.SpreadsURL, "chart")
		list(fmt.Sprintf("*%s largest spot moves*", esc(g.GPU)), g.MoveLines())
		cmd(g.SpotCommand, g.SpotURL, "chart")
	}
	m.Blocks = append(m.Blocks, Block{Type: "divider"})
	list("*Sources that failed*", d.FailedLines())
	cmd(d.RunsCommand, d.RunsURL, "sources")
	if d.RiskCollected {
		list("*Interruption risk*", d.RiskLines())
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

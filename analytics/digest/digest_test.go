package digest

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"mvdan.cc/sh/v3/shell"
)

// TestDigestHostile: text a provider or host wrote (a run's error, a region, a
// SKU) cannot mention a Slack channel, add a link or run HTML in any form.
func TestDigestHostile(t *testing.T) {
	evil := "<!channel> <https://evil.example|click> <script>alert(1)</script> | [x](javascript:1)"
	d := &Digest{From: time.Date(2026, 10, 26, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC),
		GPUs: []GPUWeek{{GPU: "H100-SXM-80GB", Lines: []Line{{Pricing: "spot", Tiers: []Tier{{Tier: "marketplace", Series: 1,
			Median: 1, Cheapest: 1, Provider: "vast", Region: evil}}}},
			SpotMoves: []Move{{Provider: "vast", SKU: evil, Region: "US", From: 2, To: 1, MovePct: -50, Low: 1, High: 2, Changes: 1,
				Command: "gpuprice series --provider vast --sku " + evil}}}},
		Failed: []FailedSource{{Source: "vast", Runs: 1, Failed: 1, Last: schemas.Run{Source: "vast",
			Status: schemas.RunFailed, Error: evil}}}}
	var md, html bytes.Buffer
	if err := Markdown(&md, d); err != nil {
		t.Fatal(err)
	}
	if err := HTML(&html, d); err != nil {
		t.Fatal(err)
	}
	sl, _ := json.Marshal(Slack(d))
	var m SlackMessage
	_ = json.Unmarshal(sl, &m)
	var slack strings.Builder
	for _, b := range m.Blocks {
		if b.Text != nil {
			slack.WriteString(b.Text.Text)
		}
		for _, e := range b.Elements {
			slack.WriteString(e.Text)
		}
	}
	for form, s := range map[string]string{"markdown": md.String(), "html": html.String(), "slack": slack.String()} {
		for _, bad := range []string{"<!channel>", "<script>", "<https://evil"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s holds %q:\n%s", form, bad, s)
			}
		}
		if !strings.Contains(s, "channel") {
			t.Errorf("%s lost the text:\n%s", form, s)
		}
	}
	if strings.Contains(md.String(), " [x](javascript") {
		t.Errorf("markdown made a link:\n%s", md.String())
	}
}

// TestCommandQuoted: a command the digest prints is one a shell reads back as the
// same arguments, whatever a host wrote in a SKU or region (spaces, $(…), quotes,
// backticks, a newline); the plain ones stay unquoted.
func TestCommandQuoted(t *testing.T) {
	args := []string{"series", "--provider", "vast", "--sku", "RTX 4090 $(rm -rf ~) `id`", "--region", "it's\nUS",
		"--since", "7d", "--at", "2026-11-02T00:00:00Z"}
	line := command(args...)
	if !strings.HasPrefix(line, "gpuprice series --provider vast --sku '") ||
		!strings.HasSuffix(line, " --since 7d --at 2026-11-02T00:00:00Z") {
		t.Errorf("command: %s", line)
	}
	got, err := shell.Fields(line, func(string) string { return "" })
	if err != nil || !slices.Equal(got, append([]string{"gpuprice"}, args...)) {
		t.Errorf("read back %q (%v), want %q", got, err, args)
	}
	if line := command("risk", "--gpu", "a\x00b"); line != "gpuprice risk --gpu '<unquotable argument>'" {
		t.Errorf("NUL: %q", line)
	}
}

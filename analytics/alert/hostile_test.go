package alert

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// TestSlackTextHostile feeds issue 29's corpus to every field Slack shows: each
// event stays its own lines (no forged RESOLVED line), no <!channel>, <@user> or
// <url|text> comes from data, and the one link is gpuprice's.
func TestSlackTextHostile(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	for _, h := range textsafe.Hostile {
		ev := []Event{{Status: StatusFiring, Rule: h, Summary: "H100 in " + h + " at $1.9", StartsAt: t0,
			Series:   &SeriesRef{GPU: "H100-SXM-80GB", Provider: "vast", Region: h, SKU: h},
			Compared: []Point{{Label: h, Value: 1.9, At: t0}},
			URL:      "https://gpuprice.example/#/series?region=" + h}}
		got := SlackText(ev)
		lines := strings.Split(got, "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], ":rotating_light: FIRING *") ||
			!strings.HasPrefix(lines[1], ">compared: ") || !strings.HasPrefix(lines[2], ">series: ") {
			t.Errorf("%.80q: lines\n%.600s", h, got)
			continue
		}
		// The only < > left are the link's own, at the end of the series line.
		body := strings.TrimSuffix(got, "|view in gpuprice>")
		i := strings.LastIndex(body, " <")
		if i < 0 {
			t.Errorf("%.80q: no link in %.600q", h, got)
			continue
		}
		link := body[i+2:]
		text := strings.ReplaceAll(body[:i], "\n>", "\n") // the quote marks of the detail lines are gpuprice's
		if strings.ContainsAny(text, "<>") || strings.ContainsAny(link, "<>| \n") {
			t.Errorf("%.80q: markup from data in %.600q", h, got)
		}
		if strings.Contains(got, "<!") || strings.Count(got, "|view in gpuprice>") != 1 {
			t.Errorf("%.80q: %.600q", h, got)
		}
	}
}

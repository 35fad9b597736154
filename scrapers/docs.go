package scrapers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// Markers of the generated parts of README.md and deploy/gpuprice.example.yaml: what
// lies between a begin and an end marker is written by `go generate ./scrapers/all`
// from the registry (ReadmeTable, SampleSources); the rest of each file is written by
// hand.
const (
	ReadmeBegin = "<!-- BEGIN sources table: generated from the source registry (go generate ./scrapers/all); edit the " +
		"source packages, not this table -->"
	ReadmeEnd   = "<!-- END sources table -->"
	SampleBegin = "# BEGIN sources: generated from the source registry (go generate ./scrapers/all); edit the source " +
		"packages, not this section"
	SampleEnd = "# END sources"
)

var tierOrder = map[string]int{schemas.TierHyperscaler: 0, schemas.TierSpecialist: 1, schemas.TierMarketplace: 2}

// byTier returns the registered sources' infos, hyperscalers first, then specialists,
// then marketplaces, each by name.
func byTier() []Info {
	var out []Info
	for _, n := range Names() {
		info, _, _ := Lookup(n)
		out = append(out, info)
	}
	for i := 1; i < len(out); i++ { // insertion sort: stable, a dozen entries
		for j := i; j > 0 && tierOrder[out[j].Tier] < tierOrder[out[j-1].Tier]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// ReadmeTable is the README's source table: one row per registered source, from its
// Info (tier) and Doc.
func ReadmeTable() string {
	var b strings.Builder
	b.WriteString("| source | provider | tier | method | on-demand | spot | reserved / commitment | credentials |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	cell := func(s string) string {
		if s == "" {
			return "—"
		}
		return strings.ReplaceAll(s, "|", `\|`)
	}
	for _, i := range byTier() {
		d := i.Doc
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", i.Name, cell(d.ProviderTitle), i.Tier,
			cell(d.Method), cell(d.OnDemand), cell(d.Spot), cell(d.Reserved), cell(d.Credentials))
	}
	return b.String()
}

// SampleSources is the sample configuration's entries under sources: for every
// registered source its defaults (enabled, schedule, endpoint) and its sample options.
func SampleSources() string {
	var b strings.Builder
	for _, i := range byTier() {
		fmt.Fprintf(&b, "  # %s\n", i.Description)
		if i.Credentials != "" {
			fmt.Fprintf(&b, "  # Credentials: %s.\n", i.Credentials)
		}
		fmt.Fprintf(&b, "  %s:\n", i.Name)
		b.WriteString("    enabled: true\n")
		fmt.Fprintf(&b, "    schedule: %q\n", i.Schedule)
		fmt.Fprintf(
			&b,
			"    # endpoint: %s   # the first URL: point it at a mirror or a recording\n",
			i.DefaultEndpoint,
		)
		if opts := strings.TrimSpace(i.SampleOptions); opts != "" {
			b.WriteString("    options:\n")
			for _, l := range strings.Split(opts, "\n") {
				fmt.Fprintf(&b, "      %s\n", strings.TrimRight(l, " "))
			}
		}
	}
	return b.String()
}

// ErrNoMarkers is returned by Splice for a document without the markers.
var ErrNoMarkers = errors.New("scrapers: generated-section markers not found")

// Splice returns doc with the lines between the begin and end marker lines replaced
// by content.
func Splice(doc, begin, end, content string) (string, error) {
	i := strings.Index(doc, begin+"\n")
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return "", fmt.Errorf("%w: %q … %q", ErrNoMarkers, begin, end)
	}
	start := i + len(begin) + 1
	return doc[:start] + content + doc[j:], nil
}

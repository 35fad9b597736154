package cli

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/query"
)

// historyFlags are the flags of the imports of a git history (skypilot-catalog,
// gcp-pricing-calculator): a window of commit times, sampling, regions and the
// manifest of the snapshots imported.
type historyFlags struct {
	since, until, manifest string
	every                  time.Duration
	regions                []string
	from, to               time.Time // since and until, parsed
	used                   [][]string
}

func (h *historyFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&h.since, "since", "", "only commits at or after this time (a date or RFC 3339)")
	cmd.Flags().StringVar(&h.until, "until", "", "only commits before this time (a date or RFC 3339)")
	cmd.Flags().Var(spanFlag(&h.every), "every",
		"per file, the first snapshot of each period this long (1d, 3d, 1w; default all)")
	cmd.Flags().StringSliceVar(&h.regions, "regions", nil, "only rows of these regions, of any cloud (default all)")
	cmd.Flags().StringVar(&h.manifest, "manifest", "",
		"write the snapshots imported (commit, time, path, rows) to this CSV file")
}

// parse reads --since and --until.
func (h *historyFlags) parse() error {
	for _, b := range []struct {
		flag, text string
		t          *time.Time
	}{{"since", h.since, &h.from}, {"until", h.until, &h.to}} {
		if b.text == "" {
			continue
		}
		t, err := query.ParseAt(b.text)
		if err != nil {
			return usagef("--%s %q: use a date (2025-01-01) or RFC 3339", b.flag, b.text)
		}
		*b.t = t
	}
	return nil
}

// record keeps one imported snapshot for the manifest.
func (h *historyFlags) record(commit string, at time.Time, path, cloud, version string, rows int) {
	h.used = append(h.used, []string{commit, at.Format(time.RFC3339), path, cloud, version, fmt.Sprint(rows)})
}

// writeManifest writes the snapshots imported, oldest first, when --manifest is set.
func (h *historyFlags) writeManifest() error {
	if h.manifest == "" {
		return nil
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"commit", "committed_at", "path", "cloud", "version", "rows"})
	w.WriteAll(h.used)
	if err := w.Error(); err != nil {
		return fmt.Errorf("--manifest: %w", err)
	}
	if err := os.WriteFile(h.manifest, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--manifest: %w", err)
	}
	return nil
}

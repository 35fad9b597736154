package cli

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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
	bar                    *progress // of the snapshots, once the importer says how many
}

func (h *historyFlags) add(cmd *cobra.Command) {
	commitWindowFlags(cmd.Flags(), &h.since, &h.until)
	cmd.Flags().Var(spanFlag(&h.every), "every",
		"per file, the first snapshot of each period this long (1d, 3d, 1w; default all)")
	cmd.Flags().StringSliceVar(&h.regions, "regions", nil, "only rows of these regions, of any cloud (default all)")
	cmd.Flags().StringVar(&h.manifest, "manifest", "",
		"write the snapshots imported (commit, time, path, rows) to this CSV file")
}

// parse reads --since and --until.
func (h *historyFlags) parse() (err error) {
	h.from, h.to, err = commitWindow(h.since, h.until)
	return err
}

// commitWindowFlags adds --since and --until, the window of commit times of an
// import of a git history.
func commitWindowFlags(fl *pflag.FlagSet, since, until *string) {
	fl.StringVar(since, "since", "", "only commits at or after this time (a date or RFC 3339)")
	fl.StringVar(until, "until", "", "only commits before this time (a date or RFC 3339)")
}

// commitWindow reads --since and --until (commitWindowFlags): empty is no bound.
func commitWindow(since, until string) (from, to time.Time, err error) {
	for _, b := range []struct {
		flag, text string
		t          *time.Time
	}{{"since", since, &from}, {"until", until, &to}} {
		if b.text == "" {
			continue
		}
		if *b.t, err = query.ParseAt(b.text); err != nil {
			return from, to, usagef("--%s %q: use a date (2025-01-01) or RFC 3339", b.flag, b.text)
		}
	}
	return from, to, nil
}

// snapshot is an importer's progress: the bar of total snapshots on w, and, once
// one is imported (done > 0), its line on the bar and its row of the manifest.
func (h *historyFlags) snapshot(w io.Writer, done, total int, commit string, at time.Time,
	path, cloud, version string, rows int) {
	if h.bar == nil {
		h.bar = newProgress(w, total, "snapshots")
	}
	if done > 0 {
		h.used = append(h.used, []string{commit, at.Format(time.RFC3339), path, cloud, version, fmt.Sprint(rows)})
		h.bar.Add(1, fmt.Sprintf("%s @ %s %s: %d rows", path, commit[:min(12, len(commit))], at.Format("2006-01-02"),
			rows))
	}
}

// finish ends the bar, if the importer started one.
func (h *historyFlags) finish() {
	if h.bar != nil {
		h.bar.Finish()
	}
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

package cli

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest/spotadvisor"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

func (a *app) riskImportHistoryCmd() *cobra.Command {
	var path, since, until, format string
	cmd := &cobra.Command{
		Use:   "import-spot-advisor-history REPO",
		Short: "Backfill the interruption bands from the copies of the Spot Advisor file in a git history",
		Long: `import-spot-advisor-history walks the git history of a local clone of a public
repository that keeps a copy of the AWS Spot Advisor file (spot-advisor-data.json),
such as https://github.com/alexei-led/spotinfo: every commit that added or changed
the file is a copy of the bands as of its committer time (the file carries no date
of its own), stored as import-spot-advisor stores one copy, with the commit in each
band's source_url. ` + "`gpuprice risk --changes`" + ` then shows the band moves between copies.
Importing again stores nothing twice. A copy that cannot be read or parsed is listed
with the reason (exit status 3) and the others are stored. It needs the git command.`,
		Example: `  git clone https://github.com/alexei-led/spotinfo ~/spotinfo
  gpuprice risk import-spot-advisor-history ~/spotinfo
  gpuprice risk import-spot-advisor-history ~/spotinfo --since 2024-01-01 --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			im := spotadvisor.Importer{Pathspec: path}
			var err error
			if im.Since, im.Until, err = commitWindow(since, until); err != nil {
				return err
			}
			repo, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			im.Repo = repo
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			copies, err := im.Import(cmd.Context(), st)
			if err != nil {
				return err
			}
			header := []string{"commit", "committed_at", "path", "bands", "status", "error"}
			var rows [][]string
			failed := 0
			for _, c := range copies {
				if c.Status != schemas.RunOK && c.Status != schemas.RunDegraded {
					failed++
				}
				rows = append(rows, []string{c.Short(), c.Time.Format(time.RFC3339), textsafe.Terminal(c.Path),
					strconv.Itoa(c.Bands), c.Status, textsafe.Terminal(c.Error)})
			}
			if err := output(a.stdout, format, header, rows, copies); err != nil {
				return err
			}
			switch {
			case len(copies) == 0:
				fmt.Fprintf(a.stderr, "no copy of the file (%s) in the history of %s\n", im.PathspecOrDefault(), repo)
			case failed == len(copies):
				return fmt.Errorf("%w: none of the %d copies could be stored", ErrAllFailed, len(copies))
			case failed > 0:
				return fmt.Errorf("%w: %d of the %d copies could not be stored", ErrSomeFailed, failed, len(copies))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&path, "path", "", "git pathspec of the copies (default "+spotadvisor.DefaultPathspec+")")
	commitWindowFlags(fl, &since, &until)
	fl.StringVar(&format, "format", "table", "table, json, csv or markdown")
	return cmd
}

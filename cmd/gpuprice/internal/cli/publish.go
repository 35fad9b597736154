package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/publish"
	"github.com/gpuprice/gpuprice/store"
)

func init() {
	addCommand((*app).publishCmd)
	addCommand((*app).verifyCmd)
}

// publishDays are the days a publish run writes (publish.Select): the flags' errors
// are usage errors.
func publishDays(dir string, days []string, since, until string, now time.Time) ([]time.Time, string, error) {
	sel := publish.Selection{Days: days, SinceText: since}
	var err error
	if len(days) == 0 && until != "" {
		if sel.Until, err = parseWhen(until, now); err != nil {
			return nil, "", usagef("--until: %v", err)
		}
	}
	if len(days) == 0 && since != "" {
		if sel.Since, err = parseWhen(since, now); err != nil {
			return nil, "", usagef("--since: %v", err)
		}
	}
	if len(days) > 0 && (since != "" || until != "") {
		return nil, "", usagef("--day and --since/--until: give one or the other")
	}
	list, note, err := publish.Select(dir, sel, now)
	if errors.Is(err, publish.ErrSelection) {
		return nil, "", usageError{err}
	}
	return list, note, err
}

func (a *app) publishCmd() *cobra.Command {
	var out, since, until, format string
	var days []string
	var republish bool
	var signKey string
	cmd := &cobra.Command{
		Use:   "publish --out DIR [--since 90d | --day 2026-11-01 …] [--republish]",
		Short: "Write immutable daily snapshots (Parquet prices, CSV index and spreads, manifests) for citing",
		Long: `Publish writes citable daily snapshots of the store to DIR: for each UTC day (of
effective_at), the day's observations as Parquet in a Hive-partitioned dataset
(prices/dt=YYYY-MM-DD/part-00000.parquet, the columns of ` + "`export --format parquet`" + `),
the day's reference index and tier spreads as CSV (index/dt=…, spreads/dt=…, as
` + "`gpuprice index`" + ` and ` + "`spreads`" + ` compute them), and a manifest (manifests/DAY.json) with
the method versions, row counts and every file's SHA-256; catalog.json lists every
published day. ` + "`gpuprice verify DIR`" + ` checks it all.

Files are never changed once written, and the same store gives the same bytes:
publishing a day again with the same data writes nothing ("unchanged"). A day whose
data changed since it was published (a backfill, a late import, a new method) is
reported ("changed", exit status 1) and left as published; --republish writes the
new data as version 2 (3, …) under revisions/vN/ beside the old, which stays where
any citation of it points. A day with no observation and no price in force is
skipped ("empty"), and so is a day on which nothing was observed ("not observed":
no observation effective on it, no series in force seen on it, no live collection
on it), whose prices would only be carried from another day's sighting; the line
says when they were last seen.

Days: --day (repeatable, YYYY-MM-DD), or --since (and --until) as a duration back
from now (90d, 2w) or a date; without them, the days after the last published one
through yesterday (yesterday alone in a new directory). Only whole UTC days that
are over are published. Layout and how to read it from DuckDB, pandas and Spark:
docs/user-guide.md, "Citable snapshots".

--sign KEYFILE signs every manifest written and the catalog with a minisign key
(FILE.minisig beside each; ` + "`gpuprice publish keygen`" + ` makes a pair), so readers check
with ` + "`gpuprice verify --key PUB`" + ` (or minisign -V) that the snapshot is the publisher's.
Publish writes only inside DIR: a symbolic link in DIR (a linked index/) is refused.`,
		Example: `  gpuprice publish --out /srv/gpuprice-snapshots --since 2026-01-01
  gpuprice publish --out /srv/gpuprice-snapshots            # daily, from cron: the days since the last run
  gpuprice publish --out /srv/gpuprice-snapshots --day 2026-11-01 --republish
  duckdb -c "SELECT dt, gpu, median(price_usd_gpu_hour)
    FROM read_parquet('/srv/gpuprice-snapshots/prices/*/*.parquet', hive_partitioning = true) GROUP BY ALL"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out DIR is required")
			}
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			list, note, err := publishDays(out, days, since, until, time.Now())
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(a.stderr, note)
			}
			if len(list) == 0 {
				return nil
			}
			ctx := cmd.Context()
			st, err := a.openExistingStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			ro, err := a.rollups(st)
			if err != nil {
				return err
			}
			src := struct {
				store.Store
				store.Rollups
			}{st, ro}
			opts := publish.Options{Republish: republish}
			if signKey != "" {
				k, err := publish.LoadPrivateKey(signKey)
				if err != nil {
					return usagef("%v", err)
				}
				opts.Sign = &k
			}
			if format == "text" {
				opts.Progress = func(r publish.DayResult) { fmt.Fprintln(a.stdout, publishLine(r)) }
			}
			start := time.Now()
			res, err := publish.Publish(ctx, src, out, list, opts)
			if format == "json" {
				if res == nil {
					res = []publish.DayResult{}
				}
				b, jerr := json.MarshalIndent(res, "", "  ")
				if jerr != nil {
					return jerr
				}
				fmt.Fprintln(a.stdout, string(b))
			}
			counts := map[string]int{}
			for _, r := range res {
				counts[r.Status]++
			}
			a.log.Info("published", "dir", out, "days", len(res), "published", counts[publish.StatusPublished],
				"unchanged", counts[publish.StatusUnchanged], "changed", counts[publish.StatusChanged],
				"republished", counts[publish.StatusRepublished], "empty", counts[publish.StatusEmpty],
				"not_observed", counts[publish.StatusNotObserved],
				"duration", time.Since(start).Round(time.Millisecond))
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("%w: days written so far are complete (%v)", ErrInterrupted, err)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", "", "the snapshot directory (created when missing)")
	fl.StringVar(&since, "since", "", "publish the days from this one: a duration back from now (90d, 2w) or a date")
	fl.StringVar(&until, "until", "", "publish only the days wholly before this: a duration back from now or a date/time")
	fl.StringSliceVar(&days, "day", nil, "publish this UTC day (YYYY-MM-DD; repeatable)")
	fl.BoolVar(&republish, "republish", false,
		"write a new version of a day whose data changed since it was published (beside the old)")
	fl.StringVar(&format, "format", "text", "text or json")
	fl.StringVar(&signKey, "sign", "", "sign the manifests and catalog with this minisign private key file")
	cmd.AddCommand(a.keygenCmd())
	return cmd
}

func (a *app) keygenCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --out NAME",
		Short: "Make a key pair for publish --sign: NAME.key (private, mode 0600) and NAME.pub",
		Long: `Keygen writes a new minisign key pair: NAME.key, the private key (no password; keep it
where only the publisher reads it) and NAME.pub, the public key readers give to
` + "`gpuprice verify --key`" + ` (or ` + "`minisign -V -p`" + `). A key made by ` + "`minisign -G`" + ` works too
(its password in $` + publish.PasswordEnv + `). Existing files are never overwritten.`,
		Example: `  gpuprice publish keygen --out /etc/gpuprice/snapshots
  gpuprice publish --out /srv/gpuprice-snapshots --sign /etc/gpuprice/snapshots.key`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out NAME is required")
			}
			pk, err := publish.GenerateKey(out+".key", out+".pub")
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "wrote %s.key (private) and %s.pub (public key %s)\n", out, out, pk)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the key files' name without extension")
	return cmd
}

// publishLine is one day's result as a line of text.
func publishLine(r publish.DayResult) string {
	rows := fmt.Sprintf("prices %d, index %d, spreads %d", r.Rows.Prices, r.Rows.Index, r.Rows.Spreads)
	switch r.Status {
	case publish.StatusEmpty:
		return fmt.Sprintf("%s  empty        no observation and no price in force: nothing written", r.Day)
	case publish.StatusNotObserved:
		seen := "never seen"
		if r.LastSeen != "" {
			seen = "last seen " + r.LastSeen
		}
		return fmt.Sprintf("%s  not observed prices in force only carried from another day's sighting (%s): nothing written",
			r.Day, seen)
	case publish.StatusUnchanged:
		return fmt.Sprintf("%s  unchanged    v%d  %s  %s (sha256:%.12s…): same data, nothing written", r.Day, r.Version, rows,
			r.Manifest, r.ManifestSHA256)
	case publish.StatusChanged:
		return fmt.Sprintf("%s  CHANGED      v%d  %s since published: %s; left as published (--republish writes v%d)",
			r.Day, r.Version, rows, strings.Join(r.Changes, "; "), r.Version+1)
	case publish.StatusRepublished:
		return fmt.Sprintf("%s  republished  v%d  %s  %s (sha256:%.12s…): %s", r.Day, r.Version, rows, r.Manifest,
			r.ManifestSHA256, strings.Join(r.Changes, "; "))
	}
	return fmt.Sprintf("%s  %-11s  v%d  %s  %s (sha256:%.12s…)", r.Day, r.Status, r.Version, rows, r.Manifest,
		r.ManifestSHA256)
}

func (a *app) verifyCmd() *cobra.Command {
	var format, key, expect string
	cmd := &cobra.Command{
		Use:   "verify DIR",
		Short: "Check a snapshot directory written by publish: every hash and row count",
		Long: `Verify checks a directory written by ` + "`gpuprice publish`" + `: the catalog's own hash; for every
version of every day, its manifest's own hash and that it is the one the catalog
lists; for every file, its size, SHA-256 and row count (each Parquet file read back
row by row, each CSV record counted) and the prices' content hash; and that no file
lies in the directory that no manifest lists (a dataset reader would read it).

--key PUB (a public key file or its text) also checks the signatures publish --sign
wrote: without them anyone can change a value and re-hash file, manifest and
catalog. --expect SHA256 checks that the catalog or a manifest has the hash the
publisher gave you (a citation's sha256).

Verify reads only regular files inside DIR: a symbolic link, device or FIFO is a
problem, never read; the catalog and manifests are capped at 64 MiB, data files are
streamed, and SIGINT/SIGTERM stop it.

Exit status 0 when everything checks, 1 otherwise, with one line per problem naming
the file at fault. Verify needs no store.`,
		Example: `  gpuprice verify /srv/gpuprice-snapshots
  gpuprice verify /srv/gpuprice-snapshots --format json
  gpuprice verify /srv/gpuprice-snapshots --key snapshots.pub --expect 3f9c…`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			var o publish.VerifyOptions
			if key != "" {
				k, err := publish.LoadPublicKey(key)
				if err != nil {
					return usagef("%v", err)
				}
				o.Key = &k
			}
			if expect != "" {
				e := strings.TrimPrefix(strings.ToLower(expect), "sha256:")
				if len(e) != 64 || strings.Trim(e, "0123456789abcdef") != "" {
					return usagef("--expect %q: not a SHA-256 (64 hex digits)", expect)
				}
				o.Expect = e
			}
			rep, err := publish.Verify(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			if format == "json" {
				b, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, string(b))
			} else {
				for _, p := range rep.Problems {
					fmt.Fprintf(a.stdout, "FAIL %s\n", p)
				}
				if rep.OK() {
					fmt.Fprintf(a.stdout,
						"ok: %s: %d day versions, %d files (prices %d rows, index %d, spreads %d): every hash and row count checks\n",
						rep.Dir, rep.Days, rep.Files, rep.Rows.Prices, rep.Rows.Index, rep.Rows.Spreads)
				}
			}
			if !rep.OK() {
				return fmt.Errorf("%s: %d problem(s), first: %s", rep.Dir, len(rep.Problems), rep.Problems[0])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text or json")
	cmd.Flags().StringVar(&key, "key", "", "the publisher's minisign public key (file or text): check the signatures")
	cmd.Flags().StringVar(&expect, "expect", "", "the SHA-256 the catalog or a manifest must have")
	return cmd
}

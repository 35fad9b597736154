package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/ingest/export"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

func init() { addCommand((*app).exportCmd) }

func (a *app) exportCmd() *cobra.Command {
	var since, until, format, out string
	var rowGroup int64
	filters := &params{} // names as typed, resolved once the store is open
	cmd := &cobra.Command{
		Use:   "export [filters] [--since 90d] --format csv|jsonl|parquet [--out FILE]",
		Short: "Stream stored observations to CSV, JSON Lines or Parquet",
		Long: `Export writes every stored observation matching the filters, once each, ordered by
series (provider, sku, region, zone, pricing) then effective_at. Rows stream from the
store to the output, so an export of any size runs in bounded memory.

  csv      the columns of ` + "`prices --format csv`" + ` (which ` + "`import csv`" + ` reads back)
  jsonl    one JSON observation per line, with run_id and attrs
  parquet  the CSV's columns, timestamps as TIMESTAMP (UTC, µs), numbers as DOUBLE;
           readable by DuckDB, ClickHouse, pandas/pyarrow, Spark and ` + "`import csv`" + `

--since and --until take a duration back from now (90d, 36h, 2w) or a date or time
(2026-01-31, 2026-01-31T12:00:00Z) and bound effective_at. Without --out the export
goes to standard output; with it, to a temporary file renamed to FILE when complete.`,
		Example: `  gpuprice export --format parquet --out prices.parquet
  gpuprice export --provider aws --pricing spot --since 90d --format csv > aws-spot.csv
  duckdb -c "SELECT gpu, median(price_usd_gpu_hour) FROM 'prices.parquet' GROUP BY gpu"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			var f store.Filter // names are resolved once the store is open
			var err error
			now := time.Now().UTC()
			if since != "" {
				if f.Since, err = parseWhen(since, now); err != nil {
					return usagef("--since: %w", err)
				}
			}
			if until != "" {
				if f.Until, err = parseWhen(until, now); err != nil {
					return usagef("--until: %w", err)
				}
			}
			if _, err := export.NewEncoder(format, io.Discard, export.Options{}); err != nil {
				return usagef("--format %q: use csv, jsonl or parquet", format)
			}
			st, err := a.openExistingStore(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			// Names as typed (h100: every H100 variant), as prices takes them.
			r, err := a.reader(st)
			if err != nil {
				return err
			}
			ff := filters.values()
			sel, err := r.Resolve(ctx, query.Filter{GPU: ff.Get("gpu"), Provider: ff.Get("provider"),
				Pricing: ff.Get("pricing"), Region: ff.Get("region"), Tier: ff.Get("tier")})
			if err != nil {
				return query.FlagError(err)
			}
			a.noteMatches(sel.Matches)
			sel.Since, sel.Until = f.Since, f.Until
			f = sel.Filter
			src := selected{st, sel}
			w := a.stdout
			var tmp *os.File
			if out != "" {
				tmp, err = os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
				if err != nil {
					return fmt.Errorf("--out: %w", err)
				}
				defer os.Remove(tmp.Name()) // after the rename, a no-op
				w = tmp
			}
			start := time.Now()
			n, err := export.Export(ctx, src, f, format, w, export.Options{RowGroupRows: rowGroup, RawCSV: a.rawCSV})
			if tmp != nil {
				cerr := tmp.Close()
				if err == nil && cerr != nil {
					err = fmt.Errorf("--out: %w", cerr)
				}
				if err == nil {
					if rerr := os.Rename(tmp.Name(), out); rerr != nil {
						err = fmt.Errorf("--out: %w", rerr)
					}
				}
			}
			if err != nil {
				return err
			}
			a.log.Info("exported", "rows", n, "format", format, "out", out, "duration",
				time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	filters.fl = cmd.Flags()
	filters.filters()
	fl := cmd.Flags()
	fl.StringVar(&since, "since", "",
		"only effective_at at or after this: a duration back from now (90d, 36h, 2w) or a date/time")
	fl.StringVar(&until, "until", "", "only effective_at before this: a duration back from now or a date/time")
	fl.StringVar(&format, "format", "csv", "csv, jsonl or parquet")
	fl.StringVar(&out, "out", "", "write to this file (default: standard output)")
	fl.Int64Var(&rowGroup, "parquet-row-group", 0,
		"rows per Parquet row group, the bound of the memory Parquet export holds (default 65536)")
	cmd.AddCommand(a.exportOpenCostCmd())
	return cmd
}

// parseWhen reads a point in time given as a duration back from now ("90d", "36h",
// "2w", "1h30m") or as a date or time ("2026-01-31", "2026-01-31T12:00:00Z").
func parseWhen(v string, now time.Time) (time.Time, error) {
	if d, err := parseAgo(v); err == nil {
		return now.Add(-d), nil
	}
	for _, l := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{},
		fmt.Errorf("%q is neither a duration (90d, 36h, 2w) nor a date or time (2026-01-31, 2026-01-31T12:00:00Z)", v)
}

// parseAgo reads a positive duration with Go's units plus d (days) and w (weeks).
func parseAgo(v string) (time.Duration, error) {
	for suffix, unit := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(v, suffix); ok {
			f, err := strconv.ParseFloat(n, 64)
			if err != nil || f <= 0 {
				return 0, fmt.Errorf("%q is not a positive duration", v)
			}
			return time.Duration(f * float64(unit)), nil
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", v)
	}
	return d, nil
}

// selected streams the observations of a store that a selection keeps (a GPU family
// matches several GPUs, which the store filter alone cannot say).
type selected struct {
	st  store.Store
	sel query.Selection
}

func (s selected) Each(ctx context.Context, f store.Filter, fn func(schemas.Observation) error) error {
	return s.st.Each(ctx, f, func(o schemas.Observation) error {
		if !s.sel.Keep(o.GPU, o.Pricing, o.Region) {
			return nil
		}
		return fn(o)
	})
}

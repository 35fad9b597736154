package query

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// Missing is the cell of a value that does not exist (a ratio on a day without a
// specialist price): "-" in tables and Markdown, empty in CSV, null in JSON.
const Missing = "\x00"

func f4(v float64) string  { return strconv.FormatFloat(v, 'f', 4, 64) }
func pct(v float64) string { return strconv.FormatFloat(v*100, 'f', 2, 64) }

func opt4(v *float64) string { return optf(v, 4) }

func optf(v *float64, prec int) string {
	if v == nil {
		return Missing
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

// Formats are the output formats of the analytics commands.
var Formats = []string{"table", "json", "csv", "markdown"}

// Write writes rows as a table, csv or markdown, or v as indented JSON: every table
// command's one writer. A column has one name in every format: its CSV and Markdown
// name (snake_case, as the JSON field), upper-cased in a table. Cells equal to
// Missing become "-" (table, markdown) or "" (csv). A table with no rows says empty
// (default: that nothing is in the window).
func Write(w io.Writer, format string, header []string, rows [][]string, v any, empty ...string) error {
	cells := func(r []string, missing string) []string {
		out := make([]string, len(r))
		for i, c := range r {
			if c == Missing {
				c = missing
			}
			out[i] = c
		}
		return out
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		for _, r := range rows {
			if err := cw.Write(csvCells(w, cells(r, ""))); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	case "markdown":
		esc := textsafe.Markdown
		fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
		fmt.Fprintln(w, "|"+strings.Repeat(" --- |", len(header)))
		for _, r := range rows {
			c := cells(r, "-")
			for i := range c {
				c[i] = esc(c[i])
			}
			fmt.Fprintln(w, "| "+strings.Join(c, " | ")+" |")
		}
		return nil
	case "table":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(header, "\t")))
		for _, r := range rows {
			c := cells(r, "-")
			for i := range c {
				c[i] = textsafe.Terminal(c[i])
			}
			fmt.Fprintln(tw, strings.Join(c, "\t"))
		}
		if len(rows) == 0 {
			msg := "(nothing in the window: run `gpuprice collect` and `gpuprice rollup`, or loosen the filters)"
			if len(empty) > 0 {
				msg = empty[0]
			}
			if msg != "" {
				fmt.Fprintln(tw, msg)
			}
		}
		return tw.Flush()
	}
	return fmt.Errorf("--format %q: use table, json, csv or markdown", format)
}

// RawCSV marks w so that the CSV written to it is raw: cells starting = + - @ (a
// formula to a spreadsheet) are written as they are, not prefixed with ' as
// textsafe.CSV does by default (`--raw-csv`).
func RawCSV(w io.Writer) io.Writer { return rawCSV{w} }

type rawCSV struct{ io.Writer }

// IsRawCSV reports whether w was marked by RawCSV.
func IsRawCSV(w io.Writer) bool {
	_, ok := w.(rawCSV)
	return ok
}

// csvCells are the cells of a record as written to w: through textsafe.CSV unless
// w is RawCSV.
func csvCells(w io.Writer, rec []string) []string {
	if IsRawCSV(w) {
		return rec
	}
	return textsafe.CSVRecord(rec)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

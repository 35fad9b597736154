package query

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

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
		var dropped []string
		if m, ok := w.(marked); ok {
			header, rows, dropped = fit(m.width, header, rows)
		}
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
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(dropped) > 0 && len(rows) > 0 {
			_, err := fmt.Fprintf(w, "(--wide adds %s)\n", strings.ToUpper(strings.Join(dropped, ", ")))
			return err
		}
		return nil
	}
	return fmt.Errorf("--format %q: use table, json, csv or markdown", format)
}

// RawCSV marks w so that the CSV written to it is raw: cells starting = + - @ (a
// formula to a spreadsheet) are written as they are, not prefixed with ' as
// textsafe.CSV does by default (`--raw-csv`).
func RawCSV(w io.Writer) io.Writer {
	m := marked{Writer: w}
	if o, ok := w.(marked); ok {
		m = o
	}
	m.raw = true
	return m
}

// FitTo marks w so that a table written to it fits width columns (`--wide` leaves
// it unmarked): the columns of secondary interest (Secondary) are left out, last
// first, until it fits, and a line under the table names them. Other formats are
// written whole.
func FitTo(w io.Writer, width int) io.Writer {
	m := marked{Writer: w}
	if o, ok := w.(marked); ok {
		m = o
	}
	m.width = width
	return m
}

// marked is a writer with the output options RawCSV and FitTo set.
type marked struct {
	io.Writer
	raw   bool
	width int
}

// IsRawCSV reports whether w was marked by RawCSV.
func IsRawCSV(w io.Writer) bool {
	m, ok := w.(marked)
	return ok && m.raw
}

// Secondary are the columns a table fitted to a terminal (FitTo) leaves out, in the
// order they go: what identifies a row and its price stays.
var Secondary = []string{
	"origin", "price_basis", "price_scope", "zone", "observed_at", "tier", "gpu_count", "price_usd_hour",
	"interconnect", "mfu_source", "region", "market_p10", "market_p90", "first_seen", "last_seen",
	"finished_at", "started_at", "error", "reason", "detail",
}

// fit returns header and rows without the Secondary columns that make the table
// (columns two spaces apart) wider than width, and the names of those left out.
func fit(width int, header []string, rows [][]string) ([]string, [][]string, []string) {
	if width <= 0 {
		return header, rows, nil
	}
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], utf8.RuneCountInString(c))
			}
		}
	}
	keep := make([]bool, len(header))
	total := 0
	for i := range header {
		keep[i] = true
		total += widths[i] + 2
	}
	var dropped []string
	for _, name := range Secondary {
		if total-2 <= width {
			break
		}
		for i, h := range header {
			if keep[i] && h == name {
				keep[i] = false
				total -= widths[i] + 2
				dropped = append(dropped, h)
			}
		}
	}
	// Still too wide: long cells are cut (an SKU, a list) to maxCell with an ellipsis,
	// then the last columns go.
	const maxCell = 32
	cut := false
	if total-2 > width {
		for i := range header {
			if keep[i] && widths[i] > maxCell {
				total -= widths[i] - maxCell
				widths[i] = maxCell
				cut = true
			}
		}
	}
	for i := len(header) - 1; i >= 2 && total-2 > width; i-- {
		if keep[i] {
			keep[i] = false
			total -= widths[i] + 2
			dropped = append(dropped, header[i])
		}
	}
	if dropped == nil && !cut {
		return header, rows, nil
	}
	pick := func(r []string) []string {
		out := make([]string, 0, len(r))
		for i, c := range r {
			if i >= len(keep) || keep[i] {
				out = append(out, c)
			}
		}
		return out
	}
	fitted := make([][]string, len(rows))
	for i, r := range rows {
		fitted[i] = pick(r)
		if cut {
			for j, c := range fitted[i] {
				if utf8.RuneCountInString(c) > maxCell {
					fitted[i][j] = string([]rune(c)[:maxCell-1]) + "…"
				}
			}
		}
	}
	return pick(header), fitted, dropped
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

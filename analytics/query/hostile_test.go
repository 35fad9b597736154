package query

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// hostileRows are prices whose every third-party field is a string of issue 29's
// corpus, and one whose price cells are negative numbers (a number, not a formula).
func hostileRows() []schemas.Observation {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var rows []schemas.Observation
	for _, h := range textsafe.Hostile {
		rows = append(rows, schemas.Observation{ObservedAt: t0, EffectiveAt: t0, Provider: "vast", GPU: "H100-SXM-80GB",
			GPUName: h, SKU: h, Region: h, Zone: h, Pricing: schemas.OnDemand, PriceUSDHour: 1.9, PriceUSDGPUHour: 1.9,
			GPUCount: 1, Currency: "USD", Unit: schemas.UnitHour, FXRate: 1, SourceURL: h})
	}
	return rows
}

// TestCSVHostile: `prices --format csv` and /api/v1/prices?format=csv write no cell
// a spreadsheet runs as a formula, keep negative numbers numbers, and RawCSV writes
// the cells as they are.
func TestCSVHostile(t *testing.T) {
	rows := hostileRows()
	rows[0].PriceNative, rows[0].FXRate = -3.5, -0.25
	var b bytes.Buffer
	if err := WriteObservations(&b, "csv", rows); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	sawNegative := false
	for _, r := range recs[1:] {
		for _, c := range r {
			sawNegative = sawNegative || c == "-3.5"
			if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && c != "-3.5" && c != "-0.25" {
				t.Errorf("cell %.80q starts a formula", c)
			}
		}
	}
	if !sawNegative {
		t.Error("the negative number -3.5 did not stay a number")
	}
	var raw bytes.Buffer
	if err := WriteObservations(RawCSV(&raw), "csv", rows[4:5]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(raw.String(), "=HYPERLINK(") || strings.Contains(raw.String(), "'=HYPERLINK(") {
		t.Errorf("raw CSV changed a cell: %s", raw.String())
	}
	// The table writer of every analytics command (and its /api/v1 CSV) too.
	b.Reset()
	if err := Write(&b, "csv", []string{"region"}, [][]string{{"=cmd|' /C calc'!A0"}, {"-3.5"}}, nil); err != nil {
		t.Fatal(err)
	}
	if b.String() != "region\n'=cmd|' /C calc'!A0\n-3.5\n" {
		t.Errorf("csv %q", b.String())
	}
}

// TestMarkdownHostile: `prices --format markdown` writes no HTML and one table row
// per price, each with the columns' number of cells.
func TestMarkdownHostile(t *testing.T) {
	rows := hostileRows()
	var b bytes.Buffer
	if err := WriteObservations(&b, "markdown", rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != len(rows)+2 {
		t.Fatalf("%d lines for %d rows", len(lines), len(rows))
	}
	for _, l := range lines[2:] {
		if strings.ContainsAny(l, "<>") {
			t.Errorf("HTML in %.200q", l)
		}
		cells := strings.Count(l, "|") - strings.Count(l, `\|`)
		if cells != len(PricesColumns)+1 {
			t.Errorf("%d cell borders in %.200q", cells, l)
		}
		if strings.Contains(l, "](") && !strings.Contains(l, `\](`) {
			t.Errorf("a link in %.200q", l)
		}
	}
}

// TestTableHostile: `prices` and `alerts` tables show non-printables escaped: no
// ESC, no OSC 8 link, no line break reaches the terminal, one line per row.
func TestTableHostile(t *testing.T) {
	rows := hostileRows()
	var b bytes.Buffer
	if err := WriteObservations(&b, "table", rows); err != nil {
		t.Fatal(err)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if n := strings.Count(out, "\n") + 1; n != len(rows)+1 {
		t.Errorf("%d lines for %d rows", n, len(rows))
	}
	for _, r := range out {
		if r != '\n' && (!unicode.IsPrint(r) || r == '\u202e' || r == '\u2066') {
			t.Fatalf("%U reaches the terminal", r)
		}
	}
	if !strings.Contains(out, `\x1b[2J`) || !strings.Contains(out, `\u202e`) {
		t.Error("escapes not shown")
	}
}

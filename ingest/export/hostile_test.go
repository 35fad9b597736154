package export

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// TestCSVExportHostile: `export --format csv` guards every formula-leading cell of
// issue 29's corpus (numbers stay numbers), `import csv`'s UnCSV gives each value
// back, and Options.RawCSV (`--raw-csv`) writes them as they are.
func TestCSVExportHostile(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	obs := schemas.HostileObservations(t0)
	for i := range obs {
		obs[i].PriceNative = -3.5 // a negative number, not a formula
	}
	for _, raw := range []bool{false, true} {
		var b bytes.Buffer
		enc, err := NewEncoder(CSV, &b, Options{RawCSV: raw})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range obs {
			if err := enc.Write(o); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs[1:] {
			want := Record(obs[i])
			for j, c := range r {
				if !raw && c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) && c != "-3.5" {
					t.Errorf("cell %.80q starts a formula", c)
				}
				got := c
				if !raw {
					got = textsafe.UnCSV(c)
				}
				if got != want[j] {
					t.Errorf("raw %v: column %s: %.80q, want %.80q", raw, recs[0][j], got, want[j])
				}
			}
		}
	}
}

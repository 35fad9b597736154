package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

// prices --explain shows, for every stored price, how the published figure became
// $/GPU-hour: in the table and as an "explain" member of each JSON row.
func TestPricesExplain(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "e.duckdb")
	cfg := importedStore(t, dsn)
	var rows []struct {
		schemas.Observation
		Explain schemas.PriceSteps `json:"explain"`
	}
	runJSON(t, &rows, "--config", cfg, "--store", dsn, "prices", "--all-series", "--explain", "--format", "json")
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range rows {
		e := r.Explain
		if e.PriceGPUHour != r.PriceUSDGPUHour || !strings.Contains(e.USDGPUHour, "GPUs =") || e.Published == "" ||
			e.FX == "" || !strings.HasPrefix(e.Scope, "instance") || len(e.Steps) != 6 {
			t.Errorf("%s %s: %+v", r.Provider, r.SKU, e)
		}
	}
	out, code := run(t, "--config", cfg, "--store", dsn, "prices", "--all-series", "--explain", "--provider", "aws")
	if code != 0 || !strings.Contains(out, "published  32.5401 USD per instance-hour") ||
		!strings.Contains(out, "per GPU    $32.5401/h ÷ 8 GPUs = $4.0675/GPU-h") {
		t.Errorf("table:\n%s", out)
	}
}

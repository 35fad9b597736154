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

// index --explain DAY lists the day's members and the series left out with why.
func TestIndexExplain(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "i.duckdb")
	cfg := importedStore(t, dsn)
	var members []struct {
		Group, Status, Series string
		Matched               bool
	}
	runJSON(t, &members, "--config", cfg, "--store", dsn, "index", "--gpu", "H100-SXM-80GB", "--pricing", "on_demand",
		"--explain", "2026-11-01", "--format", "json")
	if len(members) == 0 {
		t.Fatal("no members")
	}
	for _, m := range members {
		if m.Status == "" || m.Series == "" || m.Group == "" {
			t.Errorf("%+v", m)
		}
	}
	if _, code := run(t, "--config", cfg, "--store", dsn, "index", "--explain", "2026-11-01"); code == 0 {
		t.Error("--explain without --gpu and --pricing accepted")
	}
}

package main

import (
	"encoding/json"
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

// The API answers the same explanations: /api/v1/prices?explain=true gives each row
// its "explain" member, /api/v1/index?explain=DAY the day's members.
func TestExplainInAPI(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "a.duckdb")
	cfg := importedStore(t, dsn)
	base, stop := startServe(t, "--config", cfg, "--store", dsn)
	defer stop()

	code, _, body := doReq(t, "GET", base+"/api/v1/prices?all-series=true&provider=aws&explain=true", nil)
	var prices struct {
		Data []struct {
			schemas.Observation
			Explain schemas.PriceSteps `json:"explain"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &prices); code != 200 || err != nil || len(prices.Data) == 0 {
		t.Fatalf("prices?explain=true: %d %v\n%s", code, err, body)
	}
	for _, r := range prices.Data {
		if r.Explain.PriceGPUHour != r.PriceUSDGPUHour || len(r.Explain.Steps) != 6 ||
			!strings.Contains(r.Explain.USDGPUHour, "÷ 8 GPUs") {
			t.Errorf("%s: %+v", r.SKU, r.Explain)
		}
	}
	if _, _, plain := doReq(t, "GET", base+"/api/v1/prices?all-series=true&provider=aws", nil); strings.Contains(plain, `"explain"`) {
		t.Errorf("explain without being asked:\n%s", plain)
	}

	code, _, body = doReq(t, "GET", base+"/api/v1/index?gpu=H100-SXM-80GB&pricing=on_demand&explain=2026-11-01", nil)
	var idx struct {
		Data []struct{ Group, Status, Series string } `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &idx); code != 200 || err != nil || len(idx.Data) == 0 {
		t.Fatalf("index?explain=DAY: %d %v\n%s", code, err, body)
	}
	for _, m := range idx.Data {
		if m.Status == "" || m.Series == "" || m.Group == "" {
			t.Errorf("%+v", m)
		}
	}
	if code, _, body := doReq(t, "GET", base+"/api/v1/index?gpu=H100-SXM-80GB&pricing=on_demand&explain=yesterday", nil); code != 400 || !strings.Contains(body, "explain") {
		t.Errorf("a bad day: %d %s", code, body)
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

// eurInput is OVHcloud rows in EUR, priced on a day for which neither store below
// holds an ECB rate: each carries the fx_rate it was converted at.
const eurInput = `observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind,effective_at,gpu_name,gpu_memory_gb,currency,price_native,unit,fx_rate,interconnect,source_url
2026-11-02T00:00:00Z,ovhcloud,specialist,h100-380,H100-SXM-80GB,1,GRA11,,on_demand,3.0352,3.0352,api,2026-11-02T00:00:00Z,H100,80,EUR,2.8,hour,1.084,,https://api.ovh.com/1.0/order/catalog/public/cloud
2026-11-02T00:00:00Z,ovhcloud,specialist,h100-1520,H100-SXM-80GB,4,GRA11,,on_demand,12.1408,3.0352,api,2026-11-02T00:00:00Z,H100,80,EUR,11.2,hour,1.084,,https://api.ovh.com/1.0/order/catalog/public/cloud
2026-11-02T00:00:00Z,ovhcloud,specialist,l40s-90,L40S-PCIE-48GB,1,GRA11,,on_demand,1.9512,1.9512,api,2026-11-02T00:00:00Z,L40S,48,EUR,1.8,hour,1.084,,https://api.ovh.com/1.0/order/catalog/public/cloud
`

// TestExportImportEURKeepsFXRate: EUR rows exported to Parquet and imported into a
// store without that day's ECB rate keep the fx_rate they carry; none is
// quarantined and the USD prices are unchanged.
func TestExportImportEURKeepsFXRate(t *testing.T) {
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	in := filepath.Join(dir, "eur.csv")
	if err := os.WriteFile(in, []byte(eurInput), 0o600); err != nil {
		t.Fatal(err)
	}
	a := "duckdb://" + filepath.Join(t.TempDir(), "a.duckdb")
	if out, code := run(t, "--config", cfg, "--store", a, "import", "csv", in); code != 0 {
		t.Fatalf("import csv: %s", out)
	}
	pq := filepath.Join(t.TempDir(), "eur.parquet")
	exportOut(t, cfg, a, "--format", "parquet", "--out", pq)

	b := "duckdb://" + filepath.Join(t.TempDir(), "b.duckdb")
	if out, code := run(t, "--config", cfg, "--store", b, "import", "parquet", pq); code != 0 {
		t.Fatalf("import parquet into a store without ECB rates: exit %d\n%s", code, out)
	}
	if out, _ := run(t, "--config", cfg, "--store", b, "fx", "--currency", "EUR", "--format", "json"); strings.Contains(out, "2026-11-02") {
		t.Fatalf("the second store has an ECB rate for the day: %s", out)
	}
	q, _ := run(t, "--config", cfg, "--store", b, "quarantine", "--format", "json")
	var held []json.RawMessage
	if err := json.Unmarshal([]byte(strings.TrimSpace(q)), &held); err != nil || len(held) != 0 {
		t.Errorf("quarantine after import (%v): %s", err, q)
	}
	sc := bufio.NewScanner(strings.NewReader(exportOut(t, cfg, b, "--format", "jsonl")))
	n := 0
	for sc.Scan() {
		var o schemas.Observation
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("jsonl %q: %v", sc.Text(), err)
		}
		n++
		want := map[string]float64{"h100-380": 3.0352, "h100-1520": 12.1408, "l40s-90": 1.9512}[o.SKU]
		if o.Currency != "EUR" || o.FXRate != 1.084 || math.Abs(o.PriceUSDHour-want) > 1e-9 {
			t.Errorf("%s: currency %s fx_rate %v $%v/h, want EUR 1.084 $%v/h", o.SKU, o.Currency, o.FXRate, o.PriceUSDHour, want)
		}
	}
	if n != 3 {
		t.Errorf("%d rows in the second store, want 3", n)
	}
}

package main

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// TestRiskSpotAdvisorDuckDB: importing two dated Spot Advisor files shows the band
// changes between them. The first is the real file of 2025-06-28; the second is
// that file with two bands changed by the test (constructed: p5.48xlarge moves from
// >20% to 10-15% in us-east-1 and from 5-10% to 15-20% in us-west-2).
func TestRiskSpotAdvisorDuckDB(t *testing.T) {
	testRiskSpotAdvisor(t, "duckdb://"+filepath.Join(t.TempDir(), "risk.duckdb"))
}

// TestIntegrationClickHouseRiskSpotAdvisor runs the same imports and reads on ClickHouse.
func TestIntegrationClickHouseRiskSpotAdvisor(t *testing.T) {
	testRiskSpotAdvisor(t, chtest.FreshDSN(t, "risk"))
}

func testRiskSpotAdvisor(t *testing.T, dsn string) {
	f, err := os.Open(filepath.Join("..", "..", "scrapers", "aws", "testdata", "spot_advisor", "input.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	real, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(real, &doc); err != nil {
		t.Fatal(err)
	}
	linux := func(region string) map[string]any {
		return doc["spot_advisor"].(map[string]any)[region].(map[string]any)["Linux"].(map[string]any)
	}
	linux("us-east-1")["p5.48xlarge"].(map[string]any)["r"] = 2
	linux("us-west-2")["p5.48xlarge"].(map[string]any)["r"] = 3
	changed, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, second := filepath.Join(dir, "2025-06-28.json"), filepath.Join(dir, "2025-07-05.json")
	if err := os.WriteFile(first, real, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{{first, "2025-06-28"}, {second, "2025-07-05"}} {
		out, code := run(t, "--store", dsn, "risk", "import-spot-advisor", c[0], "--at", c[1])
		if code != 0 || !strings.Contains(out, "stored 682 interruption bands as of "+c[1]) {
			t.Fatalf("import %s: exit %d: %s", c[1], code, out)
		}
	}
	// Importing a copy again stores nothing twice.
	if _, code := run(t, "--store", dsn, "risk", "import-spot-advisor", first, "--at", "2025-06-28"); code != 0 {
		t.Fatal("second import of the same copy failed")
	}
	type change struct {
		SKU, Region    string
		At             string  `json:"at"`
		FromLabel      string  `json:"from_label"`
		ToLabel        string  `json:"to_label"`
		Rise           int     `json:"rise"`
		RatePerHour    float64 `json:"rate_per_hour"`
		Provider, Zone string
	}
	var moves struct{ Changes []change }
	runJSON(t, &moves, "--store", dsn, "risk", "--changes", "--format", "json")
	if len(moves.Changes) != 2 {
		t.Fatalf("changes %+v, want the two the second file makes", moves.Changes)
	}
	down, up := moves.Changes[0], moves.Changes[1]
	if down.SKU != "p5.48xlarge" || down.Region != "us-east-1" || down.FromLabel != ">20%" || down.ToLabel != "10-15%" ||
		down.Rise != -1 || down.At != "2025-07-05T00:00:00Z" || down.RatePerHour < 1.8291e-4 || down.RatePerHour > 1.8293e-4 {
		t.Errorf("us-east-1 move %+v", down)
	}
	if up.Region != "us-west-2" || up.FromLabel != "5-10%" || up.ToLabel != "15-20%" || up.Rise != 1 {
		t.Errorf("us-west-2 move %+v", up)
	}
	var hist struct{ Changes []change }
	runJSON(t, &hist, "--store", dsn, "risk", "--sku", "p5.48xlarge", "--region", "us-east-1", "--format", "json")
	if len(hist.Changes) != 2 || hist.Changes[0].ToLabel != ">20%" || hist.Changes[0].Rise != 0 ||
		hist.Changes[0].At != "2025-06-28T00:00:00Z" || hist.Changes[1].ToLabel != "10-15%" {
		t.Errorf("history of p5.48xlarge us-east-1 %+v", hist.Changes)
	}
}

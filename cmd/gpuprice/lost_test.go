package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// A store that does not answer when a command starts: the import collects into the
// spool (exit 0, nothing lost), and once the store answers the next command
// migrates it and replays the spool, run records included.
func TestIntegrationClickHouseDownAtStartSpoolsThenMigrates(t *testing.T) {
	up := chtest.FreshDSN(t, "downatstart")
	down := fmt.Sprintf("clickhouse://127.0.0.1:%d/gpuprice_down?dial_timeout=1s", freePort(t))
	dataDir := t.TempDir()
	cfgPath := filepath.Join(dataDir, "gpuprice.yaml")
	cfg := fmt.Sprintf("data_dir: %s\ningest: {batch_size: 10, flush_interval: 1h}\nsources:\n  fx: {enabled: false}\n", dataDir)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	csvPath := outageCSV(t, 25, 2)
	out, code := run(t, "--config", cfgPath, "--store", down, "import", "csv", csvPath)
	if code != 0 || !strings.Contains(out, "25 rows spooled") {
		t.Fatalf("import with the store down: exit %d\n%s", code, out)
	}
	status, _ := run(t, "--config", cfgPath, "spool", "status")
	if !strings.Contains(status, "25") {
		t.Fatalf("spool status:\n%s", status)
	}
	if out, code := run(t, "--config", cfgPath, "--store", up, "spool", "replay"); code != 0 {
		t.Fatalf("spool replay: %s", out)
	}
	runs, code := run(t, "--config", cfgPath, "--store", up, "runs", "--format", "json")
	if code != 0 || !strings.Contains(runs, `"rows_spooled": 25`) || !strings.Contains(runs, `"rows_quarantined": 2`) {
		t.Fatalf("run record not replayed:\n%s", runs)
	}
	obs, code := run(t, "--config", cfgPath, "--store", up, "export", "--format", "csv")
	if code != 0 || strings.Count(obs, "outage-") != 25 {
		t.Fatalf("%d rows stored after the replay:\n%s", strings.Count(obs, "outage-"), obs)
	}
}

// Rows neither the store nor the spool takes are lost: the run says how many, and
// the command fails.
func TestLostRowsExitNonZero(t *testing.T) {
	down := fmt.Sprintf("clickhouse://127.0.0.1:%d/gpuprice_down?dial_timeout=1s", freePort(t))
	dataDir := t.TempDir()
	cfgPath := filepath.Join(dataDir, "gpuprice.yaml")
	cfg := fmt.Sprintf("data_dir: %s\nspool: {max_bytes: 1}\ningest: {batch_size: 10, flush_interval: 1h}\nsources:\n  fx: {enabled: false}\n", dataDir)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := run(t, "--config", cfgPath, "--store", down, "import", "csv", outageCSV(t, 25, 0))
	if code == 0 || !regexp.MustCompile(`import:csv\s+failed\s+25\s+0\s+0\s+0\s+\S+\s+25\s+25 rows lost`).MatchString(out) {
		t.Fatalf("import losing every row: exit %d\n%s", code, out)
	}
}

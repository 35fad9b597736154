package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTokensSaysNoBandForPCIe: a PCIe card without NVLink has no published MFU
// band; tokens says so (in --explain and in the rows left out) instead of assuming
// one, and --mfu prices it.
func TestTokensSaysNoBandForPCIe(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "m.duckdb")
	cfg := importedStore(t, dsn)
	out, code := run(t, "--config", cfg, "--store", dsn, "tokens", "--params", "7e9", "--gpu", "A100-PCIE-80GB", "--explain")
	if code != 0 || !strings.Contains(out, "pcie-no-nvlink        no band: no public MFU measurement") ||
		!strings.Contains(out, "marketplace-consumer  no band:") {
		t.Errorf("tokens --explain (exit %d):\n%s", code, out)
	}
	if strings.Contains(out, "Standard_NC24ads_A100_v4") {
		t.Errorf("a PCIe offering priced without a band:\n%s", out)
	}
	out, code = run(t, "--config", cfg, "--store", dsn, "tokens", "--params", "7e9", "--gpu", "A100-PCIE-80GB", "--mfu", "0.3", "--format", "csv")
	if code != 0 || !strings.Contains(out, "Standard_NC24ads_A100_v4") {
		t.Errorf("tokens --mfu 0.3 (exit %d):\n%s", code, out)
	}
}

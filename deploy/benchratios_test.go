package deploy_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBenchRatios: bench-ratios.awk appends to each analytics line its ratio to the
// bare scan of the same run (round, load and label), leaves the scan, other runs'
// lines and other benchmarks as they are, and never takes a scan from another run.
func TestBenchRatios(t *testing.T) {
	in := strings.Join([]string{
		"## Measured 2026-12-07T01:00Z",
		"round 1 · load 0.50 · analytics on ClickHouse 18.16.1, 10000000 raw rows · " +
			"BenchmarkClickHouseAnalytics/FullScanRaw-2 \t 5\t  40000000 ns/op",
		"round 1 · load 0.50 · analytics on ClickHouse 18.16.1, 10000000 raw rows · " +
			"BenchmarkClickHouseAnalytics/Volatility30d-2 \t 5\t  26000000 ns/op",
		"round 1 · load 0.61 · analytics on DuckDB, 2000000 raw rows · BenchmarkDuckDBAnalytics/Spreads30d-2 \t 5\t 50000000 ns/op",
		"round 1 · load 0.61 · analytics on DuckDB, 2000000 raw rows · BenchmarkDuckDBAnalytics/FullScanRaw-2 \t 5\t 4000000 ns/op",
		"round 1 · load 0.61 · analytics on DuckDB, 2000000 raw rows · BenchmarkDuckDBAnalytics/History30d-2 \t 5\t 20000000 ns/op",
		"round 2 · load 0.70 · analytics on ClickHouse 18.16.1, 10000000 raw rows · " +
			"BenchmarkClickHouseAnalytics/Spreads30d-2 \t 5\t  18000000 ns/op",
		"round 1 · load 0.40 · import csv 2000000 rows · BenchmarkImportCSV/clickhouse-2 \t 2\t 9000000000 ns/op\t 0.56 ch_vs_exported",
	}, "\n") + "\n"
	cmd := exec.Command("awk", "-f", "bench-ratios.awk")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("awk: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	want := []string{"", "", "(0.65× FullScanRaw)", "", "", "(5.00× FullScanRaw)", "", ""}
	if len(lines) != len(want) {
		t.Fatalf("%d lines out of %d:\n%s", len(lines), len(want), out)
	}
	inLines := strings.Split(strings.TrimSuffix(in, "\n"), "\n")
	for i, w := range want {
		got, ok := strings.CutPrefix(lines[i], inLines[i])
		if !ok {
			t.Errorf("line %d changed: %q", i+1, lines[i])
			continue
		}
		if got = strings.TrimSpace(got); got != w {
			t.Errorf("line %d: appended %q, want %q", i+1, got, w)
		}
	}
}

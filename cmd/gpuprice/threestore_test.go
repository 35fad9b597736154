package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestIntegrationClickHouseAnswersEqualDuckDB loads one realistic market
// (storetest.RealisticHistory: two years, carried-in list prices, a correction tied on
// effective_at, gaps, withdrawn and returning offers, an hourly last week) into
// DuckDB and into the ClickHouse of GPUPRICE_CLICKHOUSE_DSN — the 18.16 server in
// deploy/test.sh's first pass, chDB 26.7 in its second, so the three stores meet —
// and asks every analytic the same questions of both: each JSON answer must be the
// same, figure for figure (numbers to 1e-9 relative, for float sums taken in another
// order).
func TestIntegrationClickHouseAnswersEqualDuckDB(t *testing.T) {
	t.Setenv("GPUPRICE_DATA_DIR", t.TempDir())
	rows := storetest.RealisticHistory()
	duck := "duckdb://" + filepath.Join(t.TempDir(), "three.duckdb")
	click := chtest.FreshDSN(t, "three")
	for _, dsn := range []string{duck, click} {
		loadRealistic(t, dsn, rows)
	}
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte(`alerts:
  rules:
    - {name: h100-premium-shift, kind: spread_shift, gpu: H100-SXM-80GB, pricing: on_demand, window: 7d, threshold_pct: 10}
    - {name: a100-premium-shift, kind: spread_shift, gpu: A100-SXM-80GB, pricing: on_demand, window: 30d, threshold_pct: 5}
    - {name: spot-swing, kind: spot_move, window: 24h, threshold_pct: 5}
    - {name: spot-swing-week, kind: spot_move, window: 7d, volatility_pct: 20, by: series}
    - {name: cheap-h100, kind: price_below, gpu: H100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: 3.0}
  notifiers:
    - {name: log, kind: log}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	end := storetest.RealisticEnd.Format("2006-01-02") + "T23:00:00Z"
	questions := [][]string{
		{"prices", "--all-series"},
		{"prices", "--gpu", "H100-SXM-80GB", "--stale", "7d"},
		{"volatility", "--at", end, "--window", "30d", "--bar", "1d"},
		{"volatility", "--at", end, "--window", "7d", "--bar", "1h", "--by", "offering"},
		{"volatility", "--at", "2025-07-10", "--window", "90d", "--bar", "1d", "--by", "zone", "--below", "5"},
		{"spreads", "--at", end, "--since", "365d"},
		{"spreads", "--at", "2025-09-10", "--since", "30d", "--pricing", "on_demand"},
		{"history", "--gpu", "H100-SXM-80GB", "--at", end, "--since", "730d"},
		{"history", "--gpu", "H100-SXM-80GB", "--at", "2025-09-25", "--since", "90d", "--pricing", "spot"},
		{"history", "--gpu", "A100-SXM-80GB", "--at", end, "--since", "365d"},
		{"index", "--at", end, "--since", "730d"},
		{"tokens", "--params", "7e9"},
		{"tokens", "--params", "70e9", "--gpus", "64", "--pricing", "spot"},
		{"series", "--provider", "aws", "--sku", "p5.48xlarge", "--pricing", "on_demand", "--region", "us-east-1",
			"--bar", "1d", "--since", "730d", "--at", end},
		{"series", "--provider", "gcp", "--sku", "a3-highgpu-8g", "--pricing", "spot", "--bar", "1h", "--region", "us-central1",
			"--zone", "us-central1-a",
			"--since", "7d", "--at", end},
		{"alerts", "--config", rules, "--at", end, "--dry-run", "--window", "30d"},
		{"alerts", "--config", rules, "--at", "2025-09-03", "--dry-run", "--window", "30d"},
	}
	for _, q := range questions {
		name := strings.Join(q, " ")
		var answers [2]any
		for i, dsn := range []string{duck, click} {
			args := append([]string{"--store", dsn}, q...)
			out, code := run(t, append(args, "--format", "json")...)
			if code != 0 {
				t.Fatalf("%s on %s: exit %d", name, dsn, code)
			}
			if os.Getenv("DEBUG_THREE") != "" && strings.Contains(name, os.Getenv("DEBUG_THREE")) {
				t.Logf("%.3000s", out)
			}
			if err := json.Unmarshal([]byte(out), &answers[i]); err != nil {
				t.Fatalf("%s: %v\n%.500s", name, err, out)
			}
		}
		if numbers(answers[0]) == 0 {
			t.Errorf("%s: an answer without figures compares nothing", name)
		}
		t.Logf("%s: %d values, %d numbers", name, leaves(answers[0]), numbers(answers[0]))
		if d := answerDiff("", answers[0], answers[1]); d != "" {
			t.Errorf("%s: DuckDB and ClickHouse (%s) differ at %s", name, chtest.ServerDSN(t).Scheme, d)
		}
	}
}

// loadRealistic writes rows to the store at dsn and builds its bars with `gpuprice rollup`.
func loadRealistic(t *testing.T, dsn string, rows []schemas.Observation) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(rows); i += 5000 {
		if err := st.WriteObservations(ctx, rows[i:min(i+5000, len(rows))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "rollup", "--store", dsn); code != 0 {
		t.Fatalf("rollup on %s: %d %q", dsn, code, out)
	}
}

// numbers counts the numbers of a decoded answer.
func numbers(v any) int { return count(v, true) }

// leaves counts the numbers, strings and booleans of a decoded answer.
func leaves(v any) int { return count(v, false) }

// count walks a decoded answer and counts its leaves, or only its numbers.
func count(v any, onlyNumbers bool) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for _, m := range x {
			n += count(m, onlyNumbers)
		}
	case []any:
		for _, m := range x {
			n += count(m, onlyNumbers)
		}
	case nil:
	case float64:
		n = 1
	default:
		if !onlyNumbers {
			n = 1
		}
	}
	return n
}

// answerDiff returns where two decoded JSON answers differ ("" when they do not):
// the path of the first difference, with both values.
func answerDiff(path string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if d := answerDiff(path+"."+k, x[k], y[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return fmt.Sprintf("%s: %d items vs %v", path, len(x), lenOf(b))
		}
		for i := range x {
			if d := answerDiff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i]); d != "" {
				return d
			}
		}
		return ""
	case float64:
		y, ok := b.(float64)
		if !ok || math.Abs(x-y) > 1e-9*math.Max(1, math.Max(math.Abs(x), math.Abs(y))) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		return ""
	default:
		if a != b {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		return ""
	}
}

func lenOf(v any) string {
	if y, ok := v.([]any); ok {
		return fmt.Sprintf("%d items", len(y))
	}
	return fmt.Sprint(v)
}

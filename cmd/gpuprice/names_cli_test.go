package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
)

func runErr(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := cli.Main(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestNamesAsTypedAndMissingValues: GPU names resolve as people type them (and say
// what they matched), a name that matches nothing fails with the nearest names, and
// values that do not exist are null in JSON, empty in CSV and "-" in tables.
func TestNamesAsTypedAndMissingValues(t *testing.T) {
	dsn := analyticsStore(t, "duckdb://"+filepath.Join(t.TempDir(), "names.duckdb"))
	if _, code := run(t, "--store", dsn, "rollup"); code != 0 {
		t.Fatal("rollup failed")
	}
	at := "2025-03-10T23:00:00Z"

	out, errb, code := runErr("--store", dsn, "prices", "--gpu", "h100", "--pricing", "On-Demand", "--format", "csv", "--all-series")
	if code != 0 || strings.Count(out, "\n") != 6 || !strings.Contains(errb, `--gpu "h100" matched family: H100-SXM-80GB`) ||
		!strings.Contains(errb, `--pricing "On-Demand" matched case: on_demand`) {
		t.Errorf("prices --gpu h100: exit %d, %d lines\nstderr: %s", code, strings.Count(out, "\n"), errb)
	}
	out2, _, _ := runErr("--store", dsn, "prices", "--gpu", "H100 SXM", "--pricing", "on_demand", "--format", "csv", "--all-series")
	if out2 != out {
		t.Errorf("prices --gpu \"H100 SXM\" differs from --gpu h100:\n%s\n%s", out2, out)
	}
	for _, args := range [][]string{
		{"prices", "--gpu", "H1OO"},
		{"volatility", "--gpu", "H1OO"},
		{"history", "--gpu", "H1OO"},
		{"prices", "--provider", "lamdba"},
		{"prices", "--pricing", "spto"},
	} {
		out, errb, code := runErr(append([]string{"--store", dsn}, args...)...)
		if code == 0 || out != "" || !strings.Contains(errb, "gpuprice: --"+strings.TrimPrefix(args[1], "--")) || !strings.Contains(errb, "did you mean") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q: want an error with the nearest names", args, code, out, errb)
		}
	}
	if _, errb, code := runErr("--store", dsn, "history", "--gpu", "h100"); code == 0 || !strings.Contains(errb, "history needs one GPU") {
		t.Errorf("history --gpu h100 (a family): exit %d %q", code, errb)
	}

	// Spot on 2025-03-10: only AWS (a hyperscaler), no specialist: no ratio.
	var spreads struct {
		Days []map[string]any `json:"days"`
	}
	runJSON(t, &spreads, "--store", dsn, "spreads", "--pricing", "spot", "--since", "1d", "--at", at, "--format", "json")
	if len(spreads.Days) != 1 || spreads.Days[0]["ratio"] != nil || spreads.Days[0]["specialist"] != nil || spreads.Days[0]["hyperscaler"] == nil {
		t.Errorf("spot spreads: %+v: ratio and specialist must be null", spreads.Days)
	}
	csvOut, _, _ := runErr("--store", dsn, "spreads", "--pricing", "spot", "--since", "1d", "--at", at, "--format", "csv")
	if lines := strings.Split(strings.TrimSpace(csvOut), "\n"); len(lines) != 2 || !strings.Contains(lines[1], ",,") || strings.Contains(lines[1], "0.0000,0.00") {
		t.Errorf("spreads csv: %q: missing values must be empty", csvOut)
	}
	// Nobody publishes a reserved price here: no reserved discount.
	var hist struct {
		Overall   map[string]any   `json:"overall"`
		Providers []map[string]any `json:"providers"`
	}
	runJSON(t, &hist, "--store", dsn, "history", "--gpu", "h100-sxm-80gb", "--since", "1d", "--at", at, "--format", "json")
	if hist.Overall["reserved_discount_pct"] != nil || len(hist.Providers) == 0 || hist.Providers[0]["reserved_discount_pct"] != nil {
		t.Errorf("history: reserved discount must be null: %+v", hist)
	}
	table, _, _ := runErr("--store", dsn, "history", "--gpu", "H100-SXM-80GB", "--since", "1d", "--at", at)
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "lambda ") && !strings.HasSuffix(strings.TrimSpace(line), " -") {
			t.Errorf("history table: %q: the missing discount must print -", line)
		}
	}
}

// TestExportTakesNamesAsTyped: export --gpu h100 exports every H100 variant that
// prices --gpu h100 lists, and a name that matches nothing fails.
func TestExportTakesNamesAsTyped(t *testing.T) {
	dsn := analyticsStore(t, "duckdb://"+filepath.Join(t.TempDir(), "export-names.duckdb"))
	out, errb, code := runErr("--store", dsn, "export", "--gpu", "h100", "--pricing", "On-Demand", "--format", "csv")
	if code != 0 || strings.Count(out, "\n") != 6 || !strings.Contains(errb, `matched family`) {
		t.Errorf("export --gpu h100: exit %d, %d lines\n%s\nstderr: %s", code, strings.Count(out, "\n"), out, errb)
	}
	if _, errb, code := runErr("--store", dsn, "export", "--gpu", "H1OO", "--format", "csv"); code == 0 || !strings.Contains(errb, "did you mean") {
		t.Errorf("export --gpu H1OO: exit %d %q", code, errb)
	}
}

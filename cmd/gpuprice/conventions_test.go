package main

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// TestConventions: the command line behaves the same everywhere (issue 23). A usage
// mistake exits 2; every span flag takes 7d / 2w / 36h / Go durations and its error
// names it; --params reads 7B like report --model-params; a bare --store path is the
// DuckDB file; --log-level names the valid levels.
func TestConventions(t *testing.T) {
	dir := t.TempDir()
	abs := filepath.Join(dir, "conv.duckdb")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil {
		t.Fatal(err)
	}
	// A bare path (no scheme, relative) is the DuckDB file it names.
	if out, errb, code := runAll("--store", rel, "reparse", filepath.Join("..", "..", "examples", "recorded")); code != cli.ExitOK {
		t.Fatalf("reparse --store %s: exit %d\n%s\n%s", rel, code, out, errb)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("--store %s did not write %s: %v", rel, abs, err)
	}
	dsn := "duckdb://" + abs
	for _, c := range []struct {
		args []string
		code int
		says []string // in stderr
	}{
		{[]string{"tokens"}, cli.ExitUsage, []string{"--params is required"}},
		{[]string{"history"}, cli.ExitUsage, []string{"--gpu is required"}},
		{[]string{"report"}, cli.ExitUsage, []string{"--gpu is required"}},
		{[]string{"volatility", "--window", "7"}, cli.ExitUsage, []string{"--window", "7d"}},
		{[]string{"prices", "--stale", "1x"}, cli.ExitUsage, []string{"--stale", "7d"}},
		{[]string{"prices", "--stale", "1d"}, cli.ExitOK, nil},
		{[]string{"prices", "--stale", "2w"}, cli.ExitOK, nil},
		{[]string{"prices", "--stale", "36h"}, cli.ExitOK, nil},
		{[]string{"volatility", "--at", "2026-11-02", "--window", "1h30m"}, cli.ExitOK, nil},
		{[]string{"tokens", "--params", "seven"}, cli.ExitUsage, []string{"--params", "70B"}},
		{[]string{"--log-level", "verbose", "runs"}, cli.ExitUsage, []string{"use debug, info, warn or error"}},
		{[]string{"prices", "--fromat", "json"}, cli.ExitUsage, []string{"did you mean --format?"}},
	} {
		_, errb, code := runAll(append([]string{"--store", dsn}, c.args...)...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s", strings.Join(c.args, " "), code, c.code, errb)
		}
		for _, s := range c.says {
			if !strings.Contains(errb, s) {
				t.Errorf("%s: stderr %q does not say %q", strings.Join(c.args, " "), errb, s)
			}
		}
		if strings.Contains(errb, "--since") && c.args[0] != "history" {
			t.Errorf("%s: the error names --since: %q", strings.Join(c.args, " "), errb)
		}
	}
	// --params 7B is --params 7e9, and the offerings left out are said as sentences.
	a, errA, codeA := runAll("--store", dsn, "tokens", "--params", "7B", "--format", "csv")
	b, _, codeB := runAll("--store", dsn, "tokens", "--params", "7e9", "--format", "csv")
	if codeA != cli.ExitOK || codeB != cli.ExitOK || a != b || a == "" {
		t.Errorf("tokens --params 7B (exit %d) differs from 7e9 (exit %d):\n%s\n%s", codeA, codeB, a, b)
	}
	if strings.Contains(errA, "level=WARN") || strings.Contains(errA, "analytics:") || strings.Contains(errA, "for  (") ||
		!strings.Contains(errA, "offerings left out: no published MFU band for the class ") {
		t.Errorf("tokens warns in log lines, with a package prefix or an empty name: %q", errA)
	}
}

// TestEmptyQuarantineIsGoodNews: an empty quarantine says so, not "run collect".
func TestEmptyQuarantineIsGoodNews(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "q.duckdb")
	if _, errb, code := runAll("--store", dsn, "reparse", filepath.Join("..", "..", "examples", "recorded")); code != cli.ExitOK {
		t.Fatalf("reparse: exit %d\n%s", code, errb)
	}
	out, errb, code := runAll("--store", dsn, "quarantine")
	if code != cli.ExitOK || !strings.Contains(out, "every row read passed validation") || strings.Contains(out, "gpuprice collect") {
		t.Errorf("empty quarantine: exit %d\n%s\n%s", code, out, errb)
	}
}

// readCommands are the commands that only read the store (docs/user-guide.md's
// read-only promise): each is run on a store that does not exist.
var readCommands = [][]string{
	{"prices"}, {"series", "--provider", "aws", "--sku", "p5.48xlarge", "--pricing", "on_demand"}, {"history", "--gpu", "h100"},
	{"volatility"}, {"spreads"}, {"index"}, {"tokens", "--params", "7B"}, {"report", "--gpu", "h100"},
	{"runs"}, {"quarantine"}, {"fx"}, {"export", "--format", "csv"}, {"alerts", "--dry-run"},
	{"index", "--explain", "2026-11-01", "--gpu", "H100-SXM-80GB", "--pricing", "on_demand"}, {"mcp"},
}

// TestReadOnlyCommandsCreateNoStore: a read command never creates a store (issue 23).
// On a DuckDB file that does not exist (named by DSN or as a bare path) and on a
// ClickHouse database that does not exist, each exits 1 saying the store does not
// exist, and the file, its directory or the database is still missing afterwards.
func TestReadOnlyCommandsCreateNoStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	path := filepath.Join(dir, "prices.duckdb")
	check := func(t *testing.T, dsn string, gone func() bool) {
		for _, c := range readCommands {
			_, errb, code := runAll(append([]string{"--store", dsn}, c...)...)
			if code != cli.ExitError || !strings.Contains(errb, "does not exist") || !strings.Contains(errb, "create no store") {
				t.Errorf("%s on a missing store: exit %d, want %d saying so\n%s", strings.Join(c, " "), code, cli.ExitError, errb)
			}
			if !gone() {
				t.Fatalf("%s created the store %s", strings.Join(c, " "), dsn)
			}
		}
	}
	missing := func() bool { _, err := os.Stat(dir); return errors.Is(err, fs.ErrNotExist) }
	t.Run("duckdb", func(t *testing.T) { check(t, "duckdb://"+path, missing) })
	t.Run("bare path", func(t *testing.T) { check(t, path, missing) })
	t.Run("clickhouse", func(t *testing.T) {
		dsn := chtest.FreshDSN(t, "readonly")
		u, _ := url.Parse(dsn)
		admin := chtest.Admin(t, u)
		defer admin.Close()
		check(t, dsn, func() bool {
			var n uint64
			if err := admin.QueryRow(t.Context(), `SELECT count() FROM system.databases WHERE name = ?`,
				chtest.Database(u)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n == 0
		})
	})
}

// TestConfigShowsValuesInEffect: `gpuprice config` prints what the commands use (issue
// 23): the data, spool and alert-state paths, serve's limits, every source with its
// schedule and endpoint (its own default or the file's), secrets redacted; no path
// left empty and no limit left 0s.
func TestConfigShowsValuesInEffect(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpuprice.yaml")
	const key = "sk-config-secret-0123456789"
	t.Setenv("GPUPRICE_VAST_API_KEY", key)
	body := "data_dir: " + dir + "\nserve: {read_timeout: 45s}\nsources:\n" +
		"  vast: {endpoint: 'https://mirror.example/bundles?api_key=" + key + "'}\n  lambda: {schedule: '5 * * * *'}\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errb, code := runAll("--config", cfg, "config")
	if code != cli.ExitOK {
		t.Fatalf("config: exit %d\n%s", code, errb)
	}
	for _, want := range []string{
		"data_dir: " + dir, "dir: " + filepath.Join(dir, "spool"), "state_file: " + filepath.Join(dir, "alerts-state.json"),
		"store: duckdb://" + filepath.Join(dir, "gpuprice.duckdb"), "read_header_timeout: 10s", "read_timeout: 45s",
		"write_timeout: 2m0s", "idle_timeout: 2m0s", "max_conns_per_client: 64", "user_agent: gpuprice/",
		"endpoint: https://api.runpod.io/graphql", "schedule: '*/10 * * * *'", "schedule: 5 * * * *",
		"endpoint: https://mirror.example/bundles", "endpoint: https://www.ecb.europa.eu/",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, key) || strings.Contains(out, ": 0s") || strings.Contains(out, "sources: {}") {
		t.Errorf("config shows a secret, a 0s limit or no sources:\n%s", out)
	}
}

// TestEmptyResultsSayWhy: an empty answer says why (issue 23). A series with no bar in
// its window gives the series' newest observation and an --at that shows it; a
// prices filter that leaves nothing is named with what the rows before it held, in
// the CLI and in the API's "empty" member.
func TestEmptyResultsSayWhy(t *testing.T) {
	dir := t.TempDir()
	dsn := "duckdb://" + filepath.Join(dir, "empty.duckdb")
	if _, errb, code := runAll("--store", dsn, "reparse", filepath.Join("..", "..", "examples", "recorded")); code != cli.ExitOK {
		t.Fatalf("reparse: exit %d\n%s", code, errb)
	}
	series := []string{"--store", dsn, "series", "--provider", "lambda", "--sku", "gpu_1x_h100_pcie_80gb", "--pricing", "on_demand"}
	out, errb, code := runAll(append(series, "--at", "2030-01-01")...)
	if code != cli.ExitOK || !strings.Contains(out, "newest observation is 2026-11-01") || !strings.Contains(out, "try --at 2026-11-0") {
		t.Errorf("series with an empty window: exit %d\n%s\n%s", code, out, errb)
	}
	out, _, _ = runAll(append(series[:len(series)-4], "--sku", "no-such-sku", "--pricing", "on_demand")...)
	if !strings.Contains(out, "the store holds no series provider lambda, sku no-such-sku") {
		t.Errorf("series that is not stored:\n%s", out)
	}
	out, errb, code = runAll("--store", dsn, "prices", "--provider", "lambda", "--pricing", "spot")
	const why = `pricing "spot" leaves nothing of the 22 series of provider "lambda" (pricing kinds there: on_demand)`
	if code != cli.ExitOK || !strings.Contains(out, why) {
		t.Errorf("prices emptied by --pricing: exit %d\n%s\n%s", code, out, errb)
	}
	base, stop := startServe(t, "--config", writeConfig(t, closedURL(t)), "--store", dsn)
	defer stop()
	status, _, body := doReq(t, "GET", base+"/api/v1/prices?provider=lambda&pricing=spot", nil)
	if status != 200 || !strings.Contains(body, `"empty":`) || !strings.Contains(body, `pricing \"spot\" leaves nothing`) {
		t.Errorf("API prices emptied by pricing: %d %s", status, body)
	}
}

// TestTablesFitTheTerminal: on a 120-column terminal ($COLUMNS=120 stands for one) every
// table command's table fits it, saying what --wide adds; --wide keeps every column
// (issue 23).
func TestTablesFitTheTerminal(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "fit.duckdb")
	if _, errb, code := runAll("--store", dsn, "reparse", filepath.Join("..", "..", "examples", "recorded")); code != cli.ExitOK {
		t.Fatalf("reparse: exit %d\n%s", code, errb)
	}
	t.Setenv("COLUMNS", "120")
	for _, c := range [][]string{
		{"prices"}, {"runs"}, {"sources"}, {"gpus"}, {"fx"}, {"volatility", "--at", "2026-11-02", "--window", "30d"},
		{"tokens", "--params", "7e9"}, {"history", "--gpu", "H100-SXM-80GB", "--at", "2026-11-02"},
		{"index", "--gpu", "H100-SXM-80GB", "--at", "2026-11-02"}, {"spreads", "--at", "2026-11-02"},
		{"--config", filepath.Join("..", "..", "examples", "offline.yaml"), "alerts", "--at", "2026-11-02", "--dry-run"},
	} {
		out, errb, code := runAll(append([]string{"--store", dsn}, c...)...)
		if code != cli.ExitOK {
			t.Errorf("%s: exit %d\n%s", strings.Join(c, " "), code, errb)
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "  ") && len([]rune(line)) > 120 { // a table line (columns two spaces apart)
				t.Errorf("%s: a line of %d columns:\n%s", strings.Join(c, " "), len([]rune(line)), line)
			}
		}
	}
	out, _, _ := runAll("--store", dsn, "prices")
	wide, _, _ := runAll("--store", dsn, "--wide", "prices")
	if !strings.Contains(out, "(--wide adds ORIGIN") || strings.Contains(out, " ORIGIN\n") ||
		!strings.Contains(wide, " ORIGIN\n") || strings.Contains(wide, "--wide adds") {
		t.Errorf("prices on 120 columns does not leave ORIGIN to --wide:\n%s\n--wide:\n%s", out, wide)
	}
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
)

// closedURL is an http URL on which nothing listens: connections are refused.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func runAll(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = cli.Main(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestExitCodes: 0 every source ok, 3 some failed, 4 all failed, 2 usage errors; and
// when sources cannot reach their hosts, one paragraph that says which, why and what to
// do, without log lines.
func TestExitCodes(t *testing.T) {
	srv := replay(t)
	dead := closedURL(t)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "exit.duckdb")
	cfgFor := func(lambda, vast string) string { // "" disables the source
		dir := t.TempDir()
		cfg := fmt.Sprintf("data_dir: %s\nhttp: {timeout: 5s, retries: 1}\nsources:\n"+
			"  fx: {endpoint: %s/stats/eurofxref/eurofxref-hist-90d.xml}\n  azure: {enabled: false}\n", dir, dead)
		for name, ep := range map[string]string{"lambda": lambda + "/service/gpu-cloud", "vast": vast + "/api/v0/bundles/"} {
			if strings.HasPrefix(ep, "/") {
				cfg += "  " + name + ": {enabled: false}\n"
			} else {
				cfg += fmt.Sprintf("  %s: {endpoint: %s}\n", name, ep)
			}
		}
		for _, n := range disabledOthers() {
			if n != "fx" {
				cfg += "  " + n + ": {enabled: false}\n"
			}
		}
		p := filepath.Join(dir, "gpuprice.yaml")
		if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	if out, errb, code := runAll("--config", cfgFor(srv.URL, ""), "--store", dsn, "collect"); code != cli.ExitOK || errb != "" {
		t.Errorf("lambda ok: exit %d, want 0; stderr %q\n%s", code, errb, out)
	}
	// The recorded Vast search (25 offers) is short of the source's coverage minimum
	// of a production answer (500): the run is degraded.
	if out, _, code := runAll("--config", cfgFor("", srv.URL), "--store", dsn, "collect"); code != cli.ExitPartial || !strings.Contains(out, "degraded") {
		t.Errorf("vast degraded: exit %d, want %d\n%s", code, cli.ExitPartial, out)
	}
	out, errb, code := runAll("--config", cfgFor(srv.URL, dead), "--store", dsn, "collect")
	if code != cli.ExitPartial || !strings.Contains(strings.Join(strings.Fields(errb), " "), "1 of 2 sources could not reach their providers (vast): connections are refused") {
		t.Errorf("vast down: exit %d, want %d; stderr:\n%s\nstdout:\n%s", code, cli.ExitPartial, errb, out)
	}
	out, errb, code = runAll("--config", cfgFor(dead, dead), "--store", dsn, "collect")
	if code != cli.ExitAllFailed {
		t.Errorf("all down: exit %d, want %d\n%s", code, cli.ExitAllFailed, out)
	}
	for _, want := range []string{"No source could reach its provider (lambda, vast): connections are refused",
		"HTTPS_PROXY", "sources.<name>.endpoint", "gpuprice reparse examples/recorded", "--log-level debug", "gpuprice: every source failed"} {
		if !strings.Contains(strings.Join(strings.Fields(errb), " "), want) {
			t.Errorf("all down: stderr lacks %q:\n%s", want, errb)
		}
	}
	if strings.Contains(errb, "level=") || strings.Count(errb, "\n") > 8 {
		t.Errorf("all down: stderr should be one paragraph, no log lines:\n%s", errb)
	}
	if _, errb, _ := runAll("--config", cfgFor(dead, dead), "--store", dsn, "--log-level", "debug", "collect"); !strings.Contains(errb, "level=DEBUG") || !strings.Contains(errb, "connection refused") {
		t.Errorf("--log-level debug: want the details:\n%s", errb)
	}

	for _, args := range [][]string{
		{"collect", "--no-such-flag"},
		{"no-such-command"},
		{"--store", dsn, "collect", "--source", "nope"},
		{"prices", "extra", "args", "--store", dsn},
		{"--log-level", "loud", "version"},
	} {
		if _, errb, code := runAll(args...); code != cli.ExitUsage {
			t.Errorf("gpuprice %s: exit %d, want %d (usage); stderr %q", strings.Join(args, " "), code, cli.ExitUsage, errb)
		}
	}
	if out, _, code := runAll("help", "exit-codes"); code != 0 || !strings.Contains(out, fmt.Sprintf("%d  collect, reparse: every source failed", cli.ExitAllFailed)) {
		t.Errorf("help exit-codes: exit %d\n%s", code, out)
	}
}

// collected reports whether collect or reparse ran and stored what it could: every
// source ok (0), or some failed or degraded (ExitPartial; the recorded Vast and Azure
// answers of the replay server are excerpts, short of their sources' coverage
// minimum, so their runs are degraded).
func collected(code int) bool { return code == cli.ExitOK || code == cli.ExitPartial }

// TestConfigUnknownSource: a misspelt source under sources: is an error at load time,
// for every command, with the nearest name.
func TestConfigUnknownSource(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("sources:\n  azur: {enabled: false}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errb, code := runAll("--config", p, "version")
	if code != cli.ExitError || !strings.Contains(errb, "sources.azur: no such source (did you mean azure?") {
		t.Errorf("exit %d, stderr %q", code, errb)
	}
}

// TestTableCommandsTakeEveryFormat: every table command takes table, json, csv and
// markdown, on the recorded archive, and names its columns the same in each: the
// CSV names, upper-cased in the table, and the table's columns among the CSV's.
func TestTableCommandsTakeEveryFormat(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "formats.duckdb")
	if out, errb, code := runAll("--store", dsn, "reparse", filepath.Join("..", "..", "examples", "recorded")); code != cli.ExitOK {
		t.Fatalf("reparse: exit %d\n%s\n%s", code, out, errb)
	}
	alertsCfg := filepath.Join("..", "..", "examples", "offline.yaml")
	for _, cmd := range [][]string{
		{"prices"}, {"runs"}, {"quarantine"}, {"fx"}, {"sources"}, {"gpus"},
		{"--config", alertsCfg, "alerts", "--at", "2026-11-02", "--dry-run"},
		{"volatility", "--at", "2026-11-02", "--window", "30d"}, {"spreads", "--at", "2026-11-02"},
		{"tokens", "--params", "7e9"}, {"history", "--gpu", "H100-SXM-80GB", "--at", "2026-11-02"},
		{"index", "--gpu", "H100-SXM-80GB", "--at", "2026-11-02"},
		{"series", "--provider", "lambda", "--sku", "gpu_1x_h100_pcie_80gb", "--pricing", "on_demand", "--at", "2026-11-02"},
	} {
		name := cmd[0]
		if name == "--config" {
			name = cmd[2]
		}
		outs := map[string]string{}
		for _, f := range []string{"table", "json", "csv", "markdown"} {
			out, errb, code := runAll(append(cmd, "--store", dsn, "--format", f)...)
			if code != cli.ExitOK {
				t.Errorf("%s --format %s: exit %d, %s", name, f, code, errb)
				continue
			}
			outs[f] = out
		}
		if len(outs) != 4 {
			continue
		}
		var js any
		if err := json.Unmarshal([]byte(outs["json"]), &js); err != nil {
			t.Errorf("%s --format json: %v", name, err)
		}
		if name == "history" || name == "series" || name == "index" && !strings.HasPrefix(outs["markdown"], "| ") {
			continue // a title line first
		}
		csvHead := strings.Split(strings.SplitN(outs["csv"], "\n", 2)[0], ",")
		inCSV := map[string]bool{}
		for _, c := range csvHead {
			inCSV[c] = true
		}
		mdHead := strings.Split(strings.Trim(strings.SplitN(outs["markdown"], "\n", 2)[0], "| "), " | ")
		tableHead := strings.Fields(strings.SplitN(outs["table"], "\n", 2)[0])
		for _, c := range mdHead {
			if !inCSV[c] && !(name == "alerts" && c == "since") {
				t.Errorf("%s: markdown column %q is not a CSV column %v", name, c, csvHead)
			}
		}
		for _, c := range tableHead {
			if c != strings.ToUpper(c) || !inCSV[strings.ToLower(c)] {
				t.Errorf("%s: table column %q is not a CSV column upper-cased %v", name, c, csvHead)
			}
		}
	}
	for _, cmd := range []string{"prices", "runs", "quarantine", "fx", "sources", "gpus", "alerts"} {
		if _, _, code := runAll(cmd, "--store", dsn, "--format", "xml"); code != cli.ExitUsage {
			t.Errorf("%s --format xml: exit %d, want %d", cmd, code, cli.ExitUsage)
		}
	}
}

// TestSinceUntil: --until beside --since (and --at) in the commands that read a
// span, with --since's parsing (2w, a date, a time); runs and quarantine take both.
func TestSinceUntil(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "until.duckdb")
	if out, errb, code := runAll("--store", dsn, "reparse", filepath.Join("..", "..", "examples", "recorded")); code != cli.ExitOK {
		t.Fatalf("reparse: exit %d\n%s\n%s", code, out, errb)
	}
	q := func(args ...string) string {
		t.Helper()
		out, errb, code := runAll(append(args, "--store", dsn)...)
		if code != cli.ExitOK {
			t.Fatalf("gpuprice %s: exit %d\n%s", strings.Join(args, " "), code, errb)
		}
		return out
	}
	// The rows are marked in the store's origin column too (schema version 11), for SQL.
	db, err := sql.Open("duckdb", strings.TrimPrefix(dsn, "duckdb://")+"?access_mode=read_only")
	if err != nil {
		t.Fatal(err)
	}
	var all, recorded int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE origin = 'recorded' AND json_extract_string(attrs, '$.origin') = 'recorded') FROM observations`).Scan(&all, &recorded); err != nil || all == 0 || recorded != all {
		t.Errorf("origin column: %d of %d rows recorded (%v)", recorded, all, err)
	}
	db.Close()
	// An export of recorded rows stays recorded when imported elsewhere.
	csvFile := filepath.Join(t.TempDir(), "recorded.csv")
	if err := os.WriteFile(csvFile, []byte(q("prices", "--provider", "lambda", "--format", "csv")), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn2 := "duckdb://" + filepath.Join(t.TempDir(), "imported.duckdb")
	if out, errb, code := runAll("--store", dsn2, "import", "csv", csvFile); code != cli.ExitOK {
		t.Fatalf("import csv: exit %d\n%s\n%s", code, out, errb)
	}
	if out, errb, code := runAll("--store", dsn2, "prices", "--format", "csv"); code != cli.ExitOK ||
		strings.Count(out, ",recorded\n") != strings.Count(out, "\n")-1 || strings.Count(out, "\n") < 10 || !strings.Contains(errb, "recorded examples") {
		t.Errorf("imported recorded rows are not marked recorded: exit %d\n%s\n%s", code, out, errb)
	}
	// --until is --at: the same answer, as a date or a time.
	for _, c := range [][]string{
		{"spreads", "--gpu", "H100-SXM-80GB", "--since", "7d"},
		{"volatility", "--window", "30d"},
		{"history", "--gpu", "H100-SXM-80GB", "--since", "30d"},
		{"index", "--gpu", "H100-SXM-80GB", "--since", "30d"},
	} {
		at := q(append(c, "--at", "2026-11-02", "--format", "csv")...)
		until := q(append(c, "--until", "2026-11-02T00:00:00Z", "--format", "csv")...)
		if at != until || strings.Count(at, "\n") < 2 {
			t.Errorf("%s: --until differs from --at, or is empty:\n%s\n---\n%s", c[0], at, until)
		}
	}
	// A date as --since is the span from it to --until.
	if a, b := q("spreads", "--gpu", "H100-SXM-80GB", "--since", "2026-10-26", "--until", "2026-11-02", "--format", "csv"),
		q("spreads", "--gpu", "H100-SXM-80GB", "--since", "7d", "--at", "2026-11-02", "--format", "csv"); a != b {
		t.Errorf("--since DATE --until DATE differs from --since 7d --at:\n%s\n---\n%s", a, b)
	}
	// A span as --until: that long ago, as --at that time says it.
	weekAgo := time.Now().UTC().Add(-7 * 24 * time.Hour).Truncate(time.Second).Format(time.RFC3339)
	if a, b := q("spreads", "--gpu", "H100-SXM-80GB", "--since", "2d", "--until", "1w", "--format", "csv"),
		q("spreads", "--gpu", "H100-SXM-80GB", "--since", "2d", "--at", weekAgo, "--format", "csv"); a != b {
		t.Errorf("--until 1w differs from --at %s:\n%s\n---\n%s", weekAgo, a, b)
	}
	// runs: the reparse started now.
	if out := q("runs", "--since", "1h", "--format", "csv", "--limit", "0"); strings.Count(out, "\n") != 13 {
		t.Errorf("runs --since 1h: want the 12 runs of the reparse:\n%s", out)
	}
	if out := q("runs", "--until", "2026-11-02", "--format", "csv"); strings.Count(out, "\n") != 1 {
		t.Errorf("runs --until 2026-11-02: want none:\n%s", out)
	}
	if out := q("runs", "--since", "2w", "--until", "1h", "--format", "csv"); strings.Count(out, "\n") != 1 {
		t.Errorf("runs --since 2w --until 1h: want none:\n%s", out)
	}
	if out := q("quarantine", "--since", "2026-11-01", "--until", "1h", "--format", "json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("quarantine --since --until: %s", out)
	}
	if out := q("rollup", "--since", "2026-10-01", "--until", "2026-11-05"); !strings.Contains(out, "days since 2026-10-01 until 2026-11-05") {
		t.Errorf("rollup --since --until: %s", out)
	}
	for _, bad := range [][]string{
		{"spreads", "--at", "2026-11-02", "--until", "2026-11-02"},
		{"runs", "--since", "soon"},
		{"runs", "--since", "2026-11-02", "--until", "2026-11-01"},
		{"quarantine", "--until", "tomorrow"},
		{"alerts", "--at", "2026-11-02", "--until", "1d"},
	} {
		if _, errb, code := runAll(append(bad, "--store", dsn)...); code != cli.ExitUsage {
			t.Errorf("gpuprice %s: exit %d, want %d (usage): %s", strings.Join(bad, " "), code, cli.ExitUsage, errb)
		}
	}
}

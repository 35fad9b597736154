package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
)

// historyBlock is the block of README.md after the line "A year of real history":
// the build line (deploy/build-history.sh, which needs clones) and the gpuprice
// commands run on what it wrote.
func historyBlock(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	state := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.HasPrefix(line, "A year of real history"):
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			return cmds
		case state == 2:
			line, _, _ = strings.Cut(line, "#")
			fields := strings.Fields(line)
			if len(fields) == 0 || fields[0] == "deploy/build-history.sh" {
				continue
			}
			if fields[0] != "gpuprice" {
				t.Fatalf("README history block: %q is not a gpuprice command", line)
			}
			cmds = append(cmds, fields[1:])
		}
	}
	t.Fatal("README.md has no history block")
	return nil
}

// TestReadmeHistory runs the README's history block as written (but its build line)
// on a fresh data directory, offline, over the Parquet deploy/build-history.sh wrote
// to examples/history, and checks that the history moves: volatility with figures,
// an index that changes, the report's trend computed from matched series of real
// days, an alert firing on a real spot move, and the web app's series chart drawing
// more than 100 points in headless Chromium. Without the Parquet (see
// examples/history/README.md) it skips, saying so.
func TestReadmeHistory(t *testing.T) {
	cmds := historyBlock(t)
	if len(cmds) < 5 || cmds[0][0] != "import" || cmds[0][1] != "parquet" {
		t.Fatalf("history block %v: want import parquet first, then queries", cmds)
	}
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, cmds[0][2])); err != nil {
		t.Skipf("%s is not in the repository (examples/history/README.md says why): %v", cmds[0][2], err)
	}
	t.Setenv("GPUPRICE_DATA_DIR", t.TempDir())
	t.Setenv("GPUPRICE_STORE", "")
	if os.Getenv("GPUPRICE_ARTIFACTS") == "" { // screenshots where the other browser tests put theirs
		dir, err := filepath.Abs(filepath.Join("testdata", "artifacts"))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("GPUPRICE_ARTIFACTS", dir)
	}
	t.Chdir(root)
	seen := map[string]string{}
	for _, c := range cmds {
		out, errb, code := runAll(c...)
		if code != cli.ExitOK {
			t.Fatalf("gpuprice %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(c, " "), code, out, errb)
		}
		seen[c[0]] += out
	}
	num := regexp.MustCompile(`^-?[0-9]+\.[0-9]+$`)

	// Volatility: rows with figures (a standard deviation of log returns > 0 and
	// price changes), not "-".
	lines := strings.Split(strings.TrimSpace(seen["volatility"]), "\n")
	if len(lines) < 2 {
		t.Fatalf("volatility: no rows:\n%s", seen["volatility"])
	}
	// The columns after ZONE (which may be empty) are read from the right.
	header := strings.Fields(lines[0])
	sdAt, changesAt := len(header)-indexOf(header, "STD_LOG_RETURN"), len(header)-indexOf(header, "CHANGES")
	moving := 0
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < sdAt {
			continue
		}
		sd, changes := f[len(f)-sdAt], f[len(f)-changesAt]
		if v, err := strconv.ParseFloat(sd, 64); err == nil && num.MatchString(sd) && v > 0 && changes != "0" {
			moving++
		}
	}
	if moving == 0 {
		t.Errorf("volatility: no series with figures:\n%s", seen["volatility"])
	}

	// The index changes over the year.
	prices := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(seen["index"]), "\n")[1:] {
		if f := strings.Fields(l); len(f) > 4 {
			prices[f[4]] = true
		}
	}
	if len(prices) < 5 {
		t.Errorf("index: %d distinct daily levels over the year, want it to move:\n%.600s", len(prices), seen["index"])
	}

	// The series has many daily bars.
	if n := len(strings.Split(strings.TrimSpace(seen["series"]), "\n")) - 1; n <= 100 {
		t.Errorf("series: %d bars, want more than 100", n)
	}

	// The report's trend comes from the same series matched day to day, over days
	// of the history: non-zero, with its samples counted.
	m := regexp.MustCompile(`Trend of the same offers \(matched day to day\): (-?[0-9.]+) per GPU-hour per 30 days \((-?[0-9.]+) %\)`).
		FindStringSubmatch(seen["report"])
	if m == nil || m[1] == "0.0000" {
		t.Errorf("report: no trend from matched days:\n%.2000s", seen["report"])
	}
	if row := regexp.MustCompile(`(?m)^\| \* \| ([0-9]+) \| ([0-9]+) \|`).FindStringSubmatch(seen["report"]); row == nil || row[2] == "0" {
		t.Errorf("report: no samples in the percentiles table:\n%.2000s", seen["report"])
	}

	// An alert fires on a real spot move.
	if !regexp.MustCompile(`(?m)^h100-spot-move\s+spot_move\s+.*\s+started\s+-?[0-9.]+%`).MatchString(seen["alerts"]) {
		t.Errorf("alerts: the spot move did not fire:\n%s", seen["alerts"])
	}

	// The web app's series chart of the same GPU draws more than 100 points.
	base, stop := startServe(t)
	defer stop()
	ctx := browser(t)
	do(t, ctx, "open the history's series", chromedp.Navigate(base+"/series?gpu=H100-SXM-80GB&provider=gcp&pricing=spot&since=900d"),
		chromedp.WaitVisible(chromedp.CSS(`#series-chart[data-series-drawn]`)))
	if bars := eval[int](t, ctx, `document.querySelectorAll('#series-chart details tbody tr').length`); bars <= 100 {
		t.Errorf("series chart has %d points, want more than 100", bars)
	}
	if px := eval[int](t, ctx, canvasPixels("#series-chart", 47, 111, 222)); px < 100 {
		t.Logf("%d pixels of the first line's colour on the canvas", px)
	}
	shot(t, ctx, "history-series")
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return len(list) // not there: no column
}

// TestHelperGpuprice is the gpuprice command for the scripts a test runs (the
// arguments after "--"); it runs only when GPUPRICE_HELPER_MAIN is set.
func TestHelperGpuprice(t *testing.T) {
	if os.Getenv("GPUPRICE_HELPER_MAIN") == "" {
		t.Skip("helper process for the scripts' tests")
	}
	os.Exit(cli.Main(context.Background(), flag.Args(), os.Stdout, os.Stderr))
}

// calculatorRepo builds a google-cloud-pricing-cost-calculator layout with a
// pricing.yml committed weekly (test values: an H100 machine whose spot price moves).
func calculatorRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(env []string, args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(nil, "init", "-q", "-b", "master")
	git(nil, "config", "user.email", "calc@example.com")
	git(nil, "config", "user.name", "calc")
	if err := os.WriteFile(filepath.Join(dir, "LICENSE"), []byte("  Apache License\n  Version 2.0, January 2004\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for week := range 8 {
		yml := fmt.Sprintf("compute:\n  instance:\n    a3-highgpu-8g:\n      cost:\n        us-central1:\n"+
			"          hour: 88\n          hour_spot: %v\n      h100-80gb: 8\n", 20+week)
		if err := os.WriteFile(filepath.Join(dir, "pricing.yml"), []byte(yml), 0o644); err != nil {
			t.Fatal(err)
		}
		git(nil, "add", "LICENSE", "pricing.yml")
		date := time.Date(2026, 3, 2, 6, 0, 0, 0, time.UTC).AddDate(0, 0, 7*week).Format(time.RFC3339)
		git([]string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, "commit", "-q", "-m", "Pricing updated")
	}
	return dir
}

// TestBuildHistoryScript runs deploy/build-history.sh on a SkyPilot catalog and a
// pricing calculator laid out as the public repositories are, twice: the files it
// writes name each source's commits, licence and settings, read back with the
// commit times, and the second build gives the same Parquet (the same commits are
// sampled).
func TestBuildHistoryScript(t *testing.T) {
	sky := skypilotRepo(t)
	licence := exec.Command("git", "-C", sky, "commit", "-q", "--allow-empty", "-m", "licence")
	if err := os.WriteFile(filepath.Join(sky, "LICENSE"), []byte("  Apache License\n  Version 2.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", sky, "add", "LICENSE").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	licence.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-03-06T10:00:00Z", "GIT_COMMITTER_DATE=2026-03-06T10:00:00Z")
	if out, err := licence.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	calc := calculatorRepo(t)
	wrapper := filepath.Join(t.TempDir(), "gpuprice")
	script := fmt.Sprintf("#!/bin/sh\nGPUPRICE_HELPER_MAIN=1 exec %q -test.run '^TestHelperGpuprice$' -- \"$@\"\n", os.Args[0])
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	build := func(out string) {
		cmd := exec.Command("bash", filepath.Join("..", "..", "deploy", "build-history.sh"), "--skypilot", sky, "--gcp-calculator", calc)
		cmd.Env = append(os.Environ(), "GPUPRICE="+wrapper, "OUT="+out, "SINCE=2026-01-01", "UNTIL=2026-06-01", "EVERY=14d",
			"REGIONS=us-east-1,us-central1")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build-history.sh: %v\n%s", err, b)
		}
	}
	first, second := t.TempDir(), t.TempDir()
	build(first)
	build(second)
	for _, name := range []string{"skypilot-catalog", "gcp-pricing-calculator"} {
		a, err1 := os.ReadFile(filepath.Join(first, name+".parquet"))
		b, err2 := os.ReadFile(filepath.Join(second, name+".parquet"))
		if err1 != nil || err2 != nil || len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s.parquet: two builds differ or are missing (%v, %v)", name, err1, err2)
		}
	}
	commits, _ := os.ReadFile(filepath.Join(first, "gcp-pricing-calculator.commits.csv"))
	// Weekly commits from Mar 2, in 14-day periods from the epoch: every other week.
	if n := strings.Count(string(commits), "\n") - 1; n != 4 || !strings.Contains(string(commits), ",2026-03-02T06:00:00Z,pricing.yml,gcp,,") {
		t.Errorf("gcp commits.csv (%d snapshots):\n%s", n, commits)
	}
	prov, _ := os.ReadFile(filepath.Join(first, "PROVENANCE.md"))
	for _, want := range []string{"## skypilot-catalog", "## gcp-pricing-calculator", "Apache License 2.0 (LICENSE at ",
		"`catalogs/v7/aws/vms.csv`, `catalogs/v7/lambda/vms.csv`", "commits from 2026-01-01 to 2026-06-01 (excluded)",
		"Regions kept | us-east-1,us-central1", "`SINCE=2026-01-01 UNTIL=2026-06-01 EVERY=14d"} {
		if !strings.Contains(string(prov), want) {
			t.Errorf("PROVENANCE.md lacks %q:\n%s", want, prov)
		}
	}
	// Read back: the commit times, and each row names its commit.
	cfg, _ := backfillConfig(t, "http://127.0.0.1:1")
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "back.duckdb")
	run(t, "--config", cfg, "--store", dsn, "import", "parquet", filepath.Join(first, "gcp-pricing-calculator.parquet"))
	back, _ := run(t, "--config", cfg, "--store", dsn, "export", "--format", "jsonl")
	rows := strings.Split(strings.TrimSpace(back), "\n")
	if len(rows) != 8 { // 4 snapshots, on_demand and spot
		t.Fatalf("%d rows read back:\n%s", len(rows), back)
	}
	for _, l := range rows {
		if !strings.Contains(l, `"original_source_url":"gcp-pricing-calculator:`) || !strings.Contains(l, `"observed_at":"2026-0`) {
			t.Errorf("row %s: no commit or commit time", l)
		}
	}
}

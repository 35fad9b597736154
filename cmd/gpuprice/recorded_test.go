package main

import (
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
)

var updateRecorded = flag.Bool("update-recorded", false, "rebuild examples/recorded from the sources' test fixtures")

// TestRecordedExample rebuilds examples/recorded, with -update-recorded: a real
// `collect --record` against the replay server of the sources' test fixtures (Azure's
// two retail price pages, a Vast offer search, Lambda's pricing page, the ECB rates).
// Regenerate with
//
//	go test ./cmd/gpuprice -run TestRecordedExample -update-recorded
func TestRecordedExample(t *testing.T) {
	if !*updateRecorded {
		t.Skip("run with -update-recorded to rebuild examples/recorded")
	}
	dst, err := filepath.Abs(filepath.Join("..", "..", "examples", "recorded"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "rec.duckdb")
	if out, code := run(t, "--config", cfg, "--store", dsn, "collect", "--record", dst); !collected(code) {
		t.Fatalf("collect --record: exit %d\n%s", code, out)
	}
}

// quickStart is the offline quick start of README.md: the commands of the code block
// after the line "Offline, from the recorded archive".
func quickStart(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	state := 0 // 0 before the marker, 1 before the block, 2 in it
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.Contains(line, "Offline, from the recorded archive"):
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			return cmds
		case state == 2:
			line, _, _ = strings.Cut(line, "#")
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			if fields[0] != "gpuprice" {
				t.Fatalf("README quick start: %q is not a gpuprice command", line)
			}
			cmds = append(cmds, fields[1:])
		}
	}
	t.Fatal("README.md has no offline quick start block")
	return nil
}

// TestReadmeQuickStartOffline runs the README's offline quick start as written, from
// the repository's root, on a fresh data directory, with no network.
func TestReadmeQuickStartOffline(t *testing.T) {
	cmds := quickStart(t)
	if len(cmds) < 3 || cmds[0][0] != "reparse" {
		t.Fatalf("quick start %v: want reparse first, then queries", cmds)
	}
	t.Setenv("GPUPRICE_DATA_DIR", t.TempDir())
	t.Setenv("GPUPRICE_STORE", "")
	t.Chdir(filepath.Join("..", ".."))
	seen := map[string]string{}
	for _, c := range cmds {
		out, errb, code := runAll(c...)
		if code != cli.ExitOK && !(c[0] == "reparse" && code == cli.ExitPartial) {
			t.Fatalf("gpuprice %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(c, " "), code, out, errb)
		}
		seen[c[0]] += out
	}
	for cmd, want := range map[string][]string{
		"reparse":    {"azure", "lambda", "vast"},
		"prices":     {"lambda", "vast", "azure"},
		"volatility": {"GPU"},
	} {
		for _, w := range want {
			if out, ok := seen[cmd]; ok && !strings.Contains(out, w) {
				t.Errorf("gpuprice %s: output lacks %q:\n%s", cmd, w, out)
			}
		}
	}
}

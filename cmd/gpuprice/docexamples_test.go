package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
)

// checkedBlock marks a documented block of example commands whose exit status a test
// checks: the line before the block's ``` fence says `<!-- checked: exit N -->`.
var checkedBlock = regexp.MustCompile(`^<!-- checked: exit (\d+) -->$`)

// TestDocumentedExamples runs every example command the docs mark (checkedBlock) and
// checks its documented exit status (issue 23). Each runs in a directory of its own
// holding prices.duckdb, filled from examples/recorded, which is also the store of a
// command that names none; so `--store ./prices.duckdb` is that file and
// `--store ./missing.duckdb` one that does not exist.
func TestDocumentedExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	recorded, err := filepath.Abs(filepath.Join(root, "examples", "recorded"))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	type example struct {
		where string
		args  []string
		code  int
	}
	var examples []example
	for _, f := range files {
		examples = append(examples, func() []example {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			var out []example
			code, in := -1, false
			sc := bufio.NewScanner(fh)
			for n := 1; sc.Scan(); n++ {
				line := strings.TrimSpace(sc.Text())
				switch {
				case checkedBlock.MatchString(line):
					code, _ = strconv.Atoi(checkedBlock.FindStringSubmatch(line)[1])
				case strings.HasPrefix(line, "```") && code >= 0 && !in:
					in = true
				case strings.HasPrefix(line, "```") && in:
					in, code = false, -1
				case in && strings.HasPrefix(line, "gpuprice "):
					out = append(out, example{filepath.Base(f) + ":" + strconv.Itoa(n), strings.Fields(line)[1:], code})
				}
			}
			return out
		}()...)
	}
	if len(examples) < 10 {
		t.Fatalf("%d checked examples in the docs; the markers (<!-- checked: exit N -->) were lost", len(examples))
	}
	dir := t.TempDir()
	t.Chdir(dir)
	dsn := "duckdb://" + filepath.Join(dir, "prices.duckdb")
	if _, errb, code := runAll("--store", dsn, "reparse", recorded); code != cli.ExitOK {
		t.Fatalf("reparse: exit %d\n%s", code, errb)
	}
	for _, e := range examples {
		args := e.args
		if !strings.Contains(strings.Join(args, " "), "--store") {
			args = append([]string{"--store", dsn}, args...)
		}
		if _, errb, code := runAll(args...); code != e.code {
			t.Errorf("%s: gpuprice %s: exit %d, the docs say %d\n%s", e.where, strings.Join(e.args, " "), code, e.code, errb)
		}
	}
}

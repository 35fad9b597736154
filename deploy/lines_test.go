package deploy_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxLine is the longest line of non-test Go code, in characters (a tab counts one).
const maxLine = 120

// TestNoLongLines fails on a line of non-test Go code longer than maxLine characters
// (docs/architecture.md, "Choices"): a long string is split with +, a long call
// broken after a comma.
func TestNoLongLines(t *testing.T) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "*.go").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	long := 0
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		fh, err := os.Open("../" + f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			if c := utf8.RuneCountInString(sc.Text()); c > maxLine {
				long++
				if long <= 20 {
					t.Errorf("%s:%d: %d characters (at most %d)", f, n, c, maxLine)
				}
			}
		}
		fh.Close()
	}
	if long > 20 {
		t.Errorf("%d lines longer than %d characters in all", long, maxLine)
	}
}

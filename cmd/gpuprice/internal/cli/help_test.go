package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpReadsAsWords: every flag's value name in --help is a word, and every
// command that runs has an example.
func TestHelpReadsAsWords(t *testing.T) {
	a := &app{stdout: io.Discard, stderr: io.Discard}
	root := a.root()
	plainValueNames(root)
	var noExample []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if name, _ := pflag.UnquoteUsage(f); strings.Contains(name, " ") {
				t.Errorf("%s --%s: value name %q", c.CommandPath(), f.Name, name)
			}
		}
		c.LocalFlags().VisitAll(check)
		if c.Runnable() && c.Example == "" && c.Name() != "help" && c.Name() != "completion" {
			noExample = append(noExample, c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(noExample) > 0 {
		t.Errorf("commands without an example: %s", strings.Join(noExample, ", "))
	}
}

package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/config"
	"github.com/gpuprice/gpuprice/schemas"
)

// Exit codes: every status gpuprice exits with is here (README.md "Exit codes" and
// docs/user-guide.md list them; TestExitCodes keeps them in step).
const (
	ExitOK = 0
	// ExitError: the command could not do its job (store unreachable, invalid config
	// file, a query failed, …).
	ExitError = 1
	// ExitUsage: the command line is wrong (unknown command or flag, bad flag value,
	// wrong number of arguments, unknown --source).
	ExitUsage = 2
	// ExitPartial: collect/reparse ran, but some sources failed or were degraded;
	// the others' rows are stored.
	ExitPartial = 3
	// ExitAllFailed: collect/reparse ran and every source failed; nothing was stored.
	ExitAllFailed = 4
	// ExitDataLost: rows were neither stored nor spooled (ErrRowsLost).
	ExitDataLost = 5
	// ExitInterrupted: stopped by SIGINT or SIGTERM (ErrInterrupted; 128 + SIGINT,
	// as shells do).
	ExitInterrupted = 130
)

// ErrSomeFailed is returned by collect and reparse when some sources (not all)
// failed or were degraded.
var ErrSomeFailed = errors.New("some sources failed or were degraded")

// exitCodes maps sentinel errors to their exit codes, most severe first.
var exitCodes = []struct {
	err  error
	code int
}{
	{ErrInterrupted, ExitInterrupted},
	{ErrRowsLost, ExitDataLost},
	{ErrAllFailed, ExitAllFailed},
	{ErrSomeFailed, ExitPartial},
}

// usageError is a mistake on the command line.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usage error (exit status ExitUsage).
func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitCode is the process exit status for the error a command returned.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	best := 0
	for _, c := range exitCodes {
		if errors.Is(err, c.err) && c.code > best {
			best = c.code
		}
	}
	if best != 0 {
		return best
	}
	var u usageError
	var pe *query.ParamError // a flag's value the query cannot take
	if errors.As(err, &u) || errors.As(err, &pe) || strings.HasPrefix(err.Error(), "unknown command ") {
		return ExitUsage
	}
	return ExitError
}

// markUsage makes every command's argument check and flag parsing return usage errors.
func markUsage(c *cobra.Command) {
	c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{suggestFlag(cmd, err)} })
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsage(sub)
	}
}

// sourcesVerdict is the error of a collection with these statuses: ErrAllFailed when
// every source failed, ErrSomeFailed when some failed or were degraded, else nil.
func sourcesVerdict(statuses []string) error {
	failed, degraded := 0, 0
	for _, s := range statuses {
		switch s {
		case schemas.RunFailed:
			failed++
		case schemas.RunDegraded:
			degraded++
		}
	}
	switch {
	case len(statuses) > 0 && failed == len(statuses):
		return ErrAllFailed
	case failed+degraded > 0:
		return fmt.Errorf("%w: %d failed, %d degraded of %d", ErrSomeFailed, failed, degraded, len(statuses))
	}
	return nil
}

// exitCodesHelp is `gpuprice help exit-codes`.
func (a *app) exitCodesHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "What gpuprice's exit status means",
		Long: fmt.Sprintf(`Exit status of every gpuprice command:

  %d  success (collect, reparse: every source was ok)
  %d  the command could not do its job (store unreachable, invalid config file, …)
  %d  usage error: unknown command or flag, bad flag value, wrong arguments
  %d  collect, reparse: some sources failed or were degraded (the others' rows are stored)
  %d  collect, reparse: every source failed (nothing new was stored)
  %d  rows were lost: neither stored nor spooled
  %d  interrupted by SIGINT or SIGTERM (serve: always on a signal, after keeping
      what its collections under way had read)`, ExitOK, ExitError, ExitUsage, ExitPartial, ExitAllFailed,
			ExitDataLost, ExitInterrupted),
	}
}

// plainValueNames keeps the help's flag value names words: pflag takes a backquoted
// phrase in a flag's usage as the value's name ("--gpu gpuprice gpus"), so a phrase
// with a space loses its backquotes.
func plainValueNames(c *cobra.Command) {
	fix := func(f *pflag.Flag) {
		if name, _ := pflag.UnquoteUsage(f); strings.Contains(name, " ") {
			f.Usage = strings.ReplaceAll(f.Usage, "`", "")
		}
	}
	c.Flags().VisitAll(fix)
	c.PersistentFlags().VisitAll(fix)
	for _, sub := range c.Commands() {
		plainValueNames(sub)
	}
}

// suggestFlag adds "did you mean" to an unknown flag's error (cobra suggests
// commands, not flags): the command's flag within two edits of the one given.
func suggestFlag(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	add := func(f *pflag.Flag) { names = append(names, f.Name) }
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	if s := config.Closest(name, names); s != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, s)
	}
	return err
}

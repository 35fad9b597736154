package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
)

// explainUnreachable writes one short paragraph when sources failed because they
// could not reach their hosts: which, why, and the ways on (a proxy, a mirror, the
// recorded archive). The per-request details are logged at debug level.
func explainUnreachable(w io.Writer, results []ingest.Result) {
	var names, reasons []string
	for _, r := range results {
		if r.Status != schemas.RunFailed {
			continue
		}
		if why := fetch.UnreachableReason(r.Error); why != "" {
			names = append(names, r.Source)
			if !slices.Contains(reasons, why) {
				reasons = append(reasons, why)
			}
		}
	}
	if len(names) == 0 {
		return
	}
	who := fmt.Sprintf("%d of %d sources could not reach their providers (%s)", len(names), len(results),
		strings.Join(names, ", "))
	if len(names) == len(results) {
		who = fmt.Sprintf("No source could reach its provider (%s)", strings.Join(names, ", "))
	}
	text := fmt.Sprintf("%s: %s. Behind a proxy, set HTTPS_PROXY (e.g. HTTPS_PROXY=http://proxy:3128); "+
		"to use a mirror, set sources.<name>.endpoint in the config file (--config, see deploy/gpuprice.example.yaml); "+
		"to try gpuprice without a network, load the recorded archive: gpuprice reparse examples/recorded. "+
		"Details: --log-level debug.", who, strings.Join(reasons, "; "))
	fmt.Fprintf(w, "\n%s\n", wrap(text, 88))
}

// wrap breaks text into lines of at most width columns, at spaces.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > width {
			b.WriteByte('\n')
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

// quietUnreachable drops warnings whose error says a host could not be reached (the
// ECB rates' refresh): explainUnreachable sums them up. --log-level shows them.
type quietUnreachable struct{ slog.Handler }

func (q quietUnreachable) Handle(ctx context.Context, r slog.Record) error {
	drop := false
	if r.Level < slog.LevelError {
		r.Attrs(func(at slog.Attr) bool {
			if at.Key == "error" && fetch.UnreachableReason(at.Value.String()) != "" {
				drop = true
				return false
			}
			return true
		})
	}
	if drop {
		return nil
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietUnreachable) WithAttrs(as []slog.Attr) slog.Handler {
	return quietUnreachable{q.Handler.WithAttrs(as)}
}

func (q quietUnreachable) WithGroup(name string) slog.Handler {
	return quietUnreachable{q.Handler.WithGroup(name)}
}

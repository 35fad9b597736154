package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/analytics/digest"
	"github.com/gpuprice/gpuprice/analytics/query"
)

func init() { addCommand((*app).digestCmd) }

func (a *app) digestCmd() *cobra.Command {
	var since, at, format string
	var gpus, pricing []string
	cmd := &cobra.Command{
		Use:   "digest",
		Short: "What moved this week for the GPUs you follow: Markdown, HTML or Slack blocks",
		Long: `digest writes the week's digest for the followed GPUs (--gpu, else digest.gpus in
the configuration, else the GPUs the alert rules name): per pricing kind the median
and cheapest offer of each tier on the last day, the week-over-week change of the
matched-sample chained index (only series priced on consecutive days move it), the
tier spreads, the largest spot moves, the runs that failed and the interruption-band
changes of the week. Each section prints the command that gives its numbers and,
with serve.public_url, links to its chart in the web app.

serve sends it on digest.schedule to the webhook and Slack notifiers (docs/alerts.md).`,
		Example: `  gpuprice digest --gpu H100-SXM-80GB --gpu a100
  gpuprice digest --since 7d --at 2026-11-02 --format html > digest.html
  gpuprice digest --format slack   # the Block Kit message serve posts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, digest.Formats...); err != nil {
				return err
			}
			q, err := a.digestQuery(gpus, pricing, since, at)
			if err != nil {
				return err
			}
			return a.withReports(cmd, func(src query.Source) error {
				d, err := a.buildDigest(cmd.Context(), src, q)
				if err != nil {
					return err
				}
				return writeDigest(a.stdout, format, d)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&since, "since", "", "the week's length (default digest.since, else 7d)")
	fl.StringVar(&at, "at", "", "the week ends at this time, RFC 3339 or a date (default: now)")
	fl.StringSliceVar(&gpus, "gpu", nil, "a followed GPU, as typed (repeat; default digest.gpus)")
	fl.StringSliceVar(&pricing, "pricing", nil, "pricing kinds (repeat; default digest.pricing, else on_demand and spot)")
	fl.StringVar(&format, "format", "markdown", "markdown, html, slack (Block Kit JSON) or json")
	return cmd
}

// digestQuery is the digest's query from the flags, the configuration's digest
// section filling what they leave out.
func (a *app) digestQuery(gpus, pricing []string, since, at string) (digest.Query, error) {
	c := a.cfg.Digest
	q := digest.Query{GPUs: gpus, Pricing: pricing, Since: time.Duration(c.Since)}
	if len(q.GPUs) == 0 {
		q.GPUs = c.Followed(a.cfg.Alerts.Rules)
	}
	if len(q.GPUs) == 0 {
		return q, usagef("give --gpu (or digest.gpus in the configuration): the GPUs the digest follows")
	}
	if len(q.Pricing) == 0 {
		q.Pricing = c.Pricing
	}
	if since != "" {
		d, err := query.ParseSpan(since)
		if err != nil {
			return q, usagef("--since %q: %v", since, err)
		}
		q.Since = d
	}
	t, err := parseAt(at)
	if err != nil {
		return q, usageError{err}
	}
	q.At = t
	return q, nil
}

// buildDigest builds the digest from src (a store's reader, or the API of the
// serve that holds the store).
func (a *app) buildDigest(ctx context.Context, src query.Source, q digest.Query) (*digest.Digest, error) {
	return digest.Build(ctx, src, q, digest.Options{PublicURL: a.cfg.Serve.PublicURL})
}

func writeDigest(w io.Writer, format string, d *digest.Digest) error {
	switch format {
	case "html":
		return digest.HTML(w, d)
	case "slack":
		return writeJSON(w, digest.Slack(d))
	case "json":
		return writeJSON(w, d)
	}
	return digest.Markdown(w, d)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// digestSender builds the digest as of now for serve's schedule and posts it to the
// digest's notifiers, when hold says this serve is the one of those sharing the
// store that does (the alerts' lease: alert.ErrStandingBy when another is).
func (a *app) digestSender(reader *query.Reader, hold func(context.Context) error) (
	func(ctx context.Context) ([]digest.Delivery, error), error) {
	targets, err := alert.BuildTargets(a.cfg.Digest.Targets(a.cfg.Alerts.Notifiers), a.client(), os.Getenv,
		a.redactLogger(a.log))
	if err != nil {
		return nil, err
	}
	gpus := a.cfg.Digest.Followed(a.cfg.Alerts.Rules)
	if len(gpus) == 0 {
		return nil, fmt.Errorf("digest.schedule: no GPU to follow: give digest.gpus")
	}
	return func(ctx context.Context) ([]digest.Delivery, error) {
		if err := hold(ctx); err != nil {
			return nil, err
		}
		now := time.Now().UTC()
		d, err := a.buildDigest(ctx, reader, digest.Query{GPUs: gpus, Pricing: a.cfg.Digest.Pricing,
			Since: time.Duration(a.cfg.Digest.Since), At: now})
		if err != nil {
			return nil, err
		}
		ds, err := digest.Send(ctx, targets, d, now)
		if err != nil {
			return ds, fmt.Errorf("%s", a.redactor().Redact(strings.TrimSpace(err.Error())))
		}
		return ds, nil
	}, nil
}

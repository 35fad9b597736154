package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/publish"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/analytics/report"
	"github.com/gpuprice/gpuprice/schemas"
)

func init() { addCommand((*app).reportCmd) }

// reportFormat is the format of --out's extension, else of --format.
func reportFormat(format, out string) (string, error) {
	if format == "" {
		switch strings.ToLower(filepath.Ext(out)) {
		case ".html", ".htm":
			format = "html"
		case ".pdf":
			format = "pdf"
		case ".md", ".markdown":
			format = "markdown"
		case "":
			format = "markdown"
			if out != "" {
				return "", usagef("--out %q: name a .html, .pdf or .md file, or give --format", out)
			}
		default:
			return "", usagef("--out %q: name a .html, .pdf or .md file, or give --format", out)
		}
	}
	switch format {
	case "html", "markdown":
	case "pdf":
		if out == "" || out == "-" {
			return "", usagef("--format pdf writes a file: give --out report.pdf")
		}
	default:
		return "", usagef("--format %q: use html, pdf or markdown", format)
	}
	return format, nil
}

func (a *app) reportCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use: "report",
		Short: "The buyer's report: a GPU's price history and analytics as one HTML, PDF or Markdown file to bring to a " +
			"negotiation",
		Long: `report writes one self-contained document about one GPU and pricing kind: the
market price over time by provider and tier (chart), the p10–p90 band and today's
position in it, the cheapest offers now, reserved and commitment discounts against
on-demand per provider, the hyperscaler/specialist spread and its trend, spot
volatility and the worst drawdowns, $ per 1B training tokens for a model size, the
reference index, and the method (sources, when each last ran, definitions, what was
left out and why). With --quote, the summary opens with the verdict, like for like:
the quote's place among the offers of the same --term in force on the last day
("3rd cheapest of 7 one-year offers; $0.81 above the cheapest (together, $2.69)"),
against today's on-demand and spot medians with the utilisation at which each wins,
and a target price section says what the term's cheapest offer would save.

Every number is the one the named commands (history, spreads, index, volatility,
tokens, prices) give for the same filters; each section says which. Missing data is
shown as missing, never as zero. The HTML needs no network (charts are inline SVG);
--out FILE.pdf prints it with headless Chromium ($` + report.ChromiumEnv + `, else chromium on
the PATH). The API serves the HTML at /api/v1/report with the same parameters.`,
		Example: `  gpuprice report --gpu H100-SXM-80GB --out h100.html
  gpuprice report --gpu h100-sxm --since 365d --quote 2.10 --term 1y --gpus 64 --out h100-quote.pdf
  gpuprice report --gpu A100-SXM-80GB --provider aws --provider lambda --region us-east-1 --format markdown`,
		Args: cobra.NoArgs,
	}
	p := newParams(cmd)
	gpu := p.String("gpu", "", "one GPU: canonical (H100-SXM-80GB) or as typed (\"h100 sxm\") (required)")
	p.String("pricing", schemas.OnDemand, "pricing kind of the market figures")
	p.String("region", "", "provider region (default: all)")
	providers := p.fl.StringSlice("provider", nil, "only these providers (repeatable, or comma-separated) (default: all)")
	p.send("provider", func() (string, bool) { s := strings.Join(*providers, ","); return s, s != "" })
	p.String("since", "180d", "length of the window ending --at (a span or a date)")
	p.String("at", "", "end of the window, RFC 3339 or a date (default: now)")
	p.until()
	quote := p.fl.Float64("quote", 0, "a quoted price in $/GPU-hour: adds the target price section")
	p.send("quote", func() (string, bool) { return strconv.FormatFloat(*quote, 'f', -1, 64), p.fl.Changed("quote") })
	p.String("term", "1y", "the quote's term: 1y or 3y")
	p.String("utilisation", "", "share of the term's hours the GPUs will be used, 60% or 0.6 (default 100%): "+
		"the target price says what the quote saves at it")
	p.Count("gpus", 1, "how many GPUs the quote is for (scales the savings over the term)")
	p.String("model-params", "70B", "model size for $ per 1B training tokens (70B, 7e9, 1.5T)")
	p.Count("cheapest", 10, "how many of the cheapest offers to list")
	out := p.fl.StringP("out", "o", "", "write to this file: .html, .pdf or .md (default: Markdown on stdout)")
	format := p.fl.String("format", "", "html, pdf or markdown (default: from --out's extension)")
	p.weight()
	snapshot := p.fl.String("snapshot", "",
		"a directory of gpuprice publish: cite its snapshot days that cover the window")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *gpu == "" {
			return usagef("--gpu is required (see `gpuprice gpus`)")
		}
		f, err := reportFormat(*format, *out)
		if err != nil {
			return usageError{err}
		}
		q, err := query.ParseReport(p.values(), query.NoCaps)
		if err != nil {
			return usageError{query.FlagError(err)}
		}
		dsn, err := a.cfg.StoreDSN(a.storeDSN)
		if err != nil {
			return err
		}
		return a.withReports(cmd, func(src query.Source) error {
			cite := report.CiteStore(dsn)
			if c, ok := query.Unwrap(src).(*query.Client); ok {
				cite += " via " + c.Base
			}
			opt := report.Options{Store: cite}
			if *snapshot != "" {
				opt.Snapshot = func(from, to time.Time) (*report.Snapshot, error) {
					c, err := publish.Cite(*snapshot, from, to)
					if err != nil {
						return nil, err
					}
					return &report.Snapshot{Dir: c.Dir, ID: c.ID, From: c.From, To: c.To, Days: len(c.Days), Missing: len(c.Missing),
						Sentence: c.String()}, nil
				}
			}
			rep, err := report.Build(cmd.Context(), src, q, opt)
			if err != nil {
				return err
			}
			a.noteMatches(rep.Matched)
			var buf bytes.Buffer
			switch f {
			case "markdown":
				err = rep.Markdown(&buf)
			default:
				err = rep.HTML(&buf)
			}
			if err != nil {
				return err
			}
			body := buf.Bytes()
			if f == "pdf" {
				fmt.Fprintln(a.stderr, "gpuprice: printing the report with headless Chromium")
				if body, err = report.PDF(cmd.Context(), body); err != nil {
					return err
				}
			}
			if *out == "" || *out == "-" {
				_, err = a.stdout.Write(body)
				return err
			}
			if err := writeFileAtomic(*out, body); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "gpuprice: wrote %s (%s, %d bytes; data SHA-256 %s)\n", *out, f, len(body),
				rep.Citation.DataSHA256[:16])
			return nil
		})
	}
	return cmd
}

// writeFileAtomic writes a file through a temporary one in the same directory, so
// that a reader never sees half a report.
func writeFileAtomic(name string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

package cli

import (
	"context"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpuprice/gpuprice/analytics/query"
)

// params are a read command's flags as the API's parameters of the same names, which
// the read model's parsers (query.ParseX) read alike from a request and from the
// command line. Each flag is declared once, with its default and help, and is a
// parameter when its value is not the zero one ("", 0, false), so a default other
// than that is sent as if typed; a flag that is not a parameter is declared on fl.
type params struct {
	fl   *pflag.FlagSet
	sets []func(url.Values)
}

func newParams(cmd *cobra.Command) *params { return &params{fl: cmd.Flags()} }

// values are the parameters the flags give.
func (p *params) values() url.Values {
	v := url.Values{}
	for _, set := range p.sets {
		set(v)
	}
	return v
}

// send makes name the parameter value gives, when ok.
func (p *params) send(name string, value func() (s string, ok bool)) {
	p.sets = append(p.sets, func(v url.Values) {
		if s, ok := value(); ok {
			v.Set(name, s)
		}
	})
}

// String is a string flag, a parameter unless empty.
func (p *params) String(name, def, usage string) *string {
	s := p.fl.String(name, def, usage)
	p.send(name, func() (string, bool) { return *s, *s != "" })
	return s
}

// Int is an int flag, a parameter unless 0.
func (p *params) Int(name string, def int, usage string) *int {
	n := p.fl.Int(name, def, usage)
	p.send(name, func() (string, bool) { return strconv.Itoa(*n), *n != 0 })
	return n
}

// Count is an int flag that is always a parameter, 0 included (--limit 0: all).
func (p *params) Count(name string, def int, usage string) *int {
	n := p.fl.Int(name, def, usage)
	p.send(name, func() (string, bool) { return strconv.Itoa(*n), true })
	return n
}

// Float is a float flag, a parameter unless 0.
func (p *params) Float(name string, def float64, usage string) *float64 {
	x := p.fl.Float64(name, def, usage)
	p.send(name, func() (string, bool) { return ftoa(*x), *x != 0 })
	return x
}

// Bool is a flag that sends "true" when given.
func (p *params) Bool(name, usage string) *bool {
	b := p.fl.Bool(name, false, usage)
	p.send(name, func() (string, bool) { return "true", *b })
	return b
}

// modelParams adds --params, a model's parameter count as people write one (7B,
// 7e9; countFlag), always a parameter (tokens and inference require it).
func (p *params) modelParams(usage string) *float64 {
	n := new(float64)
	p.fl.Var(countFlag(n), "params", usage)
	p.send("params", func() (string, bool) { return ftoa(*n), true })
	return n
}

// ftoa is a float parameter's text.
func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// filters adds --gpu, --provider, --pricing, --region and --tier, the filters of the
// commands that read offers.
func (p *params) filters() {
	p.String("gpu", "", "GPU: canonical (H100-SXM-80GB), a family (h100) or as typed (\"H100 SXM\"); see `gpuprice gpus`")
	p.String("provider", "", "provider, e.g. aws, lambda, vast")
	p.String("pricing", "", "pricing kind: on_demand, spot, reserved_1y, reserved_3y, commitment_<n>m")
	p.String("region", "", "provider region (e.g. eastus, us-east-1; case does not matter)")
	p.String("tier", "", "hyperscaler, specialist or marketplace")
}

// interconnect adds --interconnect (prices, tokens, inference: the offers read
// from observations, which carry one).
func (p *params) interconnect() {
	p.String("interconnect", "", "published interconnect between nodes: infiniband, roce, efa, rdma (any of the three), "+
		"ethernet, nvlink-only, unknown")
}

// window adds the window ending --at: name (since or window) its length, --at, --until.
func (p *params) window(name, def string) {
	p.String(name, def, "length of the window ending --at")
	p.String("at", "", "end of the window, RFC 3339 or a date (default: now)")
	p.until()
}

// until adds --until, the end of the window as --at gives it, also as a span back
// from now (2w: two weeks ago), parsed as --since is (query.ParseUntil).
func (p *params) until() { p.String("until", "", untilHelp) }

const untilHelp = "end of the window, as --at, or a span back from now (2w, 36h); give one of --at and --until"

// weight is the --weight flag of every command that computes a percentile,
// median, band or verdict over the market at a time (analytics.MarketMethod).
func (p *params) weight() {
	p.String("weight", "offer", "how each day's market counts: offer (every offer in force once) or provider "+
		"(every provider once, its offers' median, so one provider's many regions cannot outvote the rest)")
}

// scope adds --scope, the price scope compared, said as help says it.
func (p *params) scope(help string) { p.String("scope", "instance", help) }

const (
	scopeHelp = "price scope compared: instance (whole machines, the default) or gpu_only " +
		"(GPU-only prices compared with each other only)"
	scopeHelpGCP = "price scope compared: instance (whole machines, the default) or gpu_only (GPU-only prices, " +
		"e.g. GCP accelerator SKUs, compared with each other only)"
)

// formatFlag adds --format, the table commands' output format.
func formatFlag(fl *pflag.FlagSet) *string {
	f := fl.String("format", "table", "table, json, csv or markdown")
	_ = fl.SetAnnotation("format", formatsAnnotation, query.Formats)
	return f
}

// formatsAnnotation marks a --format flag with the formats it takes (formatFlag):
// read checks it before the store is opened, as a usage error.
const formatsAnnotation = "gpuprice_formats"

// checkFormatFlag checks cmd's --format against the formats formatFlag gave it.
func checkFormatFlag(cmd *cobra.Command) error {
	if f := cmd.Flags().Lookup("format"); f != nil && f.Annotations[formatsAnnotation] != nil {
		return checkFormat(f.Value.String(), f.Annotations[formatsAnnotation]...)
	}
	return nil
}

// read is a read command's one question: its --format checked (formatFlag), its
// parameters v read by the API's parser, asked of the store or a running server (withReports), what names matched
// said on stderr, and the answer shown.
func read[Q, T any](a *app, cmd *cobra.Command, v url.Values, parse func(url.Values, query.Caps) (Q, error),
	ask func(query.Source, context.Context, Q) (query.Result[T], error), show func(Q, query.Result[T]) error) error {
	if err := checkFormatFlag(cmd); err != nil {
		return err
	}
	q, err := parse(v, query.NoCaps)
	if err != nil {
		return query.FlagError(err)
	}
	return a.withReports(cmd, func(src query.Source) error {
		res, err := ask(src, cmd.Context(), q)
		if err != nil {
			return err
		}
		a.noteMatches(res.Matched)
		return show(q, res)
	})
}

// readTable is read with the answer shown as the table table gives (or its data
// in JSON); empty, when given, is what an empty table says.
func readTable[Q, T any](a *app, cmd *cobra.Command, v url.Values, format string,
	parse func(url.Values, query.Caps) (Q, error), ask func(query.Source, context.Context, Q) (query.Result[T], error),
	table func(T) ([]string, [][]string), empty ...string) error {
	return read(a, cmd, v, parse, ask, func(_ Q, res query.Result[T]) error {
		header, rows := table(res.Data)
		return output(a.stdout, format, header, rows, res.Data, empty...)
	})
}

package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

//go:embed report.html.tmpl
var htmlTemplate string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"missing": func(s string) bool { return s == query.Missing },
}).Parse(htmlTemplate))

// HTML writes the report as one self-contained HTML file: styles inline, charts
// as inline SVG, no script and nothing fetched (its Content-Security-Policy says
// so), for a browser, a mail or print.
func (r *Report) HTML(w io.Writer) error {
	return page.Execute(w, struct {
		R        *Report
		Sections []Section
	}{r, r.Layout()})
}

// Markdown writes the report as Markdown for tickets and chat: the same sections,
// tables and numbers, the charts left to the HTML and PDF versions; "-" is a
// missing value.
func (r *Report) Markdown(w io.Writer) error {
	md := textsafe.MarkdownText
	fmt.Fprintf(w, "# %s\n\n%s. Built %s.\n", md(r.Title()), md(r.Window()), r.Built.Format("2006-01-02 15:04 UTC"))
	for _, s := range r.Layout() {
		fmt.Fprintf(w, "\n## %s\n\n", md(s.Title))
		for _, p := range s.Paras {
			fmt.Fprintf(w, "%s\n\n", md(p))
		}
		for _, c := range s.Charts {
			fmt.Fprintf(w, "_Chart (in the HTML and PDF versions): %s._\n\n", md(c.Title))
		}
		for _, t := range s.Tables {
			fmt.Fprintf(w, "%s:\n\n", md(t.Caption))
			if len(t.Rows) == 0 {
				fmt.Fprintf(w, "(none)\n\n")
				continue
			}
			if err := query.Write(w, "markdown", t.Header, t.Rows, nil); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
		for _, n := range s.Notes {
			fmt.Fprintf(w, "- %s\n", md(n))
		}
		if s.Command != "" && s.ID != SecMethod {
			fmt.Fprintf(w, "\nNumbers from `%s`.\n", s.Command)
		}
	}
	return nil
}

package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gpuprice/gpuprice/analytics/answer"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/analytics/report"
)

// reportCSP is the report's Content-Security-Policy: nothing is fetched, nothing
// runs (its charts are inline SVG).
const reportCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action " +
	"'none'; frame-ancestors 'none'"

// apiReport answers GET /api/v1/report: the buyer's report (gpuprice report) as
// one self-contained HTML page, or Markdown with ?format=markdown. The parameters
// are the command's flags.
func (s *Server) apiReport(w http.ResponseWriter, r *http.Request) {
	v, err := queryValues(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	format := "html"
	if f := v["format"]; len(f) > 0 {
		if format = f[0]; len(f) > 1 || !slices.Contains([]string{"html", "markdown"}, format) {
			s.fail(w, r, &query.ParamError{Param: "format",
				Msg: fmt.Sprintf("%q: use html or markdown (a PDF: gpuprice report --out report.pdf)", format)})
			return
		}
	}
	q, err := query.ParseReport(v, query.APICaps)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ans, err := s.cache.Get(r.URL.Path+"?"+v.Encode(), s.cfg.BarsCacheTTL, func() (answer.Answer, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 2*time.Minute)
		defer cancel()
		rep, err := report.Build(ctx, s.reader, q, report.Options{Store: s.cfg.StoreName})
		if err != nil {
			return answer.Answer{}, err
		}
		var body bytes.Buffer
		a := answer.Answer{ContentType: "text/html; charset=utf-8"}
		if format == "markdown" {
			a.ContentType = "text/markdown; charset=utf-8"
			err = rep.Markdown(&body)
		} else {
			err = rep.HTML(&body)
		}
		a.Body = body.Bytes()
		a.ETag = `"` + rep.Citation.DataSHA256[:24] + `"`
		if err != nil || s.cfg.BarsCacheTTL <= 0 {
			return a, err
		}
		return answer.WithCoding(r, a), nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ans.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", reportCSP)
	answer.WriteTagged(w, r, ans, "no-cache")
}

package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpuprice/gpuprice/analytics/answer"
	"github.com/gpuprice/gpuprice/analytics/digest"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// route is one endpoint of the API; the OpenAPI document lists exactly these.
type route struct {
	method, path string
	handler      http.HandlerFunc
	// data is the Go type of the answer's data ({data, matched}); body, when set,
	// the type of the whole answer instead (the first API's aliases, collect).
	// /openapi.json's response schemas are generated from them.
	data, body reflect.Type
}

// dataOf is the type of the data a report answers with.
func dataOf[Q, T any](func(context.Context, Q) (query.Result[T], error)) reflect.Type {
	return reflect.TypeFor[T]()
}

// withExplain answers with explained when the request has an explain parameter
// other than "false" (prices?explain=true, index?explain=DAY), else with plain.
func withExplain(plain, explained http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if v, ok := r.URL.Query()["explain"]; ok && !(len(v) == 1 && (v[0] == "false" || v[0] == "")) {
			explained(w, r)
			return
		}
		plain(w, r)
	}
}

// apiRoutes are the /api/v1 endpoints and the aliases of the first API.
func (s *Server) apiRoutes() []route {
	r := s.reader
	return []route{
		{"GET", "/api/v1/prices", withExplain(serveReport(s, query.ParsePrices, r.Prices, tableOf(query.PricesTable), false),
			serveReport(s, query.ParsePrices, r.PricesExplained, nil, false)), dataOf(r.Prices), nil},
		{"GET", "/api/v1/series", serveReport(s, query.ParseSeries, r.Series, tableOf(query.Series.Table), true),
			dataOf(r.Series), nil},
		{"GET", "/api/v1/volatility", serveReport(s, query.ParseVolatility, r.Volatility, tableOf(query.Volatility.Table),
			true), dataOf(r.Volatility), nil},
		{"GET", "/api/v1/spreads", serveReport(s, query.ParseSpreads, r.Spreads, tableOf(query.Spreads.Table), true),
			dataOf(r.Spreads), nil},
		{"GET", "/api/v1/tokens", serveReport(s, query.ParseTokens, r.Tokens, tableOf(query.Tokens.Table), false),
			dataOf(r.Tokens), nil},
		{"GET", "/api/v1/inference", serveReport(s, query.ParseInference, r.Inference, tableOf(query.Inference.Table), false),
			dataOf(r.Inference), nil},
		{"GET", "/api/v1/history", serveReport(s, query.ParseHistory, r.History, tableOf(query.HistoryRows), true),
			dataOf(r.History), nil},
		{"GET", "/api/v1/index", withExplain(serveReport(s, query.ParseIndex, r.Index, tableOf(query.IndexTable), true),
			serveReport(s, query.ParseIndex, r.IndexExplained, nil, true)), dataOf(r.Index), nil},
		{"GET", "/api/v1/terms", serveReport(s, query.ParseTerms, r.Terms, tableOf(query.Terms.Table), true), dataOf(r.Terms),
			nil},
		{"GET", "/api/v1/breakeven", serveReport(s, query.ParseBreakEven, r.BreakEven, tableOf(query.BreakEvens.Table), true),
			dataOf(r.BreakEven), nil},
		{"GET", "/api/v1/risk", serveReport(s, query.ParseRisk, r.Risk, tableOf(query.RiskHistory.Table), false),
			dataOf(r.Risk), nil},
		{"GET", "/api/v1/availability", serveReport(s, query.ParseAvailability, r.Availability,
			tableOf(query.Availability.Table), false), dataOf(r.Availability), nil},
		{"GET", "/api/v1/digest", serveReport(s, digest.ParseQuery, s.digestAnswer, nil, true), dataOf(s.digestAnswer), nil},
		{"GET", "/api/v1/report", s.apiReport, nil, nil},
		{"GET", "/api/v1/alerts", serveReport(s, query.ParseAlerts, r.Alerts, nil, false), dataOf(r.Alerts), nil},
		{"GET", "/api/v1/sources", serveReport(s, query.ParseSources, r.Sources, nil, false), dataOf(r.Sources), nil},
		{"GET", "/api/v1/runs", serveReport(s, query.ParseRuns, r.Runs, tableOf(query.RunsTable), false), dataOf(r.Runs),
			nil},
		{"GET", "/api/v1/quarantine", s.withToken(serveReport(s, query.ParseQuarantine, r.Quarantine,
			tableOf(query.QuarantineTable), false)), dataOf(r.Quarantine), nil},
		{"GET", "/api/v1/gpus", serveReport(s, query.ParseGPUs, r.GPUs, nil, false), dataOf(r.GPUs), nil},
		{"GET", "/api/v1/fx", serveReport(s, query.ParseFX, r.FX, tableOf(query.FXTable), false), dataOf(r.FX), nil},
		{"POST", "/api/v1/collect", s.apiCollect, nil, reflect.TypeFor[CollectAnswer]()},
		{"GET", "/api/prices", s.apiPricesV0, nil, reflect.TypeFor[[]schemas.Observation]()},
		{"GET", "/api/runs", s.apiRunsV0, nil, reflect.TypeFor[[]schemas.Run]()},
		{"GET", "/openapi.json", s.serveOpenAPI, nil, nil},
	}
}

// digestAnswer is the weekly digest over the server's reader (`gpuprice digest
// --format json`), its links under serve.public_url.
func (s *Server) digestAnswer(ctx context.Context, q digest.Query) (query.Result[*digest.Digest], error) {
	return digest.Answer(ctx, s.reader, q, digest.Options{PublicURL: s.cfg.PublicURL})
}

// tableOf adapts a table function to the CSV writer.
func tableOf[T any](f func(T) ([]string, [][]string)) func(T) ([]string, [][]string) { return f }

// apiError is the body of every error answer.
type apiError struct {
	Error       string   `json:"error"`
	Parameter   string   `json:"parameter,omitempty"`
	Suggestions []string `json:"did_you_mean,omitempty"`
}

// writeJSON answers v as JSON, its URLs' credentials redacted
// (schemas.RedactText); Server.writeJSON redacts with the server's redactor.
func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONWith(w, status, v, schemas.RedactText)
}

func writeJSONWith(w http.ResponseWriter, status int, v any, redact func(string) string) {
	var body bytes.Buffer
	_ = json.NewEncoder(&body).Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, redact(body.String()))
}

// writeJSON answers v as JSON through the server's redactor (Deps.Redact).
func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONWith(w, status, v, s.redact)
}

// fail answers err: a parameter error is 400 naming the parameter, anything else a
// 503 whose detail stays in the log.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var pe *query.ParamError
	if errors.As(err, &pe) {
		writeJSON(w, http.StatusBadRequest, apiError{Error: pe.Error(), Parameter: pe.Param, Suggestions: pe.Suggestions})
		return
	}
	if errors.Is(err, context.Canceled) {
		return
	}
	if errors.Is(err, errBusy) {
		retryLater(w, err.Error()+"; retry after a second")
		return
	}
	s.log.Warn("api: query failed", "path", r.URL.Path, "error", err.Error())
	writeJSON(w, http.StatusServiceUnavailable, apiError{Error: "store: query failed (see the server's log)"})
}

// query parses the raw query string: malformed escapes and invalid UTF-8 are 400.
func queryValues(r *http.Request) (url.Values, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, &query.ParamError{Param: "query", Msg: "does not parse: " + err.Error()}
	}
	for name, vals := range v {
		if !utf8.ValidString(name) {
			return nil, &query.ParamError{Param: "query", Msg: "a parameter name is not valid UTF-8"}
		}
		for _, x := range vals {
			if !utf8.ValidString(x) {
				return nil, &query.ParamError{Param: name, Msg: "is not valid UTF-8"}
			}
		}
	}
	return v, nil
}

// serveReport answers one report: parameters parsed and validated as the CLI's
// flags, the report computed by the same code, JSON ({data, matched}) or, where a
// table is the natural shape, CSV (?format=csv). Answers computed from bars carry an
// ETag and may be cached for a minute.
func serveReport[Q any, T any](s *Server, parse func(url.Values, query.Caps) (Q, error),
	run func(context.Context, Q) (query.Result[T], error), table func(T) ([]string, [][]string),
	fromBars bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := queryValues(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		format := "json"
		if f := v["format"]; len(f) > 0 {
			format = f[0]
			allowed := []string{"json"}
			if table != nil {
				allowed = append(allowed, "csv")
			}
			if len(f) > 1 || !slices.Contains(allowed, format) {
				s.fail(w, r,
					&query.ParamError{Param: "format", Msg: fmt.Sprintf("%q: use %s", format, strings.Join(allowed, " or "))})
				return
			}
		}
		q, err := parse(v, query.APICaps)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		ttl := s.cfg.CacheTTL
		if fromBars {
			ttl = s.cfg.BarsCacheTTL
		}
		// Computed once for every client asking the same at the same time, and not
		// cut by one client hanging up.
		ans, err := s.cache.Get(r.URL.Path+"?"+v.Encode(), ttl, func() (answer.Answer, error) {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), time.Minute)
			defer cancel()
			var res query.Result[T]
			err := s.compute(ctx, func() (err error) {
				res, err = run(ctx, q)
				return err
			})
			if err != nil {
				return answer.Answer{}, err
			}
			var body bytes.Buffer
			a := answer.Answer{ContentType: "application/json"}
			if format == "csv" {
				a.ContentType = "text/csv; charset=utf-8"
				header, rows := table(res.Data)
				err = query.Write(&body, "csv", header, rows, nil)
			} else {
				if res.Matched == nil {
					res.Matched = []schemas.Match{}
				}
				err = json.NewEncoder(&body).Encode(res)
			}
			// Every answer passes the redaction of the logs (Deps.Redact): run errors,
			// quarantined rows, endpoints and source URLs never carry a secret out.
			a.Body = []byte(s.redact(body.String()))
			if fromBars {
				sum := sha256.Sum256(a.Body)
				a.ETag = `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
			}
			if err != nil || ttl <= 0 {
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
		if fromBars {
			answer.WriteTagged(w, r, ans, fmt.Sprintf("public, max-age=%d", int(max(s.cfg.BarsCacheTTL, time.Second).Seconds())))
			return
		}
		answer.WriteUntagged(w, r, ans)
	}
}

// authorized reports whether r carries the server's admin token (TokenEnv), and
// answers 403 (no token configured: what needs it is off) or 401 when it does not.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, what string) bool {
	if s.cfg.CollectToken == "" {
		writeJSON(w, http.StatusForbidden, apiError{Error: what + " over the API is off: start serve with " + TokenEnv +
			" set"})
		return false
	}
	got, ok := bearer(r)
	if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.CollectToken)) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="gpuprice"`)
		writeJSON(w, http.StatusUnauthorized, apiError{Error: "a valid bearer token is required (Authorization: Bearer $" +
			TokenEnv + ")"})
		return false
	}
	return true
}

// withToken serves h only to a request carrying the admin token (authorized):
// quarantined rows hold providers' raw records.
func (s *Server) withToken(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(w, r, r.URL.Path) {
			h(w, r)
		}
	}
}

// apiCollect runs sources now (POST /api/v1/collect?source=NAME, repeatable). It
// needs the bearer token of the server's configuration; without one configured
// the endpoint is off.
func (s *Server) apiCollect(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r, "collect") {
		return
	}
	v, err := queryValues(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var jobs []string
	for _, j := range s.cfg.Jobs {
		jobs = append(jobs, j.Source)
	}
	var sources []string
	for k, vs := range v {
		if k != "source" {
			s.fail(w, r, &query.ParamError{Param: k, Msg: "is not a parameter of this request (known: source)"})
			return
		}
		for _, name := range vs {
			m, err := schemas.ResolveName("source", name, jobs)
			if err != nil {
				var nm *schemas.NoMatchError
				errors.As(err, &nm)
				s.fail(w, r, &query.ParamError{Param: "source", Msg: fmt.Sprintf("%q: not an enabled source of this server", name),
					Suggestions: nm.Suggestions})
				return
			}
			sources = append(sources, m.Names[0])
		}
	}
	if len(sources) == 0 {
		s.fail(w, r, &query.ParamError{Param: "source", Msg: "is required: the source to run now (known: " +
			strings.Join(jobs, ", ") + ")"})
		return
	}
	// A collection may outlast the server's write timeout; the client waits.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.CollectTimeout + time.Minute))
	if s.sched.Stopping() {
		retryLater(w, "shutting down: no new collection")
		return
	}
	runs, busy := s.sched.RunNow(sources)
	if len(runs) == 0 && len(busy) > 0 {
		writeJSON(w, http.StatusConflict, apiError{Error: "already running: " + strings.Join(busy, ", ")})
		return
	}
	s.writeJSON(w, http.StatusOK, CollectAnswer{nonNilRuns(runs), append([]string{}, busy...)})
}

// CollectAnswer is the answer of POST /api/v1/collect: the runs made, and the
// sources skipped because they were running already.
type CollectAnswer struct {
	Data    []schemas.Run `json:"data"`
	Running []string      `json:"skipped_running"`
}

func nonNilRuns(r []schemas.Run) []schemas.Run {
	if r == nil {
		return []schemas.Run{}
	}
	return r
}

// apiPricesV0 is /api/prices, the first API: the rows alone, all_series=true.
func (s *Server) apiPricesV0(w http.ResponseWriter, r *http.Request) {
	v, err := queryValues(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if vs, ok := v["all_series"]; ok {
		v["all-series"] = vs
		delete(v, "all_series")
	}
	format := v.Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "csv" {
		s.fail(w, r, &query.ParamError{Param: "format", Msg: fmt.Sprintf("%q: use json or csv", format)})
		return
	}
	q, err := query.ParsePrices(v, query.APICaps)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.reader.Prices(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	var body bytes.Buffer
	_ = query.WriteObservations(&body, format, res.Data)
	_, _ = io.WriteString(w, s.redact(body.String()))
}

// apiRunsV0 is /api/runs, the first API: the runs alone, 50 by default.
func (s *Server) apiRunsV0(w http.ResponseWriter, r *http.Request) {
	v, err := queryValues(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if !v.Has("limit") {
		v.Set("limit", "50")
	}
	q, err := query.ParseRuns(v, query.APICaps)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.reader.Runs(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, res.Data)
}

// Routes lists the API's routes as (method, path): what /openapi.json documents.
func Routes() [][2]string {
	var out [][2]string
	for _, r := range (&Server{reader: &query.Reader{}}).apiRoutes() {
		out = append(out, [2]string{r.method, r.path})
	}
	return out
}

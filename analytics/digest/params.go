package digest

import (
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// params are the parameters of /api/v1/digest and the MCP tool digest: the flags
// of `gpuprice digest` (format: the API's json only).
var params = []string{"gpu", "pricing", "since", "at", "format"}

// ParseQuery reads a Query from the API's parameters: gpu and pricing repeated or
// separated by commas, since a span (default 7d), at a date or RFC 3339 time
// (default now).
func ParseQuery(v url.Values, _ query.Caps) (Query, error) {
	names := make([]string, 0, len(v))
	for k := range v {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.Contains(params, k) {
			return Query{}, &query.ParamError{Param: k, Suggestions: schemas.Near(strings.ToLower(k), params),
				Msg: "is not a parameter of the digest (known: " + strings.Join(params, ", ") + ")"}
		}
	}
	list := func(name string) []string {
		var out []string
		for _, s := range v[name] {
			for _, x := range strings.Split(s, ",") {
				if x = strings.TrimSpace(x); x != "" {
					out = append(out, x)
				}
			}
		}
		return out
	}
	q := Query{GPUs: list("gpu"), Pricing: list("pricing"), Since: DefaultSince}
	if len(q.GPUs) == 0 {
		return q, &query.ParamError{Param: "gpu", Msg: "is required: the GPUs the digest follows (gpu=H100-SXM-80GB,a100)"}
	}
	for _, p := range q.Pricing {
		if !schemas.ValidPricing(p) {
			return q, &query.ParamError{Param: "pricing", Msg: "\"" + p +
				"\" is not a pricing kind (on_demand, spot, reserved_1y…)"}
		}
	}
	if s := v.Get("since"); s != "" {
		d, err := query.ParseSpan(s)
		if err != nil || d <= 0 {
			return q, &query.ParamError{Param: "since", Msg: "\"" + s + "\": use a span: 7d, 2w, 36h"}
		}
		q.Since = d
	}
	at, err := query.ParseAt(v.Get("at"))
	if err != nil {
		return q, &query.ParamError{Param: "at", Msg: "\"" + v.Get("at") + "\": use a date (2026-11-02) or an RFC 3339 time"}
	}
	q.At = at
	if f := v.Get("format"); f != "" && f != "json" {
		return q, &query.ParamError{Param: "format", Msg: "\"" + f + "\": use json (the CLI writes markdown, html and slack)"}
	}
	return q, nil
}

// Values are the query's parameters (ParseQuery reads them back).
func (q Query) Values() url.Values {
	v := url.Values{"gpu": {strings.Join(q.GPUs, ",")}}
	if len(q.Pricing) > 0 {
		v.Set("pricing", strings.Join(q.Pricing, ","))
	}
	if q.Since > 0 {
		v.Set("since", query.FormatSpan(q.Since))
	}
	if !q.At.IsZero() {
		v.Set("at", q.At.UTC().Format(time.RFC3339))
	}
	return v
}

package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/store"
)

// tool is one tool: its definition (schemas included), the defaults of the
// arguments it leaves to the caller, and the computation it calls.
type tool struct {
	def      *sdk.Tool
	in, out  *jsonschema.Schema
	defaults url.Values
	call     func(ctx context.Context, v url.Values, caps query.Caps) (any, error)
}

// define builds a tool whose arguments are A's fields (the CLI's parameters),
// parsed by parse and computed by run, whose answer's data is shape of run's.
func define[A, Q, T, U any](name, title, desc string, defaults url.Values,
	parse func(url.Values, query.Caps) (Q, error), run func(context.Context, Q) (query.Result[T], error),
	shape func(T) U) tool {
	in, err := jsonschema.For[A](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: %s: input schema: %v", name, err))
	}
	for arg, p := range in.Properties {
		d, ok := descriptions[arg]
		if !ok {
			panic(fmt.Sprintf("mcp: %s: argument %s has no description", name, arg))
		}
		p.Description = d
		if def := defaults.Get(arg); def != "" {
			p.Description += " (default " + def + ")"
		}
	}
	out, err := outputSchema[U]()
	if err != nil {
		panic(fmt.Sprintf("mcp: %s: output schema: %v", name, err))
	}
	return tool{
		def: &sdk.Tool{Name: name, Title: title, Description: desc, InputSchema: in, OutputSchema: out,
			Annotations: &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true,
				DestructiveHint: new(false), OpenWorldHint: new(false)}},
		in: in, out: out, defaults: defaults,
		call: func(ctx context.Context, v url.Values, caps query.Caps) (any, error) {
			q, err := parse(v, caps)
			if err != nil {
				return nil, err
			}
			res, err := run(ctx, q)
			if err != nil {
				return nil, err
			}
			return query.Result[U]{Data: shape(res.Data), Matched: nonNil(res.Matched), Empty: res.Empty,
				Recorded: res.Recorded}, nil
		},
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// add registers the tool on s.
func (t tool) add(s *sdk.Server, opts Options) {
	out, err := t.out.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: %s: output schema: %v", t.def.Name, err))
	}
	s.AddTool(t.def, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var raw json.RawMessage
		if req.Params != nil {
			raw = req.Params.Arguments
		}
		v, err := t.values(raw)
		var res any
		if err == nil {
			err = opts.Compute(ctx, func() (err error) {
				res, err = t.call(ctx, v, opts.Caps)
				return err
			})
		}
		if err != nil {
			return failure(t.def.Name, err, opts), nil
		}
		b, err := json.Marshal(res)
		if err != nil {
			return failure(t.def.Name, err, opts), nil
		}
		// Every string of the answer is cleaned (no control, bidi or invisible
		// character, one line: a host's text cannot steer the agent's display), then
		// passes the logs' redaction, as the API's do. Cleaning goes first so that
		// an invisible character cannot hide a URL's credentials from the redactor.
		if b, err = textsafe.JSON(b); err != nil {
			return failure(t.def.Name, err, opts), nil
		}
		text := opts.Redact(string(b))
		var check any
		if err := json.Unmarshal([]byte(text), &check); err != nil {
			return failure(t.def.Name, err, opts), nil
		}
		if err := out.Validate(check); err != nil {
			return failure(t.def.Name, fmt.Errorf("the answer does not match the output schema: %w", err), opts), nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}},
			StructuredContent: json.RawMessage(text)}, nil
	})
}

// values reads a call's arguments (a JSON object, or nothing) as the API's query
// parameters: each a string, number or boolean of the input schema, the tool's
// defaults for the ones left out. An argument the tool does not take is a
// *query.ParamError naming it, with the nearest names it takes.
func (t tool) values(raw json.RawMessage) (url.Values, error) {
	v := url.Values{}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var args map[string]any
		if err := dec.Decode(&args); err != nil {
			return nil, &query.ParamError{Param: "arguments", Msg: "must be a JSON object of the tool's arguments"}
		}
		names := make([]string, 0, len(args))
		for k := range args {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if _, ok := t.in.Properties[k]; !ok {
				return nil, unknownArgument(k, t.in.Properties)
			}
			switch x := args[k].(type) {
			case nil: // as if left out
			case string:
				v.Set(k, x)
			case json.Number:
				v.Set(k, x.String())
			case bool:
				v.Set(k, fmt.Sprint(x))
			default:
				return nil, &query.ParamError{Param: k, Msg: "must be a " + typeOf(t.in.Properties[k])}
			}
		}
	}
	for k, d := range t.defaults {
		if !v.Has(k) {
			v[k] = d
		}
	}
	return v, nil
}

func typeOf(s *jsonschema.Schema) string {
	if s.Type != "" {
		return s.Type
	}
	return strings.Join(s.Types, " or ")
}

// unknownArgument is the error of an argument the tool does not take.
func unknownArgument(name string, props map[string]*jsonschema.Schema) error {
	known := make([]string, 0, len(props))
	for k := range props {
		known = append(known, k)
	}
	sort.Strings(known)
	return &query.ParamError{Param: name, Suggestions: schemas.Near(strings.ToLower(name), known),
		Msg: "is not an argument of this tool (known: " + strings.Join(known, ", ") + ")"}
}

// failure is a tool error: a wrong argument says which and what would be
// accepted; any other error is logged and named only as a failed query, as the
// API does (a store's address never goes out).
func failure(tool string, err error, opts Options) *sdk.CallToolResult {
	var pe *query.ParamError
	var msg string
	switch {
	case errors.As(err, &pe):
		msg = "invalid argument " + pe.Error()
		if len(pe.Suggestions) > 0 && !strings.Contains(pe.Msg, "did you mean") {
			msg += "; did you mean " + strings.Join(pe.Suggestions, ", ") + "?"
		}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		msg = err.Error()
	default:
		opts.Log.Warn("mcp: tool failed", "tool", tool, "error", opts.Redact(err.Error()))
		msg = "the query failed (the server's log says why)"
	}
	r := &sdk.CallToolResult{}
	r.SetError(errors.New(msg))
	return r
}

// customJSON are the schemas of the answer types whose JSON is not their fields
// (a MarshalJSON of their own), built once.
var customJSON = sync.OnceValues(func() (map[reflect.Type]*jsonschema.Schema, error) {
	figures := []string{"std_log_return", "annualised", "cv", "range", "max_drawdown"}
	nullable := func(t reflect.Type) (*jsonschema.Schema, error) {
		s, err := jsonschema.ForType(t, nil)
		if err != nil {
			return nil, err
		}
		for _, f := range figures { // null when a series has too few bars
			p := s.Properties[f]
			if p == nil {
				return nil, fmt.Errorf("%v has no property %s", t, f)
			}
			p.Type, p.Types = "", []string{"null", p.Type}
		}
		return s, nil
	}
	series, err := nullable(reflect.TypeFor[store.SeriesVolatility]())
	if err != nil {
		return nil, err
	}
	groups, err := nullable(reflect.TypeFor[analytics.GroupVolatility]())
	if err != nil {
		return nil, err
	}
	m := map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[store.SeriesVolatility]():    series,
		reflect.TypeFor[analytics.GroupVolatility](): groups,
	}
	opts := &jsonschema.ForOptions{TypeSchemas: m}
	tokens, err := jsonschema.For[[]query.TokenRow](opts)
	if err != nil {
		return nil, err
	}
	inference, err := jsonschema.For[[]query.InferenceRow](opts)
	if err != nil {
		return nil, err
	}
	m[reflect.TypeFor[query.Tokens]()] = tokens
	m[reflect.TypeFor[query.Inference]()] = inference
	m[reflect.TypeFor[query.Volatility]()] = &jsonschema.Schema{
		Description: "by=series: one entry per series; by=offering or zone: one per group",
		AnyOf: []*jsonschema.Schema{{Type: "array", Items: series.CloneSchemas()},
			{Type: "array", Items: groups.CloneSchemas()}}}
	return m, nil
})

// outputSchema is the schema of a tool's answer whose data is a U.
func outputSchema[U any]() (*jsonschema.Schema, error) {
	custom, err := customJSON()
	if err != nil {
		return nil, err
	}
	s, err := jsonschema.For[query.Result[U]](&jsonschema.ForOptions{TypeSchemas: custom})
	if err != nil {
		return nil, err
	}
	for name, d := range map[string]string{
		"data":    "the answer: what the CLI command prints with --format json",
		"matched": "what each name given resolved to (kind, input, canonical names, how)",
		"empty":   "when nothing matched: which filter emptied the answer and what was there before it",
		"recorded": "present when the answer read rows of a recorded example: per provider, how many series; " +
			"such an answer is not of today's prices",
	} {
		if p := s.Properties[name]; p != nil {
			p.Description = d
		} else if !slices.Contains([]string{"empty", "recorded"}, name) {
			return nil, fmt.Errorf("the answer has no property %s", name)
		}
	}
	return s, nil
}

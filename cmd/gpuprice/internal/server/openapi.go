package server

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// openAPIPaths is the hand-kept part of the OpenAPI 3 document (openapi.json):
// every path with its parameters and answers. The schemas of the answers are
// generated from the Go types the handlers encode (OpenAPI), so they cannot drift
// from what the server sends; tests check that the document lists exactly the
// routes and the parameters the server accepts, and that real answers validate.
//
//go:embed openapi.json
var openAPIPaths []byte

var openAPI struct {
	once sync.Once
	doc  []byte
	err  error
}

// OpenAPI returns the OpenAPI document served at /openapi.json (built once).
func OpenAPI() ([]byte, error) {
	openAPI.once.Do(func() { openAPI.doc, openAPI.err = buildOpenAPI((&Server{reader: &query.Reader{}}).apiRoutes()) })
	return openAPI.doc, openAPI.err
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	doc, err := OpenAPI()
	if err != nil {
		s.log.Error("openapi: document not built", "error", err.Error())
		writeJSON(w, http.StatusInternalServerError,
			apiError{Error: "the OpenAPI document could not be built (see the server's log)"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(doc)
}

// customJSON are the answer types whose JSON is not their fields (MarshalJSON):
// the schema of what they write.
func customJSON(t reflect.Type) (func(g *schemaGen) (*openapi3.SchemaRef, error), bool) {
	switch t {
	case reflect.TypeFor[query.Volatility](): // the series, or the groups when grouped (by)
		return volatilitySchema, true
	case reflect.TypeFor[query.Tokens](): // the rows
		return func(g *schemaGen) (*openapi3.SchemaRef, error) { return g.ref(reflect.TypeFor[[]query.TokenRow]()) }, true
	case reflect.TypeFor[query.Inference](): // the rows
		return func(g *schemaGen) (*openapi3.SchemaRef, error) { return g.ref(reflect.TypeFor[[]query.InferenceRow]()) }, true
	}
	return nil, false
}

func volatilitySchema(g *schemaGen) (*openapi3.SchemaRef, error) {
	series, err := g.ref(reflect.TypeFor[[]store.SeriesVolatility]())
	if err != nil {
		return nil, err
	}
	groups, err := g.ref(reflect.TypeFor[[]analytics.GroupVolatility]())
	if err != nil {
		return nil, err
	}
	return &openapi3.SchemaRef{Value: &openapi3.Schema{OneOf: openapi3.SchemaRefs{series, groups},
		Description: "by=series: one entry per series; by=offering or zone: one per group."}}, nil
}

// nullFigures are the fields a type's MarshalJSON writes as null when they do not
// exist (too few bars).
var nullFigures = map[reflect.Type][]string{
	reflect.TypeFor[store.SeriesVolatility]():    {"std_log_return", "annualised", "cv", "range", "max_drawdown"},
	reflect.TypeFor[analytics.GroupVolatility](): {"std_log_return", "annualised", "cv", "range", "max_drawdown"},
}

// schemaGen generates component schemas from Go types (openapi3gen), made strict:
// every field encoding/json always writes is required, no other property is
// allowed, and a pointer is nullable.
type schemaGen struct {
	gen     *openapi3gen.Generator
	schemas openapi3.Schemas
	types   map[string]reflect.Type
	err     error
}

func newSchemaGen() *schemaGen {
	g := &schemaGen{schemas: openapi3.Schemas{}, types: map[string]reflect.Type{}}
	g.gen = openapi3gen.NewGenerator(
		openapi3gen.UseAllExportedFields(),
		openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true,
			ExportTopLevelSchema: true}),
		openapi3gen.CreateTypeNameGenerator(func(t reflect.Type) string {
			if prev, ok := g.types[t.Name()]; ok && prev != t && g.err == nil {
				g.err = fmt.Errorf("openapi: two answer types named %s: %s and %s", t.Name(), prev.PkgPath(), t.PkgPath())
			}
			g.types[t.Name()] = t
			return t.Name()
		}),
		openapi3gen.SchemaCustomizer(func(_ string, t reflect.Type, _ reflect.StructTag, s *openapi3.Schema) error {
			if t.Kind() == reflect.Interface { // any value, null included
				s.Nullable = true
			}
			return nil
		}),
	)
	return g
}

// ref returns the schema of t, its structs as components.
func (g *schemaGen) ref(t reflect.Type) (*openapi3.SchemaRef, error) {
	if custom, ok := customJSON(t); ok {
		return custom(g)
	}
	r, err := g.gen.NewSchemaRefForValue(reflect.Zero(t).Interface(), g.schemas)
	if err == nil {
		err = g.err
	}
	return r, err
}

// finish makes every component strict (see schemaGen).
func (g *schemaGen) finish() {
	never := false
	for name, sr := range g.schemas {
		t, s := g.types[name], sr.Value
		if t == nil || t.Kind() != reflect.Struct || s == nil {
			continue
		}
		s.Required = nil
		for _, f := range jsonFields(t) {
			p := s.Properties[f.name]
			if p == nil {
				continue
			}
			if !f.optional {
				s.Required = append(s.Required, f.name)
			}
			if f.typ.Kind() == reflect.Pointer && p.Ref != "" { // null, or the component
				s.Properties[f.name] = &openapi3.SchemaRef{Value: &openapi3.Schema{Nullable: true,
					AllOf: openapi3.SchemaRefs{{Ref: p.Ref}}}}
			}
		}
		for _, f := range nullFigures[t] {
			if p := s.Properties[f]; p != nil && p.Value != nil {
				p.Value.Nullable = true
			}
		}
		slices.Sort(s.Required)
		s.AdditionalProperties = openapi3.AdditionalProperties{Has: &never}
	}
}

// jsonField is a field as encoding/json writes it.
type jsonField struct {
	name     string
	typ      reflect.Type
	optional bool // omitempty, omitzero, or inside an embedded pointer
}

// jsonFields lists the fields encoding/json writes for struct t (embedded structs
// flattened).
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		optional := slices.ContainsFunc(strings.Split(opts, ","),
			func(o string) bool { return o == "omitempty" || o == "omitzero" })
		if f.Anonymous && name == "" {
			ft := f.Type
			ptr := ft.Kind() == reflect.Pointer
			if ptr {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for _, sub := range jsonFields(ft) {
					sub.optional = sub.optional || ptr
					out = append(out, sub)
				}
				continue
			}
		}
		if !f.IsExported() || f.Type.Kind() == reflect.Func || f.Type.Kind() == reflect.Chan {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: f.Type, optional: optional})
	}
	return out
}

// buildOpenAPI completes the hand-kept document: the schema of every route's
// answer, generated from its Go type, as a component named after the operation
// (PricesResponse, …) that the route's 200 answer refers to.
func buildOpenAPI(routes []route) ([]byte, error) {
	var doc openapi3.T
	if err := json.Unmarshal(openAPIPaths, &doc); err != nil {
		return nil, fmt.Errorf("openapi: openapi.json: %w", err)
	}
	if doc.Components == nil {
		doc.Components = &openapi3.Components{}
	}
	if doc.Components.Schemas == nil {
		doc.Components.Schemas = openapi3.Schemas{}
	}
	g := newSchemaGen()
	matched, err := g.ref(reflect.TypeFor[[]schemas.Match]())
	if err != nil {
		return nil, err
	}
	recorded, err := g.ref(reflect.TypeFor[map[string]int]())
	if err != nil {
		return nil, err
	}
	recorded.Value.Description = "present when the answer read rows of a recorded example: per provider, how many " +
		"series (by row, whatever ran since); such an answer is not of today's prices"
	answers := openapi3.Schemas{}
	for _, rt := range routes {
		if rt.data == nil && rt.body == nil {
			continue
		}
		op := doc.Paths.Find(rt.path).GetOperation(rt.method)
		if op == nil {
			return nil, fmt.Errorf("openapi: openapi.json has no %s %s", rt.method, rt.path)
		}
		ok := op.Responses.Status(http.StatusOK)
		if ok == nil || ok.Value == nil || ok.Value.Content.Get("application/json") == nil {
			return nil, fmt.Errorf("openapi: %s %s: no JSON 200 answer in openapi.json", rt.method, rt.path)
		}
		var answer *openapi3.SchemaRef
		if rt.body != nil {
			if answer, err = g.ref(rt.body); err != nil {
				return nil, err
			}
		} else {
			data, err := g.ref(rt.data)
			if err != nil {
				return nil, err
			}
			never := false
			answer = &openapi3.SchemaRef{Value: &openapi3.Schema{
				Type: &openapi3.Types{openapi3.TypeObject},
				Description: "data: what the CLI prints with --format json; matched: what each name given resolved to; " +
					"recorded: the answer's rows of a recorded example, when it has any.",
				Required:             []string{"data", "matched"},
				Properties:           openapi3.Schemas{"data": data, "matched": matched, "recorded": recorded},
				AdditionalProperties: openapi3.AdditionalProperties{Has: &never},
			}}
		}
		name := upperFirst(op.OperationID) + "Response"
		answers[name] = answer
		ok.Value.Content.Get("application/json").Schema = &openapi3.SchemaRef{Ref: "#/components/schemas/" + name}
	}
	g.finish()
	for name, s := range g.schemas {
		if _, taken := doc.Components.Schemas[name]; taken {
			return nil, fmt.Errorf("openapi: schema %s is both kept by hand and generated", name)
		}
		doc.Components.Schemas[name] = s
	}
	for name, s := range answers {
		doc.Components.Schemas[name] = s
	}
	return json.MarshalIndent(&doc, "", "  ")
}

func upperFirst(s string) string {
	r := []rune(s)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return string(r)
}

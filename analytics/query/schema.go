package query

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/store"
)

// customJSON are the answer types whose JSON is not their fields (MarshalJSON):
// the schema of what they write.
func customJSON(t reflect.Type) (func(g *SchemaGen) (*openapi3.SchemaRef, error), bool) {
	switch t {
	case reflect.TypeFor[Volatility](): // the series, or the groups when grouped (by)
		return volatilitySchema, true
	case reflect.TypeFor[Tokens](): // the rows
		return func(g *SchemaGen) (*openapi3.SchemaRef, error) { return g.Ref(reflect.TypeFor[[]TokenRow]()) }, true
	case reflect.TypeFor[Inference](): // the rows
		return func(g *SchemaGen) (*openapi3.SchemaRef, error) { return g.Ref(reflect.TypeFor[[]InferenceRow]()) }, true
	}
	return nil, false
}

func volatilitySchema(g *SchemaGen) (*openapi3.SchemaRef, error) {
	series, err := g.Ref(reflect.TypeFor[[]store.SeriesVolatility]())
	if err != nil {
		return nil, err
	}
	groups, err := g.Ref(reflect.TypeFor[[]analytics.GroupVolatility]())
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

// SchemaGen generates the schemas of the read model's answers from their Go types
// (openapi3gen), made strict: every field encoding/json always writes is required,
// no other property is allowed, and a pointer is nullable; the answers whose JSON is
// not their fields (MarshalJSON) get the schema of what they write. serve's OpenAPI
// document is built with it, so its schemas cannot drift from what is sent.
type SchemaGen struct {
	gen     *openapi3gen.Generator
	schemas openapi3.Schemas
	types   map[string]reflect.Type
	err     error
}

// NewSchemaGen returns a generator with no component yet.
func NewSchemaGen() *SchemaGen {
	g := &SchemaGen{schemas: openapi3.Schemas{}, types: map[string]reflect.Type{}}
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

// Ref returns the schema of t, its structs as components.
func (g *SchemaGen) Ref(t reflect.Type) (*openapi3.SchemaRef, error) {
	if custom, ok := customJSON(t); ok {
		return custom(g)
	}
	r, err := g.gen.NewSchemaRefForValue(reflect.Zero(t).Interface(), g.schemas)
	if err == nil {
		err = g.err
	}
	return r, err
}

// Finish makes every component strict (see SchemaGen) and returns the components.
func (g *SchemaGen) Finish() openapi3.Schemas {
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
	return g.schemas
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

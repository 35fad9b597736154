package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
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
	g := query.NewSchemaGen()
	matched, err := g.Ref(reflect.TypeFor[[]schemas.Match]())
	if err != nil {
		return nil, err
	}
	recorded, err := g.Ref(reflect.TypeFor[map[string]int]())
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
			if answer, err = g.Ref(rt.body); err != nil {
				return nil, err
			}
		} else {
			data, err := g.Ref(rt.data)
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
	for name, s := range g.Finish() {
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

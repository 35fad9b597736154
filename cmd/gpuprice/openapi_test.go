package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// openAPIDoc reads serve's /openapi.json and checks it is a valid OpenAPI 3
// document (kin-openapi: every $ref resolves, every schema is well formed).
func openAPIDoc(t *testing.T, base string) *openapi3.T {
	t.Helper()
	code, body := get(t, base+"/openapi.json")
	if code != 200 {
		t.Fatalf("/openapi.json: %d %.300s", code, body)
	}
	doc, err := openapi3.NewLoader().LoadFromData([]byte(body))
	if err != nil {
		t.Fatalf("/openapi.json does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("/openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

// checkAnswer validates a real answer of method path (with its query) against the
// schema /openapi.json gives its status and content type.
func checkAnswer(t *testing.T, doc *openapi3.T, method, path string, status int, body string) {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := answerError(doc, method, u.Path, status, body); err != nil {
		t.Errorf("%s %s: the %d answer does not match /openapi.json: %v\n%.600s", method, path, status, err, body)
	}
}

func answerError(doc *openapi3.T, method, path string, status int, body string) error {
	item := doc.Paths.Find(path)
	if item == nil || item.GetOperation(method) == nil {
		return errString("not documented")
	}
	resp := item.GetOperation(method).Responses.Status(status)
	if resp == nil || resp.Value == nil || resp.Value.Content.Get("application/json") == nil {
		return errString("no JSON answer documented for this status")
	}
	schema := resp.Value.Content.Get("application/json").Schema
	if schema == nil || schema.Value == nil {
		return errString("no schema")
	}
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return err
	}
	return schema.Value.VisitJSON(v, openapi3.MultiErrors())
}

type errString string

func (e errString) Error() string { return string(e) }

// TestOpenAPISchemasCatchWrongAnswers: the generated schemas are strict enough
// to refuse what a client could not rely on (a missing field, a wrong type, an
// undocumented field, a 0 that should be null's type mismatch), so that the
// answer checks of the API tests can fail.
func TestOpenAPISchemasCatchWrongAnswers(t *testing.T) {
	srv := replay(t)
	cfg := apiConfig(t, srv.URL)
	base, stop := startServe(t, "--config", cfg, "--store", "duckdb://"+t.TempDir()+"/empty.duckdb")
	defer stop()
	doc := openAPIDoc(t, base)
	series := `{"provider":"p","sku":"s","region":"r","zone":"","pricing":"spot","gpu":"g","tier":"t","bars":1,"returns":0,` +
		`"changes":0,"share_below":null,"min":1,"max":1,"mean":1,"close":1,"std_log_return":null,"annualised":null,"cv":null,"range":0,"max_drawdown":null}`
	good := `{"data":[` + series + `],"matched":[]}`
	if err := answerError(doc, "GET", "/api/v1/volatility", 200, good); err != nil {
		t.Fatalf("a well-formed volatility answer is refused: %v", err)
	}
	for name, bad := range map[string]string{
		"no matched":       `{"data":[` + series + `]}`,
		"a missing field":  `{"data":[` + strings.Replace(series, `"bars":1,`, ``, 1) + `],"matched":[]}`,
		"a string count":   `{"data":[` + strings.Replace(series, `"bars":1`, `"bars":"1"`, 1) + `],"matched":[]}`,
		"an unknown field": `{"data":[` + strings.Replace(series, `"bars":1`, `"bars":1,"colour":"red"`, 1) + `],"matched":[]}`,
		"a null close":     `{"data":[` + strings.Replace(series, `"close":1`, `"close":null`, 1) + `],"matched":[]}`,
		"a null list":      `{"data":null,"matched":[]}`,
	} {
		if err := answerError(doc, "GET", "/api/v1/volatility", 200, bad); err == nil {
			t.Errorf("%s: accepted by /openapi.json's schema", name)
		}
	}
	// Every route's 200 answer has a schema of its own, with its fields.
	for _, r := range apiRoutesDoc(doc) {
		if r == "/openapi.json" {
			continue
		}
		for _, op := range doc.Paths.Find(r).Operations() {
			mt := op.Responses.Status(200).Value.Content.Get("application/json")
			if mt == nil { // a page (report: HTML or Markdown)
				continue
			}
			s := mt.Schema
			if s.Ref == "" || s.Value == nil || (len(s.Value.Properties) == 0 && s.Value.Items == nil) {
				t.Errorf("%s: 200 answer schema %q is generic", r, s.Ref)
			}
		}
	}
}

func apiRoutesDoc(doc *openapi3.T) []string {
	var out []string
	for p := range doc.Paths.Map() {
		out = append(out, p)
	}
	return out
}

// checkSecurity: every operation /openapi.json says needs the bearer token refuses a
// request without it (401), and no other operation does: the document's security is
// the server's. Each request carries an unknown parameter, so that an open
// operation answers 400 at once rather than computing its answer.
func checkSecurity(t *testing.T, doc *openapi3.T, base string) {
	t.Helper()
	secured := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			needs := op.Security != nil && len(*op.Security) > 0
			req, err := http.NewRequest(method, base+path+"?security_probe=1", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if refused := resp.StatusCode == http.StatusUnauthorized; refused != needs {
				t.Errorf("%s %s without a token: %d, but /openapi.json says it needs one: %v", method, path, resp.StatusCode, needs)
			}
			if needs {
				secured++
			}
		}
	}
	if secured < 2 {
		t.Errorf("%d operations need the token: want collect and quarantine at least", secured)
	}
}

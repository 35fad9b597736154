package server

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3 document of the API (openapi.json, kept by hand; a
// test checks that it lists exactly the routes the server has).
//
//go:embed openapi.json
var openAPIDoc []byte

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openAPIDoc)
}

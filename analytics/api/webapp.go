package api

import (
	"io/fs"
	"net/http"

	"github.com/gpuprice/gpuprice/analytics/api/web"
)

// webHandler serves the web application of fsys (see package web: the page shell at
// each view path, the bundle under /assets/). A bundle that cannot be read answers
// 500 with the reason rather than a blank page.
func webHandler(fsys fs.FS) http.Handler {
	h, err := web.Handler(fsys)
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		})
	}
	return h
}

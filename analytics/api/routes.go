package api

import (
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpuprice/gpuprice/analytics/mcp"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.st.Runs(r.Context(), "", 1); err != nil {
			http.Error(w, "store: unavailable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	// Ready to serve from the store: it answers and is migrated (a store away when
	// serve started is migrated here, or by the next run, once it answers).
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.ready != nil {
			if err := s.ready(r.Context()); err != nil {
				http.Error(w, "store: not ready: unavailable or not migrated yet", http.StatusServiceUnavailable)
				return
			}
		}
		if _, err := s.st.Runs(r.Context(), "", 1); err != nil {
			http.Error(w, "store: unavailable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	for _, rt := range s.apiRoutes() {
		mux.HandleFunc(rt.method+" "+rt.path, rt.handler)
	}
	// The MCP tools (streamable HTTP): the API's reader, its computation slots and
	// redaction; the Host header is checked by Serve (allowed_hosts).
	tools := mcp.Handler(s.reader, mcp.Options{Redact: s.redact, Log: s.log, Compute: s.compute, HostsChecked: true,
		PublicURL: s.cfg.PublicURL})
	for _, m := range []string{"POST", "GET", "DELETE"} {
		mux.Handle(m+" /mcp", tools)
	}
	notFound := func(w http.ResponseWriter, r *http.Request) {
		for _, rt := range s.apiRoutes() {
			if rt.path == r.URL.Path {
				w.Header().Set("Allow", rt.method)
				writeJSON(w, http.StatusMethodNotAllowed, apiError{Error: r.Method + " " + r.URL.Path + ": use " + rt.method})
				return
			}
		}
		writeJSON(w, http.StatusNotFound, apiError{Error: "no such endpoint: " + r.URL.Path + " (see /openapi.json)"})
	}
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		mux.HandleFunc(m+" /api/", notFound)
	}
	mux.HandleFunc("GET /page", s.page)
	mux.Handle("GET /page/", http.StripPrefix("/page/", http.FileServerFS(pageAssets)))
	if s.cfg.Web != nil {
		mux.Handle("GET /", webHandler(s.cfg.Web))
	} else {
		mux.HandleFunc("GET /{$}", s.page)
	}
	return mux
}

package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/report"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
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
	mux.HandleFunc("GET /api/prices", s.apiPrices)
	mux.HandleFunc("GET /api/runs", s.apiRuns)
	mux.HandleFunc("GET /page", s.page)
	mux.Handle("GET /page/", http.StripPrefix("/page/", http.FileServerFS(pageAssets)))
	if s.cfg.Web != nil {
		mux.Handle("GET /", webHandler(s.cfg.Web))
	} else {
		mux.HandleFunc("GET /{$}", s.page)
	}
	return mux
}

func (s *Server) apiPrices(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.Filter{GPU: q.Get("gpu"), Provider: q.Get("provider"), Pricing: q.Get("pricing"), Region: q.Get("region"), Tier: q.Get("tier")}
	if f.Pricing != "" && !schemas.ValidPricing(f.Pricing) {
		http.Error(w, fmt.Sprintf("pricing %q: not a pricing kind (on_demand, spot, reserved_1y, reserved_3y, commitment_<n>m)", f.Pricing), http.StatusBadRequest)
		return
	}
	if f.Tier != "" && !schemas.ValidTier(f.Tier) {
		http.Error(w, fmt.Sprintf("tier %q: not hyperscaler, specialist or marketplace", f.Tier), http.StatusBadRequest)
		return
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		var err error
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
			http.Error(w, "limit: not a non-negative integer", http.StatusBadRequest)
			return
		}
	}
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "csv" {
		http.Error(w, "format: json or csv", http.StatusBadRequest)
		return
	}
	rows, err := s.st.Latest(r.Context(), f)
	if err != nil {
		s.log.Warn("api: latest failed", "error", err.Error())
		http.Error(w, "store: query failed", http.StatusServiceUnavailable)
		return
	}
	if q.Get("all_series") != "true" {
		rows = analytics.CurrentOnly(rows, s.cfg.Stale)
	}
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = report.WriteObservations(w, format, rows)
}

func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, "limit: not a non-negative integer", http.StatusBadRequest)
			return
		}
		limit = n
	}
	runs, err := s.st.Runs(r.Context(), r.URL.Query().Get("source"), limit)
	if err != nil {
		http.Error(w, "store: query failed", http.StatusServiceUnavailable)
		return
	}
	if runs == nil {
		runs = []schemas.Run{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(runs)
}

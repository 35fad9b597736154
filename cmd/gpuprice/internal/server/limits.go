package server

import (
	"net"
	"net/http"
	"strings"

	"golang.org/x/net/netutil"
)

// Limits of the service under load: past them it sheds load at once (503 with
// Retry-After) rather than queueing requests for minutes, and it never holds more
// connections than it has file descriptors for, so /healthz keeps answering.
const (
	// MaxOpenConns caps the connections open at once (netutil.LimitListener); idle
	// keep-alive connections are closed after the server's IdleTimeout.
	MaxOpenConns = 1024
	// MaxInFlight caps the requests computed at once (health, readiness and
	// metrics excepted); a request past it is answered 503 with Retry-After.
	MaxInFlight = 256
)

// limitListener caps the connections ln holds open at once.
func limitListener(ln net.Listener) net.Listener { return netutil.LimitListener(ln, MaxOpenConns) }

// shed answers 503 with Retry-After to a request arriving while max others are
// being computed, instead of queueing it. Probes and metrics are never shed.
func shed(h http.Handler, max int) http.Handler {
	slots := make(chan struct{}, max)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/healthz" || p == "/readyz" || p == "/metrics" || strings.HasPrefix(p, "/page/"):
			h.ServeHTTP(w, r)
			return
		}
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		default:
			w.Header().Set("Retry-After", "1")
			writeJSON(w, http.StatusServiceUnavailable, apiError{Error: "busy: too many requests at once; retry after a second"})
		}
	})
}

package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

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
	// MaxComputing caps the answers computed from the store at once (every client
	// asking the same shares one computation, and computed answers are kept): a
	// computation waits at most ComputeWait for a slot, then the request is answered
	// 503 with Retry-After. It stays below the store's connection pool
	// (clickhouse.PoolSize), so no query waits for a connection.
	MaxComputing = 16
)

// ComputeWait is how long a request waits for a computation slot before 503.
var ComputeWait = 5 * time.Second

// errBusy is a request that found every computation slot taken for ComputeWait.
var errBusy = errors.New("busy: the server is computing as many answers as it may at once")

// compute runs f in one of MaxComputing slots, or returns errBusy after ComputeWait.
func (s *Server) compute(ctx context.Context, f func() error) error {
	t := time.NewTimer(ComputeWait)
	defer t.Stop()
	select {
	case s.busy <- struct{}{}:
		defer func() { <-s.busy }()
		return f()
	case <-t.C:
		return errBusy
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryLater answers 503 with Retry-After.
func retryLater(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", "1")
	writeJSON(w, http.StatusServiceUnavailable, apiError{Error: msg})
}

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
			retryLater(w, "busy: too many requests at once; retry after a second")
		}
	})
}

package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// limitListener caps the connections ln holds open at once, and those of each
// client address (l.MaxConnsPerClient).
func limitListener(ln net.Listener, l HTTPLimits) net.Listener {
	return netutil.LimitListener(limitPerClient(ln, l.MaxConnsPerClient), MaxOpenConns)
}

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

// DefaultMaxConnsPerClient is how many connections one client address may hold
// open at once when HTTPLimits.MaxConnsPerClient is 0: a client opening more (a
// slow-header flood) has the extra ones closed at accept, so it cannot take the
// MaxOpenConns slots every other client (and /healthz) needs.
const DefaultMaxConnsPerClient = 64

// perClientListener closes a connection accepted from an address that already
// holds max open ones.
type perClientListener struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int
}

// limitPerClient caps the connections each client address holds open on ln; max < 0
// leaves ln as it is (behind a proxy every client has the proxy's address).
func limitPerClient(ln net.Listener, max int) net.Listener {
	if max == 0 {
		max = DefaultMaxConnsPerClient
	}
	if max < 0 {
		return ln
	}
	return &perClientListener{Listener: ln, max: max, open: map[string]int{}}
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host, _, err := net.SplitHostPort(c.RemoteAddr().String())
		if err != nil {
			host = c.RemoteAddr().String()
		}
		l.mu.Lock()
		full := l.open[host] >= l.max
		if !full {
			l.open[host]++
		}
		l.mu.Unlock()
		if full {
			c.Close()
			continue
		}
		return &clientConn{Conn: c, release: func() { l.release(host) }}, nil
	}
}

func (l *perClientListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[host]--; l.open[host] <= 0 {
		delete(l.open, host)
	}
}

// clientConn gives its client's slot back once, when closed.
type clientConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// loopbackHosts are the Host names a server listening on loopback answers by
// default: a browser page of another name that resolves to 127.0.0.1 (DNS
// rebinding) is refused.
var loopbackHosts = []string{"localhost", "127.0.0.1", "[::1]"}

// hostAllowlist returns the Host values h answers: allowed as configured ("*": any,
// checking off), or when none is configured and ln listens on loopback, localhost,
// 127.0.0.1 and [::1] with the listening port (or none, a browser's form for port
// 80); nil means any.
func hostAllowlist(allowed []string, addr net.Addr) map[string]bool {
	if slices.Contains(allowed, "*") {
		return nil
	}
	port := ""
	if ta, ok := addr.(*net.TCPAddr); ok {
		port = strconv.Itoa(ta.Port)
		if len(allowed) == 0 && ta.IP.IsLoopback() {
			allowed = loopbackHosts
		}
	}
	if len(allowed) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, h := range allowed {
		h = strings.ToLower(h)
		out[h] = true
		if _, _, err := net.SplitHostPort(h); err != nil && port != "" {
			out[net.JoinHostPort(strings.Trim(h, "[]"), port)] = true
		}
	}
	return out
}

// checkHost answers 421 to a request whose Host is not in allowed (nil: any).
func checkHost(h http.Handler, allowed map[string]bool) http.Handler {
	if allowed == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[strings.ToLower(r.Host)] {
			writeJSON(w, http.StatusMisdirectedRequest, apiError{Error: "Host " + strconv.Quote(r.Host) +
				" is not one this server answers (serve.allowed_hosts)"})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearer returns the token of an Authorization header of the Bearer scheme (the
// scheme's name is case-insensitive, RFC 9110 §11.1).
func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

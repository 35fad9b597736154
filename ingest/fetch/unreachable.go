package fetch

import "strings"

// networkReasons maps a fragment of a failed request's error to what it means; the
// first that matches names the reason.
var networkReasons = []struct{ fragment, reason string }{
	{"proxyconnect", "the proxy refused or could not be reached"},
	{"no such host", "host names do not resolve (no DNS)"},
	{"server misbehaving", "host names do not resolve (no DNS)"},
	{"network is unreachable", "there is no route to the network"},
	{"no route to host", "there is no route to the network"},
	{"connection refused", "connections are refused"},
	{"connection reset", "connections are reset"},
	{"i/o timeout", "connections time out"},
	{"Client.Timeout exceeded", "connections time out"},
	{"TLS handshake", "TLS fails (an intercepting proxy needs its CA in SSL_CERT_FILE)"},
	{"x509:", "TLS fails (an intercepting proxy needs its CA in SSL_CERT_FILE)"},
}

// UnreachableReason is why a request's error says it could not reach its host, "" when
// it failed for another reason.
func UnreachableReason(errText string) string {
	for _, r := range networkReasons {
		if strings.Contains(errText, r.fragment) {
			return r.reason
		}
	}
	return ""
}

package scrapers

import (
	"fmt"
	"net"
	"net/url"
)

// SecretEndpoint checks an endpoint option of source to which credentials travel
// (a key, a signature, a client secret or a token): an absolute URL without user
// info, query or fragment, over https unless its host is the loopback (a test
// server). "" (the default endpoint) is accepted.
func SecretEndpoint(source, name, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s: options: %s %q is not an absolute URL without user info or query", source, name, v)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if h := u.Hostname(); h == "localhost" || net.ParseIP(h).IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("%s: options: %s %q must be https (credentials travel to it)", source, name, v)
}

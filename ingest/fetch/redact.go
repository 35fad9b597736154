package fetch

import (
	"errors"
	"github.com/gpuprice/gpuprice/schemas"
	"net/http"
	"net/url"
	"strings"
)

// Redacted replaces a secret wherever gpuprice prints or stores a URL or header.
const Redacted = schemas.Redacted

func sensitiveParam(name string) bool { return schemas.SensitiveParam(name) }

func sensitiveHeader(name string) bool { return schemas.SensitiveHeader(name) }

// RedactURL returns raw with the password of its user info and the values of
// credential-like query parameters (api_key, key, token, X-Amz-Signature, …) replaced
// by REDACTED: schemas.RedactURL, the one URL redaction of the project.
func RedactURL(raw string) string { return schemas.RedactURL(raw) }

// RedactHeader returns a copy of h without credential headers (Authorization, Cookie,
// Set-Cookie, X-Api-Key, X-Goog-Api-Key, X-Amz-Security-Token, …): their values are
// replaced by REDACTED, so that what was sent stays visible but not its secret.
func RedactHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		if sensitiveHeader(k) {
			out[k] = []string{Redacted}
			continue
		}
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// scrubURL returns err with the request URL raw replaced by shown (its redacted form):
// a *url.Error is edited in place so its chain (timeouts, net errors) is kept; any other
// error quoting raw is replaced by one with the same text, redacted.
func scrubURL(err error, raw, shown string) error {
	if raw == shown {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = shown
	}
	if !strings.Contains(err.Error(), raw) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), raw, shown))
}

package fetch

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Redacted replaces a secret wherever gpuprice prints or stores a URL or header.
const Redacted = "REDACTED"

// sensitiveParams are query parameters whose value is a credential (compared in
// lower case with '-' and '_' removed). Pagination tokens (pageToken) are not secrets
// and are kept, so that archived URLs still tell pages apart.
var sensitiveParams = map[string]bool{
	"key": true, "apikey": true, "accesstoken": true, "token": true, "authtoken": true, "auth": true,
	"password": true, "passwd": true, "pwd": true, "secret": true, "clientsecret": true, "signature": true,
	"sig": true, "xamzsignature": true, "xamzcredential": true, "xamzsecuritytoken": true, "sessiontoken": true,
}

func sensitiveParam(name string) bool {
	n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))
	return sensitiveParams[n]
}

// sensitiveHeaderWords mark a header whose value is a credential.
var sensitiveHeaderWords = []string{"authorization", "cookie", "api-key", "apikey", "token", "secret", "password", "credential"}

func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range sensitiveHeaderWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactURL returns raw with the password of its user info and the values of
// credential-like query parameters (api_key, key, token, X-Amz-Signature, …) replaced
// by REDACTED. Everything else, the order of parameters included, is kept, so a URL
// without secrets comes back unchanged. An unparseable URL is returned as a
// placeholder rather than verbatim.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparseable URL>"
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Redacted)
			changed = true
		}
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			name, _, hasValue := strings.Cut(p, "=")
			if dec, err := url.QueryUnescape(name); err == nil {
				name = dec
			}
			if hasValue && sensitiveParam(name) {
				k, _, _ := strings.Cut(p, "=")
				parts[i] = k + "=" + Redacted
				changed = true
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if !changed {
		return raw
	}
	return u.String()
}

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

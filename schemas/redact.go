package schemas

import (
	"net/url"
	"strings"
)

// Redacted replaces a secret wherever gpuprice prints or stores a URL, DSN or header.
const Redacted = "REDACTED"

// sensitiveParams are query parameters whose value is a credential (compared in
// lower case with '-' and '_' removed). Pagination tokens (pageToken) are not secrets
// and are kept, so that archived URLs still tell pages apart.
var sensitiveParams = map[string]bool{
	"key": true, "apikey": true, "accesstoken": true, "token": true, "authtoken": true, "auth": true,
	"password": true, "passwd": true, "pwd": true, "secret": true, "clientsecret": true, "signature": true,
	"sig": true, "xamzsignature": true, "xamzcredential": true, "xamzsecuritytoken": true, "sessiontoken": true,
}

// SensitiveParam reports whether a URL query parameter of this name carries a
// credential (api_key, key, access_token, sig, X-Amz-Signature, password, …).
func SensitiveParam(name string) bool {
	n := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name))
	return sensitiveParams[n]
}

// sensitiveHeaderWords mark a header whose value is a credential.
var sensitiveHeaderWords = []string{"authorization", "cookie", "api-key", "apikey", "token", "secret", "password", "credential"}

// SensitiveHeader reports whether an HTTP header of this name carries a credential
// (Authorization, Cookie, X-Api-Key, X-Goog-Api-Key, X-Amz-Security-Token, …).
func SensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range sensitiveHeaderWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// RedactURL is the one redaction of URLs and DSNs: it returns raw with the password
// of its user info and the values of credential-like query parameters replaced by
// REDACTED. Everything else, the order of parameters included, is kept, so a URL
// without secrets comes back byte for byte unchanged (a DSN whose parameters are not
// in alphabetical order is not mistaken for one holding a password). An unparseable
// URL is returned as a placeholder rather than verbatim.
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
			if hasValue && SensitiveParam(name) {
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

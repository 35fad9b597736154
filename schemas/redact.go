package schemas

import (
	"net/url"
	"regexp"
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
var sensitiveHeaderWords = []string{
	"authorization",
	"cookie",
	"api-key",
	"apikey",
	"token",
	"secret",
	"password",
	"credential",
}

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

var (
	// userinfoRe is a URL's user and password: scheme://user:password@.
	userinfoRe = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s"'<>:]*):([^/?#@\s"'<>]+)@`)
	// paramRe is a query parameter after ?, & or ; (or the \u0026 JSON writes for &),
	// its value up to the next parameter or the end of the URL's text (a comma, a
	// quote, a backslash: the end of a CSV cell or a JSON string).
	paramRe = regexp.MustCompile(`((?:[?&;]|\\u0026)([A-Za-z0-9_.%~-]+)=)([^&#\s"'<>,;\\]*)`)
)

// RedactText is RedactURL for free text: every URL's password and every
// credential-like query parameter in s (a log line, an error, a JSON or CSV body,
// a manifest) is replaced by REDACTED in place, the rest left byte for byte. It
// finds parameters after ?, & and JSON's \u0026, and ends a value at a comma, a
// quote, a backslash or a space, so that it never eats the next field.
func RedactText(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "=") {
		return s
	}
	if strings.Contains(s, "://") {
		s = userinfoRe.ReplaceAllStringFunc(s, func(m string) string {
			g := userinfoRe.FindStringSubmatch(m)
			if g[2] == Redacted {
				return m
			}
			return g[1] + ":" + Redacted + "@"
		})
	}
	return paramRe.ReplaceAllStringFunc(s, func(m string) string {
		g := paramRe.FindStringSubmatch(m)
		name := g[2]
		if dec, err := url.QueryUnescape(name); err == nil {
			name = dec
		}
		// Punctuation ending a sentence ("…&sig=abc: HTTP 500") is the text's.
		value := strings.TrimRight(g[3], ":.)]")
		if value == "" || value == Redacted || !SensitiveParam(name) {
			return m
		}
		return g[1] + Redacted + g[3][len(value):]
	})
}

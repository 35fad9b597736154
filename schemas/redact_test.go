package schemas

import (
	"encoding/json"
	"strings"
	"testing"
)

// The endpoint of issue 29's finding 3, in every shape it was found in: a log
// line, an error, JSON (which writes & as \u0026), a CSV row, a manifest.
const secretEndpoint = "http://user:pass@host/?api_key=SECRET"

func TestRedactText(t *testing.T) {
	js, _ := json.Marshal(map[string]string{"url": secretEndpoint + "&page=2&Token=T0K", "next": "x"})
	for _, c := range []struct{ in, want string }{
		{secretEndpoint, "http://user:REDACTED@host/?api_key=REDACTED"},
		{`fetch: GET ` + secretEndpoint + `&sig=abc: HTTP 500`,
			`fetch: GET http://user:REDACTED@host/?api_key=REDACTED&sig=REDACTED: HTTP 500`},
		{string(js), `{"next":"x","url":"http://user:REDACTED@host/?api_key=REDACTED\u0026page=2\u0026Token=REDACTED"}`},
		{"2026-10-20T12:00:00Z,vast," + secretEndpoint + ",2.5,import\n",
			"2026-10-20T12:00:00Z,vast,http://user:REDACTED@host/?api_key=REDACTED,2.5,import\n"},
		{`"endpoint": "https://a.example/v1?pageToken=p1&X-Amz-Signature=f00"`,
			`"endpoint": "https://a.example/v1?pageToken=p1&X-Amz-Signature=REDACTED"`},
		{"clickhouse://default:pw@localhost:9000/db?secure=true", "clickhouse://default:REDACTED@localhost:9000/db?secure=true"},
		// Nothing secret: byte for byte.
		{"level=INFO msg=collected source=vast key=value url=https://h/x?a=1&b=2", ""},
		{"https://user@host/?page=1", ""},
		{"http://user:REDACTED@host/?api_key=REDACTED", ""},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		got := RedactText(c.in)
		if got != want {
			t.Errorf("RedactText(%q)\n got  %q\n want %q", c.in, got, want)
		}
		if RedactText(got) != got {
			t.Errorf("RedactText is not idempotent on %q", got)
		}
		if strings.Contains(got, "SECRET") || strings.Contains(got, ":pass@") {
			t.Errorf("a secret is left in %q", got)
		}
	}
}

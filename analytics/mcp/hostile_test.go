package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// TestHostileTextCleaned (issue 29): a server whose stored rows carry the hostile
// corpus raw (written before ingest cleaned them, or by a hostile peer) answers
// find_offers; the tool's text and structured content hold no control, bidi or
// invisible character and no value spans lines, every hostile field reads as
// textsafe.Clean made it, and a URL's credentials hidden by a zero-width space are
// still redacted.
func TestHostileTextCleaned(t *testing.T) {
	at := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	rows := schemas.HostileObservations(at)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/prices" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(query.Result[[]schemas.Observation]{Data: rows})
	}))
	defer api.Close()
	cs := connect(t, &query.Client{Base: api.URL, HTTP: api.Client()})
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "find_offers",
		Arguments: map[string]any{"limit": len(rows)}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if res.IsError {
		t.Fatalf("find_offers failed: %s", text)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	for where, s := range map[string]string{"text": text, "structured content": string(structured)} {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		walk(v, func(s string) {
			for _, r := range s {
				if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r) {
					t.Errorf("%s holds %U: %.120q", where, r, s)
					return
				}
			}
		})
		for _, secret := range []string{"pass", "SECRET", "SEC RET"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s holds the credential %q", where, secret)
			}
		}
	}
	var got query.Result[[]Offer]
	remarshal(t, res.StructuredContent, &got)
	if len(got.Data) != len(rows) {
		t.Fatalf("%d offers, want %d", len(got.Data), len(rows))
	}
	want := map[string]bool{}
	for _, h := range textsafe.Hostile {
		want[textsafe.Clean(string([]rune(h)), 0)] = true
	}
	for _, o := range got.Data {
		for _, f := range []string{o.SKU, o.Region, o.Zone, o.GPUName, o.Attrs["geolocation"]} {
			if !want[f] {
				t.Errorf("offer field %.80q is not a cleaned corpus string", f)
			}
		}
	}
}

// walk calls fn with every string of a decoded JSON value, keys too.
func walk(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walk(e, fn)
		}
	case map[string]any:
		for k, e := range x {
			fn(k)
			walk(e, fn)
		}
	}
}

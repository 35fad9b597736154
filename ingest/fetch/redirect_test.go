package fetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A credential header set by a source (GCP's X-Goog-Api-Key) is not forwarded when a
// redirect leads to another host; it still is on the same host.
func TestRedirectStripsCredentialsAcrossHosts(t *testing.T) {
	var got http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Write([]byte("ok"))
	}))
	defer other.Close()
	var sameHost http.Header
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			// 127.0.0.1 and localhost are different hosts to the client.
			http.Redirect(w, r, "http://localhost:"+port(other)+"/x", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			sameHost = r.Header.Clone()
			w.Write([]byte("ok"))
		}
	}))
	defer origin.Close()
	c := New(Options{})
	hdr := http.Header{"X-Goog-Api-Key": {"AIzaSECRET"}, "Accept": {"application/json"}}
	if _, err := c.Get(context.Background(), origin.URL+"/here", hdr); err != nil {
		t.Fatal(err)
	}
	if sameHost.Get("X-Goog-Api-Key") != "AIzaSECRET" {
		t.Errorf("same-host redirect lost the key: %v", sameHost)
	}
	// Over plain HTTP a cross-host redirect that carried a key is refused outright.
	_, err := c.Get(context.Background(), origin.URL+"/away", hdr)
	if !errors.Is(err, ErrRedirect) {
		t.Fatalf("cross-host plain-HTTP redirect with a key: err %v, want ErrRedirect", err)
	}
	if got != nil {
		t.Errorf("the other host was reached: %v", got)
	}
	// Without a credential it is followed, and ordinary headers go along.
	if _, err := c.Get(context.Background(), origin.URL+"/away", http.Header{"Accept": {"application/json"}}); err != nil {
		t.Fatal(err)
	}
	if got.Get("Accept") != "application/json" {
		t.Errorf("headers on the followed redirect: %v", got)
	}
}

// Over TLS a cross-host redirect is followed with every credential header removed.
func TestCheckRedirectRemovesCredentialHeaders(t *testing.T) {
	first, _ := http.NewRequest(http.MethodGet, "https://cloudbilling.googleapis.com/v1/services", nil)
	first.Header.Set("X-Goog-Api-Key", "AIzaSECRET")
	next, _ := http.NewRequest(http.MethodGet, "https://elsewhere.example.com/v1/services", nil)
	next.Header = first.Header.Clone()
	next.Header.Set("Authorization", "Bearer tok")
	next.Header.Set("Accept", "application/json")
	if err := CheckRedirect(next, []*http.Request{first}); err != nil {
		t.Fatal(err)
	}
	if next.Header.Get("X-Goog-Api-Key") != "" || next.Header.Get("Authorization") != "" || next.Header.Get("Accept") == "" {
		t.Errorf("headers after a cross-host redirect: %v", next.Header)
	}
	// A key in the query string also counts as carried: no plain-HTTP hop.
	first, _ = http.NewRequest(http.MethodGet, "https://api.example.com/x?api_key=s", nil)
	next, _ = http.NewRequest(http.MethodGet, "http://other.example.com/x", nil)
	if err := CheckRedirect(next, []*http.Request{first}); !errors.Is(err, ErrRedirect) {
		t.Errorf("plain-HTTP hop after api_key: %v", err)
	}
}

func port(s *httptest.Server) string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

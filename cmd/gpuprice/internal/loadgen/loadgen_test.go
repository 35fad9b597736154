package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRunCountsRequestsAndErrors(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%10 == 0 {
			http.Error(w, "nope", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	r := Run(context.Background(), srv.URL, 4, 200*time.Millisecond)
	if r.Requests == 0 || int64(r.Requests) != n.Load() {
		t.Fatalf("requests %d, server saw %d", r.Requests, n.Load())
	}
	if want := r.Requests / 10; r.Errors < want-4 || r.Errors > want+4 || !strings.Contains(r.FirstError, "503") {
		t.Errorf("errors %d of %d (%q), want about one in ten", r.Errors, r.Requests, r.FirstError)
	}
	if r.P50 <= 0 || r.P99 < r.P50 || r.Max < r.P99 || r.RPS <= 0 {
		t.Errorf("figures: %+v", r)
	}
}

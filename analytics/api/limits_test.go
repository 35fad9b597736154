package api

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

func TestShedAnswers503PastTheCap(t *testing.T) {
	release := make(chan struct{})
	var started sync.WaitGroup
	h := shed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("block") != "" {
			started.Done()
			<-release
		}
		w.WriteHeader(http.StatusOK)
	}), 2)
	var done sync.WaitGroup
	for i := 0; i < 2; i++ {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/api/v1/prices?block=1", nil))
		}()
	}
	started.Wait()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/prices", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("third request while two run: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/healthz shed: %d", rec.Code)
	}
	close(release)
	done.Wait()
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/prices", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("after: %d", rec.Code)
	}
}

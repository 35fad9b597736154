package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// memObserver keeps what it is told, streamed entries included.
type memObserver struct {
	mu      sync.Mutex
	whole   []*Response
	reqs    [][]byte
	entries []*memEntry
}

func (m *memObserver) Observe(_ context.Context, _, _ string, reqBody []byte, r *Response, _ time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.whole = append(m.whole, r)
	m.reqs = append(m.reqs, reqBody)
}

func (m *memObserver) ObserveStream(_ context.Context, _, _ string, _ []byte, status int, _ http.Header, _ time.Time) StreamEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &memEntry{status: status}
	m.entries = append(m.entries, e)
	return e
}

type memEntry struct {
	status int
	body   bytes.Buffer
	closed bool
	err    error
}

func (e *memEntry) Write(p []byte) (int, error) { return e.body.Write(p) }
func (e *memEntry) Close(err error) error {
	e.closed, e.err = true, err
	return nil
}

func TestStreamRetriesAndRecordsWholeBody(t *testing.T) {
	body := strings.Repeat("0123456789", 50000) // 500 kB
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "busy")
			return
		}
		if !strings.HasPrefix(r.UserAgent(), "gpuprice/") {
			t.Errorf("User-Agent %q", r.UserAgent())
		}
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	c := New(fast())
	obs := &memObserver{}
	c.Observer = obs
	// read stops after 1000 bytes: the entry still gets the whole body.
	var got []byte
	err := c.Stream(context.Background(), srv.URL+"/big?api_key=k", nil, time.Second, func(r io.Reader) error {
		got = make([]byte, 1000)
		_, err := io.ReadFull(r, got)
		return err
	})
	if err != nil || string(got) != body[:1000] || n.Load() != 2 {
		t.Fatalf("err %v, read %q…, %d requests", err, got[:10], n.Load())
	}
	if len(obs.whole) != 1 || obs.whole[0].Status != 503 || string(obs.whole[0].Body) != "busy" {
		t.Errorf("failed attempt not reported: %+v", obs.whole)
	}
	if len(obs.entries) != 1 || !obs.entries[0].closed || obs.entries[0].err != nil || obs.entries[0].body.String() != body {
		t.Fatalf("entry: %d entries, closed %v err %v, %d bytes", len(obs.entries), obs.entries[0].closed, obs.entries[0].err, obs.entries[0].body.Len())
	}

	// A parse error is returned, the body still kept whole.
	perr := errors.New("parser gave up")
	if err := c.Stream(context.Background(), srv.URL, nil, 0, func(io.Reader) error { return perr }); !errors.Is(err, perr) {
		t.Errorf("err = %v", err)
	}
	if e := obs.entries[1]; e.err != nil || e.body.String() != body {
		t.Errorf("entry after a parse error: err %v, %d bytes", e.err, e.body.Len())
	}
}

func TestStreamBrokenTransferDropsEntry(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		_, _ = io.WriteString(w, strings.Repeat("x", 5000)) // then the connection closes
	}))
	defer srv.Close()
	c := New(fast())
	obs := &memObserver{}
	c.Observer = obs
	err := c.Stream(context.Background(), srv.URL, nil, 0, func(r io.Reader) error {
		_, err := io.Copy(io.Discard, r)
		return err
	})
	if err == nil {
		t.Fatal("a cut transfer read without error")
	}
	if len(obs.entries) != 1 || obs.entries[0].err == nil {
		t.Errorf("a partial body was kept: %+v", obs.entries)
	}
}

func TestStreamStatusErrors(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path == "/gone" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer srv.Close()
	c := New(fast())
	obs := &memObserver{}
	c.Observer = obs
	called := false
	read := func(io.Reader) error { called = true; return nil }
	err := c.Stream(context.Background(), srv.URL+"/gone?token=s3cret", nil, 0, read)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 404 || n.Load() != 1 || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("404: err %v after %d requests", err, n.Load())
	}
	n.Store(0)
	if err := c.Stream(context.Background(), srv.URL+"/down", nil, 0, read); !errors.Is(err, ErrStatus) || n.Load() != 3 {
		t.Errorf("502: err %v after %d requests, want 3", err, n.Load())
	}
	if called || len(obs.whole) != 4 || len(obs.entries) != 0 {
		t.Errorf("read called %v, %d responses reported, %d entries", called, len(obs.whole), len(obs.entries))
	}
}

func TestObservedReportsRequestAndResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo", "yes")
		_, _ = w.Write(append([]byte("got "), b...))
	}))
	defer srv.Close()
	obs := &memObserver{}
	d := Observed(srv.Client(), obs, 0)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("Action=DescribeSpotPriceHistory"))
	resp, err := d.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "got Action=DescribeSpotPriceHistory" {
		t.Errorf("caller read %q", b)
	}
	if len(obs.whole) != 1 || string(obs.whole[0].Body) != string(b) || obs.whole[0].Header.Get("X-Echo") != "yes" ||
		string(obs.reqs[0]) != "Action=DescribeSpotPriceHistory" {
		t.Errorf("reported %+v, request %q", obs.whole, obs.reqs)
	}

	// A body over the limit is handed back whole and not reported.
	d = Observed(srv.Client(), obs, 8)
	req, _ = http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("a longer body"))
	resp, err = d.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "got a longer body" || len(obs.whole) != 1 {
		t.Errorf("caller read %q, %d reported", b, len(obs.whole))
	}
	if Observed(srv.Client(), nil, 0) != Doer(srv.Client()) {
		t.Error("Observed without an observer wraps the client")
	}
}

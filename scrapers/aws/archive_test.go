package aws

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/archive"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// watchedTransport samples the heap as response bodies are read.
type watchedTransport struct {
	rt    http.RoundTripper
	watch *heapWatch
}

func (w *watchedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.rt.RoundTrip(req)
	if err != nil || !strings.HasSuffix(req.URL.Path, "/index.json") {
		return resp, err
	}
	w.watch.r = resp.Body
	resp.Body = readCloser{w.watch, resp.Body}
	return resp, nil
}

// digest hashes the rows emitted, in order, without keeping them (rows kept would
// grow the heap with the file).
type digest struct {
	h hash.Hash
	n int
}

func (d *digest) Emit(o schemas.Observation) {
	b, _ := json.Marshal(o)
	d.h.Write(append(b, '\n'))
	d.n++
}

type readCloser struct {
	io.Reader
	io.Closer
}

// TestRecordLargeOfferBoundedMemory records a generated offer file of tens of
// megabytes into an archive as it is parsed, then reparses it from the archive with
// no server: the heap stays small both ways and the rows are the same.
func TestRecordLargeOfferBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a large file")
	}
	const n = 12000
	offer := "/offers/v1.0/aws/AmazonEC2/20251101000000/us-east-2/index.json"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != offer {
			w.Write([]byte(`{"formatVersion":"v1.0","regions":{"us-east-2":{"regionCode":"us-east-2","currentVersionUrl":"` + offer + `"}}}`))
			return
		}
		body := generateOffer(n)
		defer body.Close()
		_, _ = io.Copy(w, body)
	}))
	defer srv.Close()
	opts := map[string]any{"mode": "public", "regions": []any{"us-east-2"}, "collect": []any{"on_demand", "reserved"}}
	index := srv.URL + "/offers/v1.0/aws/AmazonEC2/current/region_index.json"
	observed := scrapertest.ObservedAt

	dir := filepath.Join(t.TempDir(), "archive")
	rec, err := archive.Create(dir, "run-big", observed, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := scrapertest.Config(t, Name, index, opts)
	cfg.Client.Observer = rec.Source(Name, archive.SourceInfo{ObservedAt: observed})
	live := &watchedTransport{rt: http.DefaultTransport, watch: newHeapWatch(nil, 1<<20)}
	cfg.Client.HTTP.Transport = live
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	recorded := &digest{h: sha256.New()}
	if err := src.Collect(context.Background(), recorded); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(time.Now()); err != nil {
		t.Fatal(err)
	}
	if live.watch.n < 30<<20 || recorded.n != 3*n/25 {
		t.Fatalf("streamed %d bytes, %d rows", live.watch.n, recorded.n)
	}
	if limit := uint64(live.watch.n / 4); live.watch.peakHeap > limit {
		t.Errorf("recording: heap grew by %d bytes while streaming %d bytes (limit %d)", live.watch.peakHeap, live.watch.n, limit)
	}
	m := rec.Manifest()
	if len(m.Entries) != 2 || int64(m.Entries[1].Bytes) != live.watch.n {
		t.Fatalf("archived %+v, streamed %d bytes", m.Entries, live.watch.n)
	}
	srv.Close()

	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg = scrapertest.Config(t, Name, index, opts)
	replay := &watchedTransport{rt: a, watch: newHeapWatch(nil, 1<<20)}
	cfg.Client.HTTP.Transport = replay
	src, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rebuilt := &digest{h: sha256.New()}
	if err := src.Collect(context.Background(), rebuilt); err != nil {
		t.Fatal(err)
	}
	if limit := uint64(replay.watch.n / 4); replay.watch.n != live.watch.n || replay.watch.peakHeap > limit {
		t.Errorf("replay: heap grew by %d bytes while streaming %d bytes (limit %d)", replay.watch.peakHeap, replay.watch.n, limit)
	}
	if rebuilt.n != recorded.n || !bytes.Equal(rebuilt.h.Sum(nil), recorded.h.Sum(nil)) || len(a.Misses()) != 0 {
		t.Errorf("reparsed rows differ (%d, recorded %d); misses %v", rebuilt.n, recorded.n, a.Misses())
	}
	t.Logf("recorded %d MB (peak heap growth %.1f MB), replayed (%.1f MB)", live.watch.n>>20,
		float64(live.watch.peakHeap)/(1<<20), float64(replay.watch.peakHeap)/(1<<20))
}

// The SDK's calls, a throttled one and its retry included, are archived with their
// request bodies and replayed to the SDK in order: the same rows (and Capacity Block
// signals, the default types asked in api mode) come back with the fake AWS gone.
func TestRecordAPIRetriesThenReplay(t *testing.T) {
	f := newFakeAWS(t)
	pages := pricingPages(t)
	f.pricing = func(n int, in map[string]any) (int, string) {
		if n == 0 {
			return http.StatusTooManyRequests, `{"__type":"ThrottlingException","message":"Rate exceeded"}`
		}
		return pages(n, in)
	}
	f.ec2 = spotPages(t)
	f.cb = cbPages(t)
	dir := filepath.Join(t.TempDir(), "archive")
	rec, err := archive.Create(dir, "run-api", scrapertest.ObservedAt, []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"})
	if err != nil {
		t.Fatal(err)
	}
	opts := map[string]any{"mode": "api", "regions": []any{"us-east-1"}, "since": "3h"}
	s := newAPISource(t, f, opts)
	s.cfg.Client.Observer = rec.Source(Name, archive.SourceInfo{ObservedAt: scrapertest.ObservedAt})
	var live rejectSink
	if err := s.Collect(context.Background(), &live); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(time.Now()); err != nil {
		t.Fatal(err)
	}
	m := rec.Manifest()
	var statuses []int
	for _, e := range m.Entries {
		statuses = append(statuses, e.Status)
		if e.Method != http.MethodPost || len(e.RequestBody) == 0 {
			t.Errorf("entry %+v", e)
		}
	}
	// 3 GetProducts, 2 DescribeSpotPriceHistory, then DescribeCapacityBlockOfferings:
	// p5.48xlarge in 2 pages and the 4 other default types.
	if len(statuses) != 11 || statuses[0] != http.StatusTooManyRequests || len(f.pricReq) != 3 || len(f.cbReq) != 6 {
		t.Fatalf("archived statuses %v after %d GetProducts, %d DescribeCapacityBlockOfferings", statuses, len(f.pricReq), len(f.cbReq))
	}
	f.Close()

	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s = newAPISource(t, f, opts)
	s.cfg.Client.HTTP.Transport = a
	var replayed rejectSink
	if err := s.Collect(context.Background(), &replayed); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(live.Sorted())
	got, _ := json.Marshal(replayed.Sorted())
	if string(got) != string(want) || len(live.Rows) == 0 || len(a.Misses()) != 0 || len(replayed.rejects) != len(live.rejects) {
		t.Errorf("replayed %d rows, recorded %d; misses %v", len(replayed.Rows), len(live.Rows), a.Misses())
	}
	want, _ = json.Marshal(live.Signals)
	got, _ = json.Marshal(replayed.Signals)
	if string(got) != string(want) || len(live.Signals) == 0 {
		t.Errorf("replayed signals %s, recorded %s", got, want)
	}
}

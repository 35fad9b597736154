package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

// memSink is an in-memory Sink keeping one row per observation identity.
type memSink struct {
	mu          sync.Mutex
	rows        map[string]schemas.Observation
	quarantine  []schemas.Quarantined
	runs        []schemas.Run
	unavailable bool
	writes      int
}

func newMemSink() *memSink { return &memSink{rows: map[string]schemas.Observation{}} }

func (m *memSink) WriteObservations(_ context.Context, obs []schemas.Observation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.unavailable {
		return fmt.Errorf("dial tcp: connection refused: %w", store.ErrUnavailable)
	}
	m.writes++
	for _, o := range obs {
		m.rows[o.SeriesKey()+"|"+o.EffectiveAt.String()] = o
	}
	return nil
}

func (m *memSink) WriteQuarantine(_ context.Context, q []schemas.Quarantined) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.quarantine = append(m.quarantine, q...)
	return nil
}

func (m *memSink) WriteRun(_ context.Context, r schemas.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs = append(m.runs, r)
	return nil
}

type sourceFunc func(ctx context.Context, e scrapers.Emitter) error

func (f sourceFunc) Collect(ctx context.Context, e scrapers.Emitter) error { return f(ctx, e) }

type expecting struct {
	sourceFunc
	x scrapers.Expectation
}

func (e expecting) Expect() scrapers.Expectation { return e.x }

func emitN(n int, mod func(i int, o *schemas.Observation)) sourceFunc {
	return emitNP("sku", n, mod)
}

// emitNP emits n rows with SKUs <prefix>-0 … <prefix>-(n-1).
func emitNP(prefix string, n int, mod func(i int, o *schemas.Observation)) sourceFunc {
	return func(ctx context.Context, e scrapers.Emitter) error {
		for i := 0; i < n; i++ {
			o := raw(nil)
			o.SKU = fmt.Sprintf("%s-%d", prefix, i)
			if mod != nil {
				mod(i, &o)
			}
			e.Emit(o)
		}
		return nil
	}
}

func newCollector(sink Sink) *Collector {
	return &Collector{
		Sink: sink, Normalizer: testNormalizer(), Batch: BatchConfig{Size: 3, FlushInterval: time.Hour},
		SourceTimeout: 500 * time.Millisecond, Now: func() time.Time { return t0 },
	}
}

func TestCollectIsolatesSources(t *testing.T) {
	sink := newMemSink()
	c := newCollector(sink)
	jobs := []Job{
		{Name: "good", Source: emitN(7, nil)},
		{Name: "broken", Source: sourceFunc(func(context.Context, scrapers.Emitter) error {
			return errors.New("fetch: https://example/api: HTTP 500 Internal Server Error")
		})},
		{Name: "panics", Source: sourceFunc(func(context.Context, scrapers.Emitter) error { panic("index out of range") })},
		{Name: "hangs", Source: sourceFunc(func(ctx context.Context, e scrapers.Emitter) error {
			<-ctx.Done()
			return ctx.Err()
		})},
		{Name: "partial", Source: sourceFunc(func(ctx context.Context, e scrapers.Emitter) error {
			_ = emitNP("partial", 2, nil)(ctx, e)
			return errors.New("page 2: HTTP 429")
		})},
		{Name: "zeros", Source: emitNP("zeros", 4, func(i int, o *schemas.Observation) {
			if i%2 == 1 {
				o.PriceNative = 0
			}
		})},
		{Name: "empty", Source: emitN(0, nil)},
	}
	res := c.Collect(context.Background(), "run-1", jobs)
	want := map[string]struct {
		status        string
		rows, quarant int
		errPart       string
	}{
		"good":    {schemas.RunOK, 7, 0, ""},
		"broken":  {schemas.RunFailed, 0, 0, "HTTP 500"},
		"panics":  {schemas.RunFailed, 0, 0, "panicked"},
		"hangs":   {schemas.RunFailed, 0, 0, "deadline exceeded"},
		"partial": {schemas.RunDegraded, 2, 0, "HTTP 429"},
		"zeros":   {schemas.RunOK, 2, 0, ""}, // price 0: not offered, counted below
		"empty":   {schemas.RunFailed, 0, 0, "no rows"},
	}
	if len(res) != len(jobs) {
		t.Fatalf("%d results for %d jobs", len(res), len(jobs))
	}
	for i, r := range res {
		w := want[jobs[i].Name]
		if r.Source != jobs[i].Name || r.Status != w.status || r.RowsAccepted != w.rows || r.RowsQuarantine != w.quarant {
			t.Errorf("%s: got %s/%s rows=%d quarantined=%d (%s); want %s rows=%d quarantined=%d",
				jobs[i].Name, r.Source, r.Status, r.RowsAccepted, r.RowsQuarantine, r.Error, w.status, w.rows, w.quarant)
		}
		if !strings.Contains(r.Error, w.errPart) {
			t.Errorf("%s: error %q does not mention %q", jobs[i].Name, r.Error, w.errPart)
		}
		if r.RunID != "run-1" {
			t.Errorf("%s: run id %q", r.Source, r.RunID)
		}
	}
	good := res[0]
	if !good.Since.Equal(t0.Truncate(time.Second)) || !good.Until.Equal(t0.Truncate(time.Second).Add(time.Second)) {
		t.Errorf("span of good rows [%v, %v)", good.Since, good.Until)
	}
	if !res[1].Since.IsZero() {
		t.Errorf("a failed source has a span: %v", res[1].Since)
	}
	if len(sink.rows) != 7+2+2 {
		t.Errorf("stored %d rows, want 11", len(sink.rows))
	}
	if len(sink.runs) != len(jobs) {
		t.Errorf("%d run records stored, want %d", len(sink.runs), len(jobs))
	}
	if len(sink.quarantine) != 0 || res[5].RowsNotOffered != 2 {
		t.Errorf("not offered rows: %d counted, quarantine = %+v; want 2 counted, none quarantined", res[5].RowsNotOffered, sink.quarantine)
	}
	for _, o := range sink.rows {
		if o.RunID != "run-1" || o.GPU != "H100-SXM-80GB" || o.PriceUSDGPUHour != 2.99 {
			t.Errorf("stored row not normalised: %+v", o)
			break
		}
	}
}

func TestCollectBatchesAndCoverage(t *testing.T) {
	sink := newMemSink()
	c := newCollector(sink)
	src := expecting{emitN(7, nil), scrapers.Expectation{MinRows: 10, SKUs: []string{"sku-1", "sku-99"}}}
	res := c.Collect(context.Background(), "r", []Job{{Name: "x", Source: src}})
	if sink.writes != 3 { // 3 + 3 + 1 with batch size 3
		t.Errorf("%d writes, want 3 batches", sink.writes)
	}
	r := res[0]
	if r.Status != schemas.RunDegraded || !strings.Contains(r.Error, "7 rows, expected at least 10") || !strings.Contains(r.Error, "missing SKUs sku-99") {
		t.Errorf("coverage shortfall not reported: %s %q", r.Status, r.Error)
	}
}

func TestCollectSpoolsWhenStoreUnavailable(t *testing.T) {
	sink := newMemSink()
	sink.unavailable = true
	sp := &DirSpool{Dir: t.TempDir()}
	c := newCollector(sink)
	c.Spool = sp
	res := c.Collect(context.Background(), "r", []Job{{Name: "x", Source: emitN(5, nil)}})
	if res[0].Spooled != 5 || res[0].Status != schemas.RunDegraded || !strings.Contains(res[0].Error, "5 rows spooled") {
		t.Fatalf("spooled %d, status %s (%s)", res[0].Spooled, res[0].Status, res[0].Error)
	}
	st, err := sp.Status()
	if err != nil || st.Rows != 5 || st.Segments != 2 {
		t.Fatalf("spool status %+v, %v", st, err)
	}
	sink.unavailable = false
	n, err := sp.Replay(context.Background(), sink)
	if err != nil || n != 5 || len(sink.rows) != 5 {
		t.Fatalf("replayed %d (%v), stored %d", n, err, len(sink.rows))
	}
	if st, _ := sp.Status(); st.Segments != 0 {
		t.Errorf("spool not emptied: %+v", st)
	}
}

func TestCollectRejecter(t *testing.T) {
	sink := newMemSink()
	c := newCollector(sink)
	src := sourceFunc(func(ctx context.Context, e scrapers.Emitter) error {
		if !scrapers.Reject(e, "<tr>garbled</tr>", "row has no price cell") {
			t.Error("collector's emitter is not a Rejecter")
		}
		return emitN(1, nil)(ctx, e)
	})
	res := c.Collect(context.Background(), "r", []Job{{Name: "x", Source: src}})
	if res[0].RowsQuarantine != 1 || sink.quarantine[0].Raw != "<tr>garbled</tr>" || sink.quarantine[0].Reason != "row has no price cell" {
		t.Errorf("rejected row not quarantined: %+v", sink.quarantine)
	}
}

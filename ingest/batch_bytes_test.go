package ingest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// sizedSink is a memSink that records each write's row count and says its batch
// bounds as a store does (store.BatchSizer, store.BatchByteSizer).
type sizedSink struct {
	*memSink
	maxRows, maxBytes int
	mu                sync.Mutex
	sizes             []int
}

func (s *sizedSink) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(obs))
	s.mu.Unlock()
	return s.memSink.WriteObservations(ctx, obs)
}

func (s *sizedSink) WriteBatchSize() int  { return s.maxRows }
func (s *sizedSink) WriteBatchBytes() int { return s.maxBytes }

// withAttrs gives each row n attrs, as AWS's rows have a dozen.
func withAttrs(n int) func(int, *schemas.Observation) {
	return func(i int, o *schemas.Observation) {
		o.Attrs = map[string]string{}
		for k := range n {
			o.Attrs[fmt.Sprintf("attr%d", k)] = fmt.Sprint(i)
		}
	}
}

// TestBatchesBoundedByBytes: a batch is written at the store's row count or its
// byte bound, whichever comes first; the byte bound counts the rows' attrs; config
// wins over the store, and -1 lifts the bound.
func TestBatchesBoundedByBytes(t *testing.T) {
	one := schemas.Observation{Attrs: map[string]string{}}
	for k := range 12 {
		one.Attrs[fmt.Sprint(k)] = "v"
	}
	per := RowBytes(&one)
	if bare := RowBytes(&schemas.Observation{}); per <= bare+12*attrBytes {
		t.Fatalf("RowBytes: %d with 12 attrs, %d without: the attrs are not counted", per, bare)
	}
	for _, c := range []struct {
		name              string
		maxRows, maxBytes int // the store's bounds
		cfg               BatchConfig
		want              []int
	}{
		{"the store's byte bound comes first", 1000, 10 * per, BatchConfig{}, []int{10, 10, 10, 5}},
		{"the store's row count comes first", 8, 10 * per, BatchConfig{}, []int{8, 8, 8, 8, 3}},
		{"config's byte bound wins", 1000, 10 * per, BatchConfig{Bytes: 20 * per}, []int{20, 15}},
		{"no byte bound", 1000, 10 * per, BatchConfig{Bytes: -1}, []int{35}},
		{"a store without one: DefaultBatchBytes", 1000, 0, BatchConfig{}, []int{35}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sink := &sizedSink{memSink: newMemSink(), maxRows: c.maxRows, maxBytes: c.maxBytes}
			cfg := c.cfg
			cfg.FlushInterval = time.Hour
			col := &Collector{Sink: sink, Normalizer: testNormalizer(), Batch: cfg, Now: func() time.Time { return t0 }}
			res := col.Collect(context.Background(), "r", []Job{{Name: "x", Source: emitN(35, withAttrs(12))}})
			if res[0].RowsAccepted != 35 || len(sink.rows) != 35 {
				t.Fatalf("accepted %d, stored %d of 35: %s", res[0].RowsAccepted, len(sink.rows), res[0].Error)
			}
			if fmt.Sprint(sink.sizes) != fmt.Sprint(c.want) {
				t.Errorf("batches %v, want %v", sink.sizes, c.want)
			}
		})
	}
}

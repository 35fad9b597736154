package archive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
)

func TestScrubberAcrossWrites(t *testing.T) {
	secrets := []string{"longer-secret-value", secret}
	body := "a" + secret + "b" + strings.Repeat("x", 40) + "longer-secret-value" + secret + "tail" + secret[:5]
	want := strings.NewReplacer("longer-secret-value", fetch.Redacted, secret, fetch.Redacted).Replace(body)
	for _, size := range []int{1, 2, 3, 7, 19, 1000} {
		var out bytes.Buffer
		sc := newScrubber(secrets, func(p []byte) error { out.Write(p); return nil })
		for i := 0; i < len(body); i += size {
			if err := sc.Write([]byte(body[i:min(i+size, len(body))])); err != nil {
				t.Fatal(err)
			}
		}
		if err := sc.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Errorf("writes of %d bytes: %q, want %q", size, out.String(), want)
		}
	}
}

// A streamed body is archived whole (secrets redacted), served back by the same
// request, and a damaged file fails at its end instead of being served as good.
func TestStreamRecordThenReplay(t *testing.T) {
	body := strings.Repeat(`{"sku":"ABC","price":"1.0"},`, 20000) + secret + "]"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	rec, err := Create(dir, "run-s", time.Now(), []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	c := client(nil)
	c.Observer = rec.Source("demo", SourceInfo{ObservedAt: time.Now()})
	if _, err := c.Get(context.Background(), srv.URL+"/small", nil); err != nil {
		t.Fatal(err)
	}
	var live []byte
	err = c.Stream(context.Background(), srv.URL+"/offer.json", nil, 0, func(r io.Reader) error {
		live, err = io.ReadAll(r)
		return err
	})
	if err != nil || string(live) != body {
		t.Fatalf("stream: %v", err)
	}
	// A transfer that breaks off leaves no entry and no file.
	cut := c.Observer.(fetch.StreamObserver).ObserveStream(context.Background(), "GET", srv.URL+"/cut", nil, 200, nil, time.Now())
	_, _ = cut.Write([]byte("partial"))
	if err := cut.Close(io.ErrUnexpectedEOF); err != nil {
		t.Errorf("dropping an entry: %v", err)
	}
	if err := rec.Close(time.Now()); err != nil {
		t.Fatal(err)
	}
	m := rec.Manifest()
	if len(m.Entries) != 2 || m.Entries[1].Seq != 2 || m.Entries[1].Bytes != len(body)-len(secret)+len(fetch.Redacted) ||
		m.Entries[1].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("entries %+v", m.Entries)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "responses", "*"))
	if len(files) != 4 {
		t.Errorf("files %v, want two entries' .gz and .json", files)
	}

	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	var replayed []byte
	err = client(a).Stream(context.Background(), srv.URL+"/offer.json", nil, 0, func(r io.Reader) error {
		replayed, err = io.ReadAll(r)
		return err
	})
	if want := strings.ReplaceAll(body, secret, fetch.Redacted); err != nil || string(replayed) != want {
		t.Fatalf("replayed %d bytes (%v), want %d", len(replayed), err, len(want))
	}
	if len(a.Misses()) != 0 {
		t.Errorf("misses %v", a.Misses())
	}

	// Damage the body: reading it to the end fails.
	e := a.Manifest.Entries[1]
	p := filepath.Join(dir, filepath.FromSlash(e.File))
	data, _ := os.ReadFile(p)
	broken, _ := fetch.Gunzip(data, 1<<30)
	broken[100] ^= 0x20
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(broken)
	zw.Close()
	os.WriteFile(p, zb.Bytes(), 0o644)
	rc, err := a.BodyReader(e)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("damaged body: err %v", err)
	}
}

// generated writes n lines of about 200 bytes without holding them.
func generated(n int) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriterSize(pw, 64<<10)
		for i := range n {
			fmt.Fprintf(w, `{"sku":"SKU%012d","attributes":{"instanceType":"g5.xlarge","location":"US East (Ohio)","tenancy":"Shared"},"price":"%d.006"}`+"\n", i, i%97)
		}
		pw.CloseWithError(w.Flush())
	}()
	return pr
}

// TestStreamEntryBoundedMemory records a body of tens of megabytes, with secrets to
// scrub, and checks that the heap does not grow with it.
func TestStreamEntryBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a large file")
	}
	dir := filepath.Join(t.TempDir(), "run")
	rec, err := Create(dir, "run-m", time.Now(), []string{secret, "another-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	obs := rec.Source("big", SourceInfo{}).(fetch.StreamObserver)
	src := generated(250000)
	defer src.Close()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	e := obs.ObserveStream(context.Background(), "GET", "https://example.test/offer.json", nil, 200, nil, time.Now())
	buf := make([]byte, 32<<10)
	var total int64
	for i := 0; ; i++ {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := e.Write(buf[:n]); werr != nil {
				t.Fatal(werr)
			}
			total += int64(n)
		}
		if i%64 == 0 {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > peak {
				peak = ms.HeapAlloc - base
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(nil); err != nil {
		t.Fatal(err)
	}
	if total < 30<<20 {
		t.Fatalf("generated only %d bytes", total)
	}
	if limit := uint64(total / 8); peak > limit {
		t.Errorf("heap grew by %d bytes while recording %d bytes (limit %d)", peak, total, limit)
	}
	m := rec.Manifest()
	if len(m.Entries) != 1 || int64(m.Entries[0].Bytes) != total {
		t.Fatalf("entries %+v", m.Entries)
	}
	t.Logf("recorded %d MB, peak heap growth %.1f MB", total>>20, float64(peak)/(1<<20))
}

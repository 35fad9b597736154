package archive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
)

// streamEntry writes one streamed body: scrubbed of the secrets, hashed, counted and
// gzip'd to a temporary file as it comes, renamed into place when the body is whole.
// Memory stays bounded whatever the body's size.
type streamEntry struct {
	r *Recorder
	e Entry

	mu     sync.Mutex
	tmp    *os.File
	bw     *bufio.Writer
	zw     *gzip.Writer
	sc     *scrubber
	h      hash.Hash
	n      int64
	err    error // the first write failure; the entry is then dropped
	closed bool
}

func (r *Recorder) stream(
	source, method, rawURL string,
	reqBody []byte,
	status int,
	header http.Header,
	at time.Time,
) fetch.StreamEntry {
	s := &streamEntry{r: r, e: r.entry(source, method, rawURL, reqBody, status, header, at), h: sha256.New()}
	tmp, err := os.CreateTemp(filepath.Join(r.dir, "responses"), ".tmp-*")
	if err != nil {
		s.err = fmt.Errorf("archive: %s: %w", s.e.File, err)
		return s
	}
	s.tmp = tmp
	s.bw = bufio.NewWriterSize(tmp, 256<<10)
	// Offer files are gigabytes: the fastest level keeps recording from slowing the
	// collection much, and still shrinks JSON several times.
	s.zw, _ = gzip.NewWriterLevel(s.bw, gzip.BestSpeed)
	s.sc = newScrubber(r.secrets, sinkFunc(func(p []byte) error {
		s.h.Write(p)
		s.n += int64(len(p))
		_, err := s.zw.Write(p)
		return err
	}))
	return s
}

// Write takes the next piece of the body. After a failure it takes nothing more and
// reports the failure (the entry is then dropped at Close).
func (s *streamEntry) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errors.New("archive: write to a closed entry")
	}
	if s.err != nil {
		return 0, s.err
	}
	if err := s.sc.Write(p); err != nil {
		s.err = fmt.Errorf("archive: %s: %w", s.e.File, err)
		return 0, s.err
	}
	return len(p), nil
}

// Close keeps the entry when the body is whole (err is nil) and nothing failed, and
// drops it otherwise. A failure to keep it is returned and also reported by the
// Recorder's Close.
func (s *streamEntry) Close(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err != nil || s.err != nil {
		s.discard()
		if s.err != nil {
			s.r.fail(s.err)
		}
		return s.err
	}
	if err := s.finish(); err != nil {
		s.discard()
		err = fmt.Errorf("archive: %s: %w", s.e.File, err)
		s.r.fail(err)
		return err
	}
	return nil
}

func (s *streamEntry) discard() {
	if s.tmp != nil {
		s.tmp.Close()
		os.Remove(s.tmp.Name())
	}
}

func (s *streamEntry) finish() error {
	if err := s.sc.Flush(); err != nil {
		return err
	}
	if err := s.zw.Close(); err != nil {
		return err
	}
	if err := s.bw.Flush(); err != nil {
		return err
	}
	if err := s.tmp.Sync(); err != nil {
		return err
	}
	if err := s.tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(s.tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(s.tmp.Name(), filepath.Join(s.r.dir, s.e.File)); err != nil {
		return err
	}
	s.e.BodySHA256, s.e.Bytes = hex.EncodeToString(s.h.Sum(nil)), int(s.n)
	meta, err := json.MarshalIndent(s.e, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(s.r.dir, strings.TrimSuffix(s.e.File, ".gz")+".json"), meta); err != nil {
		return err
	}
	s.r.add(s.e)
	return nil
}

type sinkFunc func([]byte) error

// scrubber replaces the secrets in a stream by REDACTED, as Recorder.scrub does in a
// whole body: it holds back the last len(longest secret)−1 bytes, which may be the
// start of a secret cut by a write boundary.
type scrubber struct {
	secrets [][]byte
	keep    int
	buf     []byte
	out     sinkFunc
}

func newScrubber(secrets []string, out sinkFunc) *scrubber {
	s := &scrubber{out: out}
	for _, v := range secrets {
		s.secrets = append(s.secrets, []byte(v))
		s.keep = max(s.keep, len(v)-1)
	}
	return s
}

func (s *scrubber) Write(p []byte) error {
	if len(s.secrets) == 0 {
		return s.out(p)
	}
	s.buf = append(s.buf, p...)
	for _, v := range s.secrets {
		if bytes.Contains(s.buf, v) {
			s.buf = bytes.ReplaceAll(s.buf, v, []byte(fetch.Redacted))
		}
	}
	if n := len(s.buf) - s.keep; n > 0 {
		if err := s.out(s.buf[:n]); err != nil {
			return err
		}
		s.buf = s.buf[:copy(s.buf, s.buf[n:])]
	}
	return nil
}

// Flush writes what was held back.
func (s *scrubber) Flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	err := s.out(s.buf)
	s.buf = s.buf[:0]
	return err
}

// BodyReader streams an entry's body from its file, decompressing as it is read; at
// the end of the body its length and SHA-256 are checked, and a mismatch is returned
// in place of io.EOF. Nothing is held: bodies of gigabytes are served this way.
func (a *Archive) BodyReader(e Entry) (io.ReadCloser, error) {
	f, err := os.Open(filepath.Join(a.Dir, filepath.FromSlash(e.File)))
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	zr, err := gzip.NewReader(bufio.NewReaderSize(f, 256<<10))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("archive: %s: %w", e.File, err)
	}
	return &checkedBody{f: f, zr: zr, e: e, h: sha256.New()}, nil
}

type checkedBody struct {
	f  *os.File
	zr *gzip.Reader
	e  Entry
	h  hash.Hash
	n  int64
}

func (c *checkedBody) Read(p []byte) (int, error) {
	n, err := c.zr.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	if c.n > int64(c.e.Bytes) {
		return n, fmt.Errorf("archive: %s: body longer than the %d bytes recorded", c.e.File, c.e.Bytes)
	}
	switch {
	case err == io.EOF && (c.n != int64(c.e.Bytes) || hex.EncodeToString(c.h.Sum(nil)) != c.e.BodySHA256):
		return n, fmt.Errorf("archive: %s: checksum mismatch", c.e.File)
	case err != nil && err != io.EOF:
		return n, fmt.Errorf("archive: %s: %w", c.e.File, err)
	}
	return n, err
}

func (c *checkedBody) Close() error {
	c.zr.Close()
	return c.f.Close()
}

package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Spool errors.
var (
	ErrSpoolFull    = errors.New("ingest: spool is full")
	ErrSpoolCorrupt = errors.New("ingest: spool segment is corrupt")
)

// DirSpool is a bounded on-disk spool: one gzip'd JSON segment per batch, named so
// that names sort in write order, each with a SHA-256 of its content, written to a
// temporary file, synced and renamed into place (a crash never leaves half a segment).
type DirSpool struct {
	Dir      string
	MaxBytes int64 // total size bound; 0 means 1 GiB

	mu  sync.Mutex
	seq int
}

type segment struct {
	Checksum string                `json:"sha256"`
	Rows     []schemas.Observation `json:"rows"`
}

// SpoolStatus describes what waits in a spool.
type SpoolStatus struct {
	Dir      string
	Segments int
	Rows     int
	Bytes    int64
	Oldest   time.Time
	Corrupt  []string
}

func rowsChecksum(rows []schemas.Observation) (string, []byte, error) {
	data, err := json.Marshal(rows)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), data, nil
}

func (s *DirSpool) max() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return 1 << 30
}

// Spool writes a batch durably. It fails with ErrSpoolFull rather than grow past MaxBytes.
func (s *DirSpool) Spool(_ context.Context, rows []schemas.Observation) error {
	if len(rows) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	sum, _, err := rowsChecksum(rows)
	if err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(segment{Checksum: sum, Rows: rows}); err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	used, err := s.usedBytes()
	if err != nil {
		return err
	}
	if used+int64(buf.Len()) > s.max() {
		return fmt.Errorf("%w: %d bytes used of %d, batch of %d rows not taken", ErrSpoolFull, used, s.max(), len(rows))
	}
	s.seq++
	name := fmt.Sprintf("%020d-%06d.seg.gz", time.Now().UnixNano(), s.seq)
	tmp, err := os.CreateTemp(s.Dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("ingest: spool: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("ingest: spool: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.Dir, name)); err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	if d, err := os.Open(s.Dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

func (s *DirSpool) segments() ([]string, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: spool: %w", err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".seg.gz") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s *DirSpool) usedBytes() (int64, error) {
	names, err := s.segments()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, name := range names {
		if fi, err := os.Stat(filepath.Join(s.Dir, name)); err == nil {
			n += fi.Size()
		}
	}
	return n, nil
}

func readSegment(path string) ([]schemas.Observation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSpoolCorrupt, filepath.Base(path), err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, 4<<30))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSpoolCorrupt, filepath.Base(path), err)
	}
	var seg segment
	if err := json.Unmarshal(data, &seg); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSpoolCorrupt, filepath.Base(path), err)
	}
	sum, _, err := rowsChecksum(seg.Rows)
	if err != nil || sum != seg.Checksum {
		return nil, fmt.Errorf("%w: %s: checksum mismatch", ErrSpoolCorrupt, filepath.Base(path))
	}
	return seg.Rows, nil
}

// Status reads the spool without changing it.
func (s *DirSpool) Status() (SpoolStatus, error) {
	st := SpoolStatus{Dir: s.Dir}
	names, err := s.segments()
	if err != nil {
		return st, err
	}
	for _, name := range names {
		p := filepath.Join(s.Dir, name)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		st.Bytes += fi.Size()
		rows, err := readSegment(p)
		if err != nil {
			st.Corrupt = append(st.Corrupt, name)
			continue
		}
		st.Segments++
		st.Rows += len(rows)
		if st.Oldest.IsZero() || fi.ModTime().Before(st.Oldest) {
			st.Oldest = fi.ModTime()
		}
	}
	return st, nil
}

// Replay writes every segment to w in write order, removing each once stored. It stops
// at the first write error (the segment stays for the next replay). Corrupt segments
// are moved aside to <dir>/corrupt/ and reported, never deleted. Replaying twice is
// harmless: the store keeps one row per observation identity.
func (s *DirSpool) Replay(ctx context.Context, w store.Writer) (rows int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, err := s.segments()
	if err != nil {
		return 0, err
	}
	var corrupt []error
	for _, name := range names {
		p := filepath.Join(s.Dir, name)
		batch, rerr := readSegment(p)
		if rerr != nil {
			_ = os.MkdirAll(filepath.Join(s.Dir, "corrupt"), 0o700)
			_ = os.Rename(p, filepath.Join(s.Dir, "corrupt", name))
			corrupt = append(corrupt, rerr)
			continue
		}
		if werr := w.WriteObservations(ctx, batch); werr != nil {
			return rows, errors.Join(append(corrupt, fmt.Errorf("ingest: replaying %s: %w", name, werr))...)
		}
		if rerr := os.Remove(p); rerr != nil {
			return rows, fmt.Errorf("ingest: spool: %w", rerr)
		}
		rows += len(batch)
	}
	return rows, errors.Join(corrupt...)
}

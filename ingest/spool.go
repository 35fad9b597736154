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
	"strconv"
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

	countMu sync.Mutex
	counts  map[string]int // rows of segments named without their count (older spools)
}

type segment struct {
	Checksum   string                `json:"sha256"`
	Rows       []schemas.Observation `json:"rows"`
	Quarantine []schemas.Quarantined `json:"quarantine,omitempty"`
	Runs       []schemas.Run         `json:"runs,omitempty"`
}

// checksum is the SHA-256 of the segment's content: of its rows alone when it holds
// nothing else (the format of segments written before quarantine and runs could be
// spooled), else of rows, quarantine and runs together.
func (g segment) checksum() (string, error) {
	if len(g.Quarantine) == 0 && len(g.Runs) == 0 {
		sum, _, err := rowsChecksum(g.Rows)
		return sum, err
	}
	data, err := json.Marshal(struct {
		Rows       []schemas.Observation `json:"rows"`
		Quarantine []schemas.Quarantined `json:"quarantine"`
		Runs       []schemas.Run         `json:"runs"`
	}{g.Rows, g.Quarantine, g.Runs})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// SpoolStatus describes what waits in a spool.
type SpoolStatus struct {
	Dir        string
	Segments   int
	Rows       int
	Quarantine int // quarantined rows waiting
	Runs       int // run records waiting
	Bytes      int64
	Oldest     time.Time
	Corrupt    []string
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
	return s.write(segment{Rows: rows}, fmt.Sprintf("batch of %d rows", len(rows)))
}

// SpoolQuarantine keeps quarantined rows the store could not take, like Spool.
func (s *DirSpool) SpoolQuarantine(_ context.Context, q []schemas.Quarantined) error {
	if len(q) == 0 {
		return nil
	}
	return s.write(segment{Quarantine: q}, fmt.Sprintf("%d quarantined rows", len(q)))
}

// SpoolRun keeps a run record the store could not take, like Spool.
func (s *DirSpool) SpoolRun(_ context.Context, r schemas.Run) error {
	return s.write(segment{Runs: []schemas.Run{r}}, "run record "+r.RunID+"/"+r.Source)
}

func (s *DirSpool) write(seg segment, what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	seg, err := canonical(seg)
	if err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	sum, err := seg.checksum()
	if err != nil {
		return fmt.Errorf("ingest: spool: %w", err)
	}
	seg.Checksum = sum
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(seg); err != nil {
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
		return fmt.Errorf("%w: %d bytes used of %d, %s not taken", ErrSpoolFull, used, s.max(), what)
	}
	s.seq++
	// The row count is in the name, so that Rows counts without reading segments.
	name := fmt.Sprintf("%020d-%06d-r%d.seg.gz", time.Now().UnixNano(), s.seq, len(seg.Rows))
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

// canonical returns seg as it reads back from its JSON: text that is not valid
// UTF-8 is written as U+FFFD, so a segment holding some (a provider's answer quoted
// in an error, a row spooled without checks) is checksummed as it will be read, not
// as it was given, and replays instead of reading as corrupt.
func canonical(seg segment) (segment, error) {
	data, err := json.Marshal(seg)
	if err != nil || !bytes.Contains(data, []byte(`\ufffd`)) {
		return seg, err
	}
	var out segment
	err = json.Unmarshal(data, &out)
	return out, err
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

func readSegment(path string) (segment, error) {
	var seg segment
	f, err := os.Open(path)
	if err != nil {
		return seg, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return seg, fmt.Errorf("%w: %s: %v", ErrSpoolCorrupt, filepath.Base(path), err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, 4<<30))
	if err != nil {
		return seg, fmt.Errorf("%w: %s: %v", ErrSpoolCorrupt, filepath.Base(path), err)
	}
	if err := json.Unmarshal(data, &seg); err != nil {
		return seg, fmt.Errorf("%w: %s: %v", ErrSpoolCorrupt, filepath.Base(path), err)
	}
	sum, err := seg.checksum()
	if err != nil || sum != seg.Checksum {
		return seg, fmt.Errorf("%w: %s: checksum mismatch", ErrSpoolCorrupt, filepath.Base(path))
	}
	return seg, nil
}

// Rows returns how many observations wait in the spool, from the segments' names
// (a directory listing, not a read of every segment: a metrics scrape during a long
// outage stays cheap). A segment named without its count (written by an older
// version) is read once and its count kept.
func (s *DirSpool) Rows() (int, error) {
	names, err := s.segments()
	if err != nil {
		return 0, err
	}
	s.countMu.Lock()
	defer s.countMu.Unlock()
	n := 0
	for _, name := range names {
		if c, ok := rowsInName(name); ok {
			n += c
			continue
		}
		c, ok := s.counts[name]
		if !ok {
			seg, err := readSegment(filepath.Join(s.Dir, name))
			if err != nil {
				continue // corrupt: replay moves it aside
			}
			if s.counts == nil {
				s.counts = map[string]int{}
			}
			c = len(seg.Rows)
			s.counts[name] = c
		}
		n += c
	}
	return n, nil
}

// rowsInName is the row count a segment's name carries ("…-r<rows>.seg.gz").
func rowsInName(name string) (int, bool) {
	base := strings.TrimSuffix(name, ".seg.gz")
	i := strings.LastIndex(base, "-r")
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(base[i+2:])
	return n, err == nil && n >= 0
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
		seg, err := readSegment(p)
		if err != nil {
			st.Corrupt = append(st.Corrupt, name)
			continue
		}
		st.Segments++
		st.Rows += len(seg.Rows)
		st.Quarantine += len(seg.Quarantine)
		st.Runs += len(seg.Runs)
		if st.Oldest.IsZero() || fi.ModTime().Before(st.Oldest) {
			st.Oldest = fi.ModTime()
		}
	}
	return st, nil
}

// RecordWriter is the part of a store that takes quarantined rows and run records;
// Replay needs it for segments that hold them.
type RecordWriter interface {
	WriteQuarantine(ctx context.Context, q []schemas.Quarantined) error
	WriteRun(ctx context.Context, r schemas.Run) error
}

// Replay writes every segment to w in write order, removing each once stored. It stops
// at the first write the store could not take because it is unavailable (the segment
// stays for the next replay). A poison segment never jams the spool: rows no store
// may hold (Storable) are quarantined without a write, rows the store refuses on
// their own are found by splitting the segment's batch and quarantined with the
// store's error (the others are written), and a segment whose content
// cannot be stored at all (no quarantine writer, a record refused) is moved aside to
// <dir>/corrupt/ with a <name>.reason file, as unreadable segments are: never
// deleted. Run records' text is made storable (ingest.storableRun) on the way.
// Replaying twice is harmless for observations and run records: the store
// keeps one of each identity. It returns the observations written.
func (s *DirSpool) Replay(ctx context.Context, w store.Writer) (rows int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	names, err := s.segments()
	if err != nil {
		return 0, err
	}
	rw, records := w.(RecordWriter)
	var problems []error
	aside := func(name string, why error) {
		problems = append(problems, why)
		dir := filepath.Join(s.Dir, "corrupt")
		_ = os.MkdirAll(dir, 0o700)
		_ = os.Rename(filepath.Join(s.Dir, name), filepath.Join(dir, name))
		_ = os.WriteFile(filepath.Join(dir, name+".reason"), []byte(why.Error()+"\n"), 0o600)
	}
	unavailable := func(err error) bool { return errors.Is(err, store.ErrUnavailable) || ctx.Err() != nil }
	for _, name := range names {
		p := filepath.Join(s.Dir, name)
		seg, rerr := readSegment(p)
		if rerr != nil {
			aside(name, rerr)
			continue
		}
		fail := func(werr error) (int, error) {
			return rows, errors.Join(append(problems, fmt.Errorf("ingest: replaying %s: %w", name, werr))...)
		}
		if (len(seg.Quarantine) > 0 || len(seg.Runs) > 0) && !records {
			return fail(errors.New("the writer cannot store quarantined rows or run records"))
		}
		written := 0
		quarantine := seg.Quarantine
		if len(seg.Rows) > 0 {
			// Rows no store may hold (Storable) are quarantined without a write, as
			// at ingest: a spool written by an older release, or edited, gets the same
			// treatment on every store, not only on the one that happens to refuse.
			rows, screened := screenStorable(seg.Rows, time.Now())
			sp := writeSplit(ctx, w, rows)
			if sp.err != nil {
				// Part of the segment may be stored: replaying it again is harmless.
				return fail(sp.err)
			}
			sp.bad = append(screened, sp.bad...)
			if len(sp.bad) > 0 && !records {
				// Nowhere to quarantine them: the segment stays for a replay that can.
				return fail(fmt.Errorf("%d rows refused and no quarantine to put them in: %w", len(sp.bad), sp.bad[0].Err))
			}
			for _, b := range sp.bad {
				raw, _ := json.Marshal(b.Row)
				quarantine = append(quarantine, schemas.Quarantined{QuarantinedAt: time.Now().UTC().Truncate(time.Second),
					RunID: b.Row.RunID, Source: b.Row.Provider, Reason: "spool replay: " + b.Reason, Raw: string(raw)})
			}
			written = sp.stored
		}
		if len(quarantine) > 0 {
			for i := range quarantine {
				quarantine[i] = storableQuarantine(quarantine[i])
			}
			if werr := rw.WriteQuarantine(ctx, quarantine); werr != nil {
				if unavailable(werr) {
					return fail(werr)
				}
				aside(name, fmt.Errorf("ingest: replaying %s: quarantined rows refused: %w", name, werr))
				rows += written
				continue
			}
		}
		refused := false
		for _, r := range seg.Runs {
			if werr := rw.WriteRun(ctx, storableRun(r)); werr != nil {
				if unavailable(werr) {
					return fail(werr)
				}
				aside(name, fmt.Errorf("ingest: replaying %s: run record refused: %w", name, werr))
				refused = true
				break
			}
		}
		rows += written
		if refused {
			continue
		}
		if rerr := os.Remove(p); rerr != nil {
			return rows, fmt.Errorf("ingest: spool: %w", rerr)
		}
	}
	return rows, errors.Join(problems...)
}

// SpoolingSink is a Sink that keeps quarantined rows and run records on Spool when
// the store is unavailable (store.ErrUnavailable), so that an outage loses neither;
// Replay writes them later. Observations are spooled by the Batcher.
type SpoolingSink struct {
	Sink
	Spool *DirSpool
}

// Unwrap returns the sink it wraps (for store.WriteBatchSize).
func (s SpoolingSink) Unwrap() store.Writer { return s.Sink }

// WriteQuarantine writes q to the store, or to the spool when the store is unavailable.
func (s SpoolingSink) WriteQuarantine(ctx context.Context, q []schemas.Quarantined) error {
	err := s.Sink.WriteQuarantine(ctx, q)
	if err == nil || !errors.Is(err, store.ErrUnavailable) || s.Spool == nil {
		return err
	}
	if serr := s.Spool.SpoolQuarantine(ctx, q); serr != nil {
		return errors.Join(err, fmt.Errorf("ingest: spooling quarantine: %w", serr))
	}
	return nil
}

// WriteRun writes r to the store, or to the spool when the store is unavailable.
// A started record (a run's journal) is not spooled: replayed after the run's final
// record, it would replace it.
func (s SpoolingSink) WriteRun(ctx context.Context, r schemas.Run) error {
	err := s.Sink.WriteRun(ctx, r)
	if err == nil || !errors.Is(err, store.ErrUnavailable) || s.Spool == nil || r.Status == schemas.RunStarted {
		return err
	}
	if serr := s.Spool.SpoolRun(ctx, r); serr != nil {
		return errors.Join(err, fmt.Errorf("ingest: spooling run record: %w", serr))
	}
	return nil
}

package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuprice/gpuprice/ingest/fetch"
)

// MaxEntryBytes bounds one archived body when it is read back (1 GiB).
const MaxEntryBytes = 1 << 30

// Archive is a recorded archive opened for replay.
type Archive struct {
	Dir      string
	Manifest Manifest

	mu     sync.Mutex
	byKey  map[string][]Entry
	served map[string]int
	misses []string
	// provRows counts a recorded example's rows by the provenance of their
	// response (ProvenanceRows).
	provRows map[string]int
}

// Open reads the archive in dir. Entries come from the per-response files, so an
// archive whose recording was cut short (its manifest not rewritten) still opens.
func Open(dir string) (*Archive, error) {
	a := &Archive{Dir: dir, byKey: map[string][]Entry{}, served: map[string]int{}}
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s has no %s", ErrNotArchive, dir, ManifestName)
		}
		return nil, fmt.Errorf("archive: %w", err)
	}
	if err := json.Unmarshal(data, &a.Manifest); err != nil {
		return nil, fmt.Errorf("archive: %s: %w", ManifestName, err)
	}
	if a.Manifest.Version != FormatVersion {
		return nil, fmt.Errorf(
			"archive: %s: format version %d, this gpuprice reads %d",
			dir,
			a.Manifest.Version,
			FormatVersion,
		)
	}
	metas, err := filepath.Glob(filepath.Join(dir, "responses", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	sort.Strings(metas)
	entries := make([]Entry, 0, len(metas))
	for _, p := range metas {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		var e Entry
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("archive: %s: %w", filepath.Base(p), err)
		}
		if e.File == "" || strings.Contains(e.File, "..") || filepath.IsAbs(e.File) {
			return nil, fmt.Errorf("archive: %s: bad body file %q", filepath.Base(p), e.File)
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Seq < entries[j].Seq })
	a.Manifest.Entries = entries
	for _, e := range entries {
		a.byKey[e.Key] = append(a.byKey[e.Key], e)
	}
	return a, nil
}

// Body reads and checks an entry's body (at most MaxEntryBytes; BodyReader streams
// one of any size).
func (a *Archive) Body(e Entry) ([]byte, error) {
	rc, err := a.BodyReader(e)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	body, err := io.ReadAll(io.LimitReader(rc, MaxEntryBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxEntryBytes {
		return nil, fmt.Errorf("archive: %s: body exceeds %d bytes", e.File, MaxEntryBytes)
	}
	return body, nil
}

// Misses lists the requests replay could not answer ("METHOD URL"), in order.
func (a *Archive) Misses() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.misses...)
}

// RoundTrip answers a request from the archive: responses recorded for the same
// method, URL and body are served in the order they were recorded (a retried request
// sees the failure, then the success), the last one again once they run out. Request
// headers play no part, so a signed request (AWS SigV4 signs the time) matches its
// recording. A body is streamed from its file, checked at its end (BodyReader). A
// request not in the archive gets 404 and is listed by Misses. No network is used.
func (a *Archive) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("archive: reading request body: %w", err)
		}
	}
	key := RequestKey(req.Method, req.URL.String(), body)
	a.mu.Lock()
	list := a.byKey[key]
	if len(list) == 0 {
		a.misses = append(a.misses, req.Method+" "+redactedURL(req))
		a.mu.Unlock()
		return response(
			req,
			http.StatusNotFound,
			http.Header{"Content-Type": {"text/plain"}},
			[]byte("gpuprice archive: not recorded\n"),
		), nil
	}
	i := min(a.served[key], len(list)-1)
	a.served[key]++
	e := list[i]
	a.mu.Unlock()
	rc, err := a.BodyReader(e)
	if err != nil {
		return nil, err
	}
	hdr := e.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Del("Content-Encoding") // bodies are archived decoded
	hdr.Set("Content-Length", strconv.Itoa(e.Bytes))
	resp := response(req, e.Status, hdr, nil)
	resp.Body, resp.ContentLength = rc, int64(e.Bytes)
	return resp, nil
}

func redactedURL(req *http.Request) string {
	return fetch.RedactURL(req.URL.String())
}

func response(req *http.Request, status int, hdr http.Header, body []byte) *http.Response {
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: hdr,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}
}

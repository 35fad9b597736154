// Package archive keeps the raw provider responses of a collection, so that prices
// can be rebuilt after a parser fix (`gpuprice collect --record DIR`, then
// `gpuprice reparse DIR`), and uploads an archive to S3 when configured.
// The long story (modes, rules, limits) is in its README.md.
package archive

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
)

// ManifestName is the archive's index file.
const ManifestName = "manifest.json"

// FormatVersion is the version of the archive layout written here.
const FormatVersion = 1

// ErrNotArchive is returned by Open for a directory without a manifest or entries.
var ErrNotArchive = errors.New("archive: not an archive")

// Entry describes one archived response.
type Entry struct {
	Seq         int         `json:"seq"`
	Source      string      `json:"source"`
	Method      string      `json:"method"`
	URL         string      `json:"url"` // credentials redacted
	Status      int         `json:"status"`
	Header      http.Header `json:"header"` // credential headers redacted
	RequestBody []byte      `json:"request_body,omitempty"`
	At          time.Time   `json:"at"`
	File        string      `json:"file"` // the gzip'd body, relative to the archive
	BodySHA256  string      `json:"body_sha256"`
	Bytes       int         `json:"bytes"`
	// Key identifies the request for replay: a SHA-256 of the method, the redacted URL
	// and the request body as sent.
	Key string `json:"key"`
	// Provenance says what the body is when it is not a provider's answer to this
	// deployment ("" for a collection's archive): a recorded example's responses
	// are ProvenanceVerbatim, ProvenanceRetyped or ProvenanceConstructed, with a
	// note saying which parts are real and where they come from.
	Provenance     string `json:"provenance,omitempty"`
	ProvenanceNote string `json:"provenance_note,omitempty"`
}

// The provenance of a recorded example's response (Entry.Provenance), from the most
// to the least faithful. A response is given the least faithful kind any of its
// priced content has.
const (
	// ProvenanceVerbatim: a real response of the provider, as a public recording
	// kept it (possibly cut to its GPU items), byte for byte.
	ProvenanceVerbatim = schemas.ProvenanceVerbatim
	// ProvenanceRetyped: copied by hand from a page or response the provider
	// published (its markup and values as published, possibly with slips), inside a
	// page skeleton written for the fixture.
	ProvenanceRetyped = schemas.ProvenanceRetyped
	// ProvenanceConstructed: built in the provider's real format from a real
	// excerpt, with values that are partly or wholly illustrative: not the
	// provider's prices.
	ProvenanceConstructed = schemas.ProvenanceConstructed
)

// SourceInfo is what a source ran with.
type SourceInfo struct {
	// ObservedAt is the time the source stamped on its rows; reparse uses it again so
	// that rebuilt rows replace the recorded run's rows instead of adding to them.
	ObservedAt time.Time      `json:"observed_at"`
	Endpoint   string         `json:"endpoint,omitempty"`
	Options    map[string]any `json:"options,omitempty"`
	// ExpectRows, when set, is the source's coverage guard on reparse in place of
	// its live one (scrapers.Expecter): the rows it gave when a recorded example
	// was built. A live guard expects a provider's whole catalog, which a few test
	// fixtures never are.
	ExpectRows int `json:"expect_rows,omitempty"`
}

// FXSource is the archive's name for the ECB reference rates the collection
// fetched: not a price source (reparse takes its rates from it, never runs it).
const FXSource = "fx"

// OriginRecorded is Manifest.Origin of a recorded example: responses built from
// the sources' test fixtures (examples/recorded), not a provider's answer to this
// deployment. Every row reparse stores from it carries the attribute
// schemas.AttrOrigin = OriginRecorded, so that no output shows it as a current price.
const OriginRecorded = schemas.OriginRecorded

// Manifest is the archive's index.
type Manifest struct {
	Version    int                   `json:"version"`
	RunID      string                `json:"run_id"`
	StartedAt  time.Time             `json:"started_at"`
	FinishedAt time.Time             `json:"finished_at"`
	Sources    map[string]SourceInfo `json:"sources"`
	// Origin is "" for the archive of a collection, OriginRecorded for a recorded
	// example.
	Origin  string  `json:"origin,omitempty"`
	Entries []Entry `json:"entries"`
}

// RequestKey is the replay key of a request.
func RequestKey(method, rawURL string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(strings.ToUpper(method) + "\n" + fetch.RedactURL(rawURL) + "\n"))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Recorder writes an archive. It is safe for concurrent use.
type Recorder struct {
	dir        string
	secrets    []string
	provenance func(method, rawURL string) (kind, note string)

	mu       sync.Mutex
	seq      int // the last entry number given out
	manifest Manifest
	errs     []error
}

// Create starts an archive in dir (created if missing; it must not hold an archive
// already). secrets are values replaced by REDACTED wherever they appear in what is
// archived (URLs, headers, request and response bodies), on top of the redaction of
// credential headers and query parameters.
func Create(dir, runID string, started time.Time, secrets []string) (*Recorder, error) {
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		return nil, fmt.Errorf("archive: %s already holds an archive; record into a new directory", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "responses"), 0o755); err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	var keep []string
	for _, s := range secrets {
		if s != "" {
			keep = append(keep, s)
		}
	}
	r := &Recorder{dir: dir, secrets: keep, manifest: Manifest{
		Version: FormatVersion, RunID: runID, StartedAt: started.UTC(), Sources: map[string]SourceInfo{},
	}}
	return r, r.writeManifest()
}

// Dir is the archive's directory.
func (r *Recorder) Dir() string { return r.dir }

// Source registers a source and returns the fetch.Observer its client reports to. It
// is also a fetch.StreamObserver: a streamed body (fetch.Client.Stream) is compressed
// to its file as it is read, never held.
func (r *Recorder) Source(name string, info SourceInfo) fetch.Observer {
	r.mu.Lock()
	defer r.mu.Unlock()
	info.ObservedAt = info.ObservedAt.UTC()
	// An endpoint of the configuration may hold credentials (user:pass@, ?api_key=):
	// the manifest keeps it redacted, and replay keys requests by redacted URLs.
	info.Endpoint = r.scrubString(schemas.RedactText(info.Endpoint))
	r.manifest.Sources[name] = info
	return observer{r: r, source: name}
}

type observer struct {
	r      *Recorder
	source string
}

// Observe implements fetch.Observer.
func (o observer) Observe(
	_ context.Context,
	method, rawURL string,
	reqBody []byte,
	resp *fetch.Response,
	at time.Time,
) {
	o.r.record(o.source, method, rawURL, reqBody, resp, at)
}

// ObserveStream implements fetch.StreamObserver.
func (o observer) ObserveStream(
	_ context.Context,
	method, rawURL string,
	reqBody []byte,
	status int,
	header http.Header,
	at time.Time,
) fetch.StreamEntry {
	return o.r.stream(o.source, method, rawURL, reqBody, status, header, at)
}

func (r *Recorder) scrub(b []byte) []byte {
	for _, s := range r.secrets {
		if bytes.Contains(b, []byte(s)) {
			b = bytes.ReplaceAll(b, []byte(s), []byte(fetch.Redacted))
		}
	}
	return b
}

func (r *Recorder) scrubString(s string) string { return string(r.scrub([]byte(s))) }

// entry numbers a new entry and fills in what is known before its body: the request
// and the response's status and headers, redacted.
func (r *Recorder) entry(
	source, method, rawURL string,
	reqBody []byte,
	status int,
	header http.Header,
	at time.Time,
) Entry {
	hdr := fetch.RedactHeader(header)
	for k, vs := range hdr {
		for i := range vs {
			vs[i] = r.scrubString(vs[i])
		}
		hdr[k] = vs
	}
	r.mu.Lock()
	r.seq++
	seq := r.seq
	r.mu.Unlock()
	e := Entry{
		Seq: seq, Source: source, Method: strings.ToUpper(method), URL: r.scrubString(fetch.RedactURL(rawURL)),
		Status: status, Header: hdr, At: at.UTC(), File: fmt.Sprintf("responses/%06d.gz", seq),
		Key: RequestKey(method, rawURL, reqBody),
	}
	if len(reqBody) > 0 {
		e.RequestBody = r.scrub(bytes.Clone(reqBody))
	}
	r.mu.Lock()
	prov := r.provenance
	r.mu.Unlock()
	if prov != nil {
		e.Provenance, e.ProvenanceNote = prov(e.Method, e.URL)
	}
	return e
}

func (r *Recorder) record(source, method, rawURL string, reqBody []byte, resp *fetch.Response, at time.Time) {
	body := r.scrub(bytes.Clone(resp.Body))
	e := r.entry(source, method, rawURL, reqBody, resp.Status, resp.Header, at)
	sum := sha256.Sum256(body)
	e.BodySHA256, e.Bytes = hex.EncodeToString(sum[:]), len(body)
	r.add(e)

	if err := r.writeEntry(e, body); err != nil {
		r.fail(err)
	}
}

// add lists e in the manifest, in entry number order.
func (r *Recorder) add(e Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	es := r.manifest.Entries
	i := len(es)
	for i > 0 && es[i-1].Seq > e.Seq {
		i--
	}
	r.manifest.Entries = slices.Insert(es, i, e)
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
}

func (r *Recorder) writeEntry(e Entry, body []byte) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(body); err != nil {
		return fmt.Errorf("archive: %s: %w", e.File, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("archive: %s: %w", e.File, err)
	}
	if err := writeFile(filepath.Join(r.dir, e.File), buf.Bytes()); err != nil {
		return err
	}
	meta, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	return writeFile(filepath.Join(r.dir, strings.TrimSuffix(e.File, ".gz")+".json"), meta)
}

// Close writes the manifest and returns the errors met while recording.
func (r *Recorder) Close(finished time.Time) error {
	r.mu.Lock()
	r.manifest.FinishedAt = finished.UTC()
	r.mu.Unlock()
	err := r.writeManifest()
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(append(r.errs, err)...)
}

// SetOrigin sets Manifest.Origin (OriginRecorded for a recorded example).
func (r *Recorder) SetOrigin(origin string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.manifest.Origin = origin
}

// SetProvenance gives every response recorded from now on the provenance f returns
// for its method and redacted URL (Entry.Provenance): a recorded example built from
// test fixtures says, response by response, which are verbatim captures and which
// were re-typed or constructed.
func (r *Recorder) SetProvenance(f func(method, rawURL string) (kind, note string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.provenance = f
}

// SetExpectRows sets a recorded source's SourceInfo.ExpectRows.
func (r *Recorder) SetExpectRows(name string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	info := r.manifest.Sources[name]
	info.ExpectRows = n
	r.manifest.Sources[name] = info
}

// Manifest returns a copy of what has been recorded so far.
func (r *Recorder) Manifest() Manifest {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.manifest
	m.Entries = append([]Entry(nil), m.Entries...)
	return m
}

func (r *Recorder) writeManifest() error {
	r.mu.Lock()
	data, err := json.MarshalIndent(r.manifest, "", "  ")
	r.mu.Unlock()
	if err != nil {
		return fmt.Errorf("archive: manifest: %w", err)
	}
	// The whole manifest passes the redaction of the logs (sources' options too), so
	// that neither the archive nor its upload (archive.s3) keeps a secret.
	data = r.scrub([]byte(schemas.RedactText(string(data))))
	return writeFile(filepath.Join(r.dir, ManifestName), data)
}

// writeFile writes data to path durably: a temporary file, synced, renamed.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("archive: %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("archive: %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("archive: %s: %w", filepath.Base(path), err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	return nil
}

package archive

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// Jobs refuses what it cannot rebuild: an archive of no source, a source not in it,
// a source no longer known.
func TestJobsErrors(t *testing.T) {
	observed := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	empty := filepath.Join(t.TempDir(), "empty")
	rec, err := Create(empty, "run-1", observed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(observed); err != nil {
		t.Fatal(err)
	}
	a, err := Open(empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Jobs(nil, JobOptions{}); err == nil || !strings.Contains(err.Error(), "records no source") {
		t.Errorf("empty archive: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "gone")
	rec, err = Create(dir, "run-2", observed, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.Source("retired-provider", SourceInfo{ObservedAt: observed, Endpoint: "https://retired.example/prices"})
	if err := rec.Close(observed); err != nil {
		t.Fatal(err)
	}
	if a, err = Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Jobs([]string{"azure"}, JobOptions{}); err == nil || !strings.Contains(err.Error(), "source azure is not in the archive (it has: retired-provider)") {
		t.Errorf("--source azure: %v", err)
	}
	if jobs, err := a.Jobs(nil, JobOptions{}); err == nil || len(jobs) != 0 || !strings.Contains(err.Error(), "retired-provider is not a known source") {
		t.Errorf("unknown source: %d jobs, %v", len(jobs), err)
	}
}

// A recorded example says, response by response, what each body is; reparse marks
// every row with the provenance of the response its source_url names and counts the
// rows of each kind.
func TestRecordedProvenance(t *testing.T) {
	srv := provider(t)
	observed := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "example")
	rec, err := Create(dir, "example", observed, []string{secret})
	if err != nil {
		t.Fatal(err)
	}
	rec.SetOrigin(OriginRecorded)
	rec.SetProvenance(func(method, rawURL string) (string, string) {
		if strings.Contains(rawURL, "page=1") {
			return ProvenanceVerbatim, "a capture"
		}
		if strings.Contains(rawURL, "page=2") {
			return ProvenanceConstructed, "made up"
		}
		return "", ""
	})
	c := client(nil)
	c.Observer = rec.Source("demo", SourceInfo{ObservedAt: observed})
	requests(t, c, srv.URL)
	if err := rec.Close(observed); err != nil {
		t.Fatal(err)
	}
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range a.Manifest.Entries {
		got[e.URL] = e.Provenance + "/" + e.ProvenanceNote
	}
	page1, page2 := srv.URL+"/prices?page=1", srv.URL+"/prices?page=2&api_key="+secret
	if got[page1] != "verbatim/a capture" || got[fetch.RedactURL(page2)] != "constructed/made up" || got[srv.URL+"/flaky"] != "/" {
		t.Fatalf("entries' provenance: %v", got)
	}

	var rows []schemas.Observation
	e := originEmitter{e: scrapers.EmitterFunc(func(o schemas.Observation) { rows = append(rows, o) }),
		origin: OriginRecorded, prov: a.provenanceByURL(), count: a.countProvenance}
	for _, u := range []string{page1, page2, page2, srv.URL + "/elsewhere"} {
		e.Emit(schemas.Observation{SourceURL: u, PriceNative: 1})
	}
	e.Emit(schemas.Observation{SourceURL: page1, Attrs: map[string]string{"price_text": "Contact sales"}}) // left out
	if len(rows) != 4 || rows[0].Attrs[schemas.AttrProvenance] != ProvenanceVerbatim ||
		rows[2].Attrs[schemas.AttrProvenance] != ProvenanceConstructed || rows[3].Attrs[schemas.AttrProvenance] != "" ||
		!rows[3].Recorded() {
		t.Errorf("rows: %+v", rows)
	}
	if n := a.ProvenanceRows(); len(n) != 3 || n[ProvenanceVerbatim] != 1 || n[ProvenanceConstructed] != 2 || n[""] != 1 {
		t.Errorf("ProvenanceRows: %v", n)
	}
}

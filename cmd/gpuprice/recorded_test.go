package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/ingest/archive"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/fx"
	"github.com/gpuprice/gpuprice/store"
)

var updateRecorded = flag.Bool("update-recorded", false, "rebuild examples/recorded from the sources' test fixtures")

// recordedAt is the observation time of the recorded example: fixed, so that
// rebuilding it changes nothing unless a fixture changed; the sources' tests' clock
// (scrapertest.ObservedAt), within a week of the ECB fixture's last day as the FX
// gate requires.
var recordedAt = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fixture is one test fixture answering the requests to a real endpoint.
type fixture struct {
	file        string            // under scrapers/
	when        func(string) bool // on the raw query; nil: always
	contentType string
	// provenance (archive.Provenance*) and its note are written on the response's
	// manifest entry: what in the fixture is a real response and what is not (the
	// fixture folder's README.md says more).
	provenance, note string
}

const (
	verbatim    = archive.ProvenanceVerbatim
	retyped     = archive.ProvenanceRetyped
	constructed = archive.ProvenanceConstructed
)

// recordedFixtures are the sources' test fixtures (scrapers/*/testdata) by the URL
// ("host/path") each source requests in production: the example archive holds real
// URLs answered with real-shaped responses. Each source's folder lists its own in
// testdata/recorded.json (recordedFile), read for every registered source and the
// ECB rates; recordedOptions are the sources' options there, benchSources their
// configuration in BenchmarkCollectMemory.
var recordedFixtures, recordedOptions, benchSources, recordedErr = loadRecorded()

// recordedFile is what a source's testdata/recorded.json says of the recorded
// example.
type recordedFile struct {
	Options   map[string]any `json:"options"` // the source's options in the example
	Bench     string         `json:"bench"`   // its config in BenchmarkCollectMemory (BASE: the server)
	Responses []struct {
		URL           string `json:"url"`            // host/path
		QueryContains string `json:"query_contains"` // answers only a query containing it ("": any)
		File          string `json:"file"`           // under the source's testdata/
		ContentType   string `json:"content_type"`
		Provenance    string `json:"provenance"`
		Note          string `json:"note"`
	} `json:"responses"`
}

// loadRecorded reads the testdata/recorded.json of every registered source and of
// the ECB rates (scrapers/fx).
func loadRecorded() (map[string][]fixture, map[string]map[string]any, map[string]string, error) {
	fixtures := map[string][]fixture{}
	options := map[string]map[string]any{}
	bench := map[string]string{}
	var errs []error
	for _, n := range append(scrapers.Names(), archive.FXSource) {
		b, err := os.ReadFile(filepath.Join("..", "..", "scrapers", n, "testdata", "recorded.json"))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: the recorded example needs its responses: %w", n, err))
			continue
		}
		var rf recordedFile
		if err := json.Unmarshal(b, &rf); err != nil {
			errs = append(errs, fmt.Errorf("%s: testdata/recorded.json: %w", n, err))
			continue
		}
		options[n], bench[n] = rf.Options, rf.Bench
		for _, r := range rf.Responses {
			f := fixture{file: n + "/testdata/" + r.File, contentType: r.ContentType, provenance: r.Provenance, note: r.Note}
			if q := r.QueryContains; q != "" {
				f.when = func(raw string) bool { return strings.Contains(raw, q) }
			}
			fixtures[r.URL] = append(fixtures[r.URL], f)
		}
	}
	// A fixture answering only some queries is tried first.
	for _, fs := range fixtures {
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].when != nil && fs[j].when == nil })
	}
	return fixtures, options, bench, errors.Join(errs...)
}

// TestRecordedResponsesOfEverySource fails when a registered source has no
// testdata/recorded.json (or an unreadable one), or lists a file that is missing.
func TestRecordedResponsesOfEverySource(t *testing.T) {
	if recordedErr != nil {
		t.Fatal(recordedErr)
	}
	for url, fs := range recordedFixtures {
		for _, f := range fs {
			if _, err := os.Stat(filepath.Join("..", "..", "scrapers", f.file)); err != nil {
				t.Errorf("%s: %v", url, err)
			}
		}
	}
}

// robotsNote is the provenance of the robots.txt the generator answers.
const robotsNote = "written by the example's generator (allows everything)"

// provenanceOf is the provenance of the fixture answering method and rawURL (the
// recorder's SetProvenance).
func provenanceOf(_, rawURL string) (string, string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", ""
	}
	if u.Path == "/robots.txt" {
		return constructed, robotsNote
	}
	if fx := fixtureFor(u); fx != nil {
		return fx.provenance, fx.note
	}
	return "", ""
}

// fixtureFor is the fixture answering the request to u, or nil.
func fixtureFor(u *url.URL) *fixture {
	fs := recordedFixtures[u.Host+u.Path]
	for i := range fs {
		if fs[i].when == nil || fs[i].when(u.RawQuery) {
			return &fs[i]
		}
	}
	return nil
}

// fixtureBody is the body a fixture answers with: the file under scrapers/, a
// .gz one decompressed (the provider serves it as JSON).
func fixtureBody(file string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "scrapers", file))
	if err != nil || !strings.HasSuffix(file, ".gz") {
		return b, err
	}
	return fetch.Gunzip(b, 64<<20)
}

// fixtureTransport answers every request from recordedFixtures (robots.txt allows
// everything); anything else is a 404 the generator reports.
type fixtureTransport struct {
	t      *testing.T
	mu     sync.Mutex
	misses []string
}

func (f *fixtureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	status, ctype, body := http.StatusOK, "text/plain", []byte("User-agent: *\nAllow: /\n")
	if r.URL.Path != "/robots.txt" {
		status, body = http.StatusNotFound, []byte("not found\n")
		if fx := fixtureFor(r.URL); fx != nil {
			b, err := fixtureBody(fx.file)
			if err != nil {
				f.t.Fatal(err)
			}
			status, ctype, body = http.StatusOK, fx.contentType, b
		}
		if status == http.StatusNotFound {
			f.mu.Lock()
			f.misses = append(f.misses, r.Method+" "+r.URL.String())
			f.mu.Unlock()
		}
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {ctype}, "Date": {recordedAt.Format(http.TimeFormat)}},
		Body:   io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
}

// TestRecordedExample rebuilds examples/recorded, with -update-recorded: every
// registered source and the ECB rates run against their real URLs, each request
// answered from the sources' test fixtures (recordedFixtures) and recorded; the
// manifest says it is a recorded example (origin "recorded") and holds each
// source's row count as its coverage guard. Regenerate with
//
//	go test ./cmd/gpuprice -run TestRecordedExample -update-recorded
func TestRecordedExample(t *testing.T) {
	if !*updateRecorded {
		t.Skip("run with -update-recorded to rebuild examples/recorded")
	}
	dst, err := filepath.Abs(filepath.Join("..", "..", "examples", "recorded"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dst, "responses")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dst, archive.ManifestName)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	rec, err := archive.Create(dst, "recorded-example", recordedAt, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec.SetOrigin(archive.OriginRecorded)
	rec.SetProvenance(provenanceOf)
	tr := &fixtureTransport{t: t}
	client := func(name string, opts map[string]any) *fetch.Client {
		c := fetch.New(fetch.Options{Timeout: 10 * time.Second, Backoff: fetch.Backoff{MaxTries: 1}})
		c.HTTP.Transport = tr
		c.Observer = rec.Source(name, archive.SourceInfo{ObservedAt: recordedAt, Options: opts})
		return c
	}
	ctx := context.Background()
	if _, err := fx.Fetch(ctx, client(archive.FXSource, nil), fx.History90Endpoint); err != nil {
		t.Fatalf("ECB rates: %v", err)
	}
	if recordedErr != nil {
		t.Fatal(recordedErr)
	}
	for _, n := range scrapers.Names() {
		_, factory, _ := scrapers.Lookup(n)
		opts := recordedOptions[n]
		src, err := factory(scrapers.Config{Name: n, Options: opts, Client: client(n, opts),
			Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return recordedAt }})
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		rows := 0
		emit := func(o schemas.Observation) {
			if !archive.Unpriced(o) {
				rows++
			}
		}
		// A run that takes signals: the sources ask for what they read besides rows
		// (the Spot Advisor), so the archive holds it.
		if err := src.Collect(ctx, signalsTaken{scrapers.EmitterFunc(emit)}); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if rows == 0 {
			t.Errorf("%s: no rows", n)
		}
		rec.SetExpectRows(n, rows)
		t.Logf("%s: %d rows", n, rows)
	}
	if err := rec.Close(recordedAt); err != nil {
		t.Fatal(err)
	}
	if len(tr.misses) > 0 {
		t.Errorf("requests no fixture answers (add them to the source's testdata/recorded.json):\n%s", strings.Join(tr.misses, "\n"))
	}
	for _, e := range rec.Manifest().Entries {
		if e.Provenance == "" || e.ProvenanceNote == "" {
			t.Errorf("response %d (%s) has no provenance: give its fixture one", e.Seq, e.URL)
		}
	}
}

// quickStart is the offline quick start of README.md: the commands of the code block
// after the line "Offline, from the recorded archive".
func quickStart(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds [][]string
	state := 0 // 0 before the marker, 1 before the block, 2 in it
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && strings.Contains(line, "Offline, from the recorded archive"):
			state = 1
		case state == 1 && strings.HasPrefix(line, "```"):
			state = 2
		case state == 2 && strings.HasPrefix(line, "```"):
			return cmds
		case state == 2:
			line, _, _ = strings.Cut(line, "#")
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			if fields[0] != "gpuprice" {
				t.Fatalf("README quick start: %q is not a gpuprice command", line)
			}
			cmds = append(cmds, fields[1:])
		}
	}
	t.Fatal("README.md has no offline quick start block")
	return nil
}

// TestReadmeQuickStartOffline runs the README's offline quick start as written, from
// the repository's root, on a fresh data directory, with no network, and checks what
// each command prints: every source loaded ok, prices marked recorded, the
// analytics and alerts answering on the recorded day, and (for the serve line) the
// web page and the API serving the recorded rows marked as such.
func TestReadmeQuickStartOffline(t *testing.T) {
	cmds := quickStart(t)
	if len(cmds) < 3 || cmds[0][0] != "reparse" {
		t.Fatalf("quick start %v: want reparse first, then queries", cmds)
	}
	t.Setenv("GPUPRICE_DATA_DIR", t.TempDir())
	t.Setenv("GPUPRICE_STORE", "")
	t.Chdir(filepath.Join("..", ".."))
	seen := map[string]string{}
	stderr := map[string]string{}
	for _, c := range cmds {
		if c[0] == "serve" {
			checkServeOffline(t)
			seen["serve"] = "checked"
			continue
		}
		out, errb, code := runAll(c...)
		if code != cli.ExitOK {
			t.Fatalf("gpuprice %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(c, " "), code, out, errb)
		}
		seen[c[0]] += out
		stderr[c[0]] += errb
	}
	want := map[string][]string{
		"reparse":    {"a recorded example", "not today's prices", "161 from verbatim captures", "39 from pages re-typed", "162 from responses constructed"},
		"prices":     {"ORIGIN", "recorded", "H100-SXM-80GB"},
		"volatility": {"STD_LOG_RETURN", "H100-SXM-80GB"},
		"spreads":    {"HYPERSCALER", "H100-SXM-80GB"},
		"tokens":     {"USD_PER_1B_TOKENS", "H100-SXM-80GB"},
		"history":    {"H100-SXM-80GB", "P50"},
		"alerts":     {"cheap-h100", "started"},
		"report":     {"H100-SXM-80GB on_demand: market price report", "Cheapest offer now", "Built from a recorded example, not from today's prices", "no figure here is a provider's price"},
		"serve":      {"checked"},
	}
	for cmd, ws := range want {
		out, ok := seen[cmd]
		if !ok {
			t.Errorf("the quick start has no gpuprice %s", cmd)
			continue
		}
		for _, w := range ws {
			if !strings.Contains(out, w) {
				t.Errorf("gpuprice %s: output lacks %q:\n%s", cmd, w, out)
			}
		}
	}
	// Every source of the archive loaded, none failed or degraded.
	for _, n := range scrapers.Names() {
		if !regexp.MustCompile(`(?m)^` + n + `\s+ok\s+[1-9]`).MatchString(seen["reparse"]) {
			t.Errorf("reparse: %s is not ok with rows:\n%s", n, seen["reparse"])
		}
	}
	// No price is shown as a live one, and stderr says so.
	for _, line := range strings.Split(strings.TrimSpace(seen["prices"]), "\n")[1:] {
		if strings.HasPrefix(line, "GPU ") {
			continue // the second command's header
		}
		if !strings.HasSuffix(strings.TrimSpace(line), "recorded") {
			t.Errorf("prices: a row not marked recorded: %q", line)
		}
	}
	if !strings.Contains(stderr["prices"], "recorded examples") || !strings.Contains(stderr["prices"], "not today's prices") ||
		!strings.Contains(stderr["prices"], "from responses constructed") {
		t.Errorf("prices: stderr does not say the rows are recorded:\n%s", stderr["prices"])
	}
	for _, cmd := range []string{"volatility", "spreads", "tokens", "history", "report"} {
		if !strings.Contains(stderr[cmd], "holds a recorded example") {
			t.Errorf("%s: stderr does not say the store holds a recorded example:\n%s", cmd, stderr[cmd])
		}
	}
	// The EUR source was converted with the recorded ECB rates.
	if out, _, code := runAll("prices", "--provider", "ovhcloud", "--format", "csv"); code != cli.ExitOK || !strings.Contains(out, ",EUR,") {
		t.Errorf("ovhcloud prices in EUR: exit %d\n%s", code, out)
	}
}

// checkServeOffline starts serve on the quick start's store and checks the web page
// and /api/v1/prices: every row carries attrs.origin "recorded", and the page's
// bundle marks such rows.
func checkServeOffline(t *testing.T) {
	t.Helper()
	base, stop := startServe(t)
	defer stop()
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if page := get("/"); !strings.Contains(page, "<html") {
		t.Errorf("GET /: not the web app:\n%.300s", page)
	}
	var prices struct {
		Data []schemas.Observation `json:"data"`
	}
	body := get("/api/v1/prices")
	if err := json.Unmarshal([]byte(body), &prices); err != nil {
		if err := json.Unmarshal([]byte(body), &prices.Data); err != nil {
			t.Fatalf("/api/v1/prices: %v\n%.300s", err, body)
		}
	}
	if len(prices.Data) == 0 {
		t.Fatalf("/api/v1/prices: no rows:\n%.300s", body)
	}
	for _, o := range prices.Data {
		if !o.Recorded() || o.Attrs[schemas.AttrProvenance] == "" {
			t.Errorf("/api/v1/prices: %s not marked recorded with its provenance (attrs %v)", o.SeriesKey(), o.Attrs)
			break
		}
	}
	if page := get("/page"); !strings.Contains(page, `<strong class="recorded">recorded</strong>`) {
		t.Errorf("GET /page: the plain page does not mark recorded rows:\n%.2000s", page)
	}
	if js := get("/assets/app.js"); !strings.Contains(js, "recorded-note") {
		t.Errorf("the web app does not mark recorded rows")
	}
}

// TestWebAppMarksRecorded: in a browser, the web app on a store loaded from the
// recorded example says so on the board (a note and a badge on each offer) and on
// the other views (a note), by row: after a live run of every source that failed
// (serve's first scheduled run offline), the API's answers, the CLI's note and the
// web page still say so.
func TestWebAppMarksRecorded(t *testing.T) {
	ctx := browser(t)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "recorded-web.duckdb")
	if out, errb, code := runAll("--store", dsn, "reparse", filepath.Join("..", "..", "examples", "recorded")); code != cli.ExitOK {
		t.Fatalf("reparse: exit %d\n%s\n%s", code, out, errb)
	}
	failLiveRuns(t, dsn)
	const spreadsAt = "--at=2026-11-02"
	if _, errb, code := runAll("--store", dsn, "spreads", "--gpu", "H100-SXM-80GB", spreadsAt); code != cli.ExitOK ||
		!strings.Contains(errb, "holds a recorded example") {
		t.Errorf("spreads after a failed live run: exit %d, no recorded note:\n%s", code, errb)
	}
	base, stop := startServe(t, "--store", dsn)
	defer stop()
	for _, path := range []string{"/api/v1/spreads?gpu=H100-SXM-80GB&at=2026-11-02", "/api/v1/index?since=30d",
		"/api/v1/tokens?params=7e9", "/api/v1/sources", "/api/v1/alerts", "/api/v1/history?gpu=H100-SXM-80GB"} {
		var ans struct {
			Recorded map[string]int `json:"recorded"`
		}
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&ans)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(ans.Recorded) == 0 {
			t.Errorf("GET %s after a failed live run: %d, recorded %v (%v)", path, resp.StatusCode, ans.Recorded, err)
		}
	}
	for _, view := range []string{"/index", "/tokens", "/alerts", "/sources"} {
		do(t, ctx, "open "+view, chromedp.Navigate(base+view), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)),
			chromedp.WaitVisible(chromedp.CSS(`#recorded-note`)))
		if view == "/index" {
			// The example's one day of sightings carried to now is drawn dashed and said so.
			if note := eval[string](t, ctx, `(document.querySelector('#index-chart .carried-note') || {}).textContent || ''`); !strings.Contains(note, "last seen") ||
				!strings.Contains(note, "nothing was observed") {
				t.Errorf("index: no note of the carried days: %q", note)
			}
		}
	}
	// The API labels them: every index point after 2026-11-01 is carried, last seen then.
	var idx struct {
		Data []analytics.IndexPoint `json:"data"`
	}
	resp, err := http.Get(base + "/api/v1/index?since=30d&gpu=H100-SXM-80GB&pricing=on_demand")
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&idx)
	resp.Body.Close()
	if err != nil || len(idx.Data) == 0 {
		t.Fatalf("index: %v, %d points", err, len(idx.Data))
	}
	for _, p := range idx.Data {
		if p.Carried != p.Offers || !p.LastSeen.Equal(recordedAt) {
			t.Errorf("index %s %s: %d of %d offers carried, last seen %v; want all, last seen %v", p.Day.Format(time.DateOnly),
				p.Group, p.Carried, p.Offers, p.LastSeen, recordedAt)
			break
		}
	}
	do(t, ctx, "open the board", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`#offers tbody tr`)),
		chromedp.WaitVisible(chromedp.CSS(`#recorded-note`)))
	rows := eval[int](t, ctx, `document.querySelectorAll('#offers tbody tr').length`)
	badges := eval[int](t, ctx, `document.querySelectorAll('#offers tbody tr .badge.recorded').length`)
	if rows == 0 || badges != rows {
		t.Errorf("board: %d of %d offers marked recorded", badges, rows)
	}
	// The example's constructed responses are counted apart (examples/recorded/manifest.json
	// says which): their values are illustrative, and a constructed offer's time says so.
	if note := eval[string](t, ctx, `document.getElementById('recorded-note').textContent`); !strings.Contains(note, "not today's prices") ||
		!regexp.MustCompile(`\b[1-9][0-9]* of them come from responses constructed in the providers' formats`).MatchString(note) {
		t.Errorf("board note: %q", note)
	}
	if n := eval[int](t, ctx, `[...document.querySelectorAll('#offers tbody tr td[title]')].filter((td) => td.title.includes('constructed response')).length`); n == 0 || n == rows {
		t.Errorf("board: %d of %d offers titled as from a constructed response (the example has verbatim and re-typed ones too)", n, rows)
	}
	do(t, ctx, "open the spreads", chromedp.Navigate(base+"/spreads?gpu=H100-SXM-80GB&pricing=on_demand"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)), chromedp.WaitVisible(chromedp.CSS(`#recorded-note`)))
}

// failLiveRuns writes, for every source, a live run that failed after the store's
// recorded example was loaded: what serve's first scheduled run writes offline.
func failLiveRuns(t *testing.T, dsn string) {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Now().UTC().Truncate(time.Second)
	for _, name := range scrapers.Names() {
		if err := st.WriteRun(context.Background(), schemas.Run{RunID: "live-" + at.Format("20060102T150405"), Source: name,
			StartedAt: at, FinishedAt: at.Add(time.Second), Status: schemas.RunFailed, Error: "dial tcp: no route to host"}); err != nil {
			t.Fatal(err)
		}
	}
}

// signalsTaken is an Emitter that takes signals and drops them.
type signalsTaken struct{ scrapers.EmitterFunc }

// EmitSignal implements scrapers.SignalEmitter.
func (signalsTaken) EmitSignal(schemas.Signal) {}

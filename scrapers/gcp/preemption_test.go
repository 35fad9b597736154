package gcp

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/archive"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

const testProject = "gpuprice-fixture"

// computeCall is one request the fake Compute Engine API received.
type computeCall struct {
	Method, Path, RawQuery, Auth, ContentType string
	Region                                    string // the region of the path
	Body                                      capacityRequest
}

// target names the call as the source's warnings do: machine type @ zone or region.
func (c computeCall) target() string {
	loc := ""
	if c.Body.LocationPolicy != nil {
		loc = c.Body.LocationPolicy.Location
	}
	_, name, _ := strings.Cut(loc, "/")
	return c.Body.InstanceProperties.MachineType + "@" + name
}

var capacityPathRE = regexp.MustCompile(`^/compute/v1/projects/` + testProject + `/regions/([a-z0-9-]+)/advice/capacityHistory$`)

// capacityEnv is a catalog replay server (page1 → page2 → empty, as TestCollectPaging)
// and a fake Compute Engine API, with the capacity history requests it received.
type capacityEnv struct {
	prices  *scrapertest.Server
	compute *httptest.Server

	mu    sync.Mutex
	calls []computeCall
}

// newCapacityEnv starts the servers; answer answers each capacity history request
// (given the decoded request and its number, from 0).
func newCapacityEnv(t *testing.T, answer func(w http.ResponseWriter, c computeCall, n int)) *capacityEnv {
	t.Helper()
	tok1, tok2 := nextToken(t, "testdata/page1/input.json"), nextToken(t, "testdata/page2/input.json")
	env := &capacityEnv{prices: scrapertest.NewServer(t, map[string][]scrapertest.Route{
		route(""):   {{File: "testdata/page1/input.json"}},
		route(tok1): {{File: "testdata/page2/input.json"}},
		route(tok2): {{File: "testdata/empty/input.json"}},
	})}
	env.compute = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := capacityPathRE.FindStringSubmatch(r.URL.Path)
		if m == nil {
			http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, http.StatusNotFound)
			return
		}
		c := computeCall{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Region: m[1],
			Auth: r.Header.Get("Authorization"), ContentType: r.Header.Get("Content-Type")}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		env.mu.Lock()
		n := len(env.calls)
		env.calls = append(env.calls, c)
		env.mu.Unlock()
		answer(w, c, n)
	}))
	t.Cleanup(env.compute.Close)
	return env
}

// options are the source options of the environment, with extra on top.
func (env *capacityEnv) options(extra map[string]any) map[string]any {
	o := map[string]any{"project": testProject, "compute_endpoint": env.compute.URL + "/compute/v1"}
	for k, v := range extra {
		if v == nil {
			delete(o, k)
			continue
		}
		o[k] = v
	}
	return o
}

// source builds an API-mode source against the servers, logging into buf; an extra
// option set to nil is left out.
func (env *capacityEnv) source(t *testing.T, extra map[string]any, buf *bytes.Buffer) *Source {
	t.Helper()
	cfg := scrapertest.Config(t, Name, env.prices.URL+apiPath, env.options(extra))
	cfg.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := newSource(cfg, testKey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// targets are the calls' targets, in order, each once (a retried call counts once).
func (env *capacityEnv) targets() []string {
	env.mu.Lock()
	defer env.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, c := range env.calls {
		if !seen[c.target()] {
			seen[c.target()] = true
			out = append(out, c.target())
		}
	}
	return out
}

// serveJSON writes the file at path.
func serveJSON(t *testing.T, w http.ResponseWriter, path string) {
	body, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// regionAnswer answers every request with testdata/capacity_history/region.json,
// its machineType and location set to the request's (location as the full URL the
// API writes).
func regionAnswer(t *testing.T) func(w http.ResponseWriter, c computeCall, n int) {
	var tmpl map[string]any
	if err := json.Unmarshal(scrapertest.ReadFile(t, "testdata/capacity_history/region.json"), &tmpl); err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, c computeCall, _ int) {
		a := map[string]any{}
		for k, v := range tmpl {
			a[k] = v
		}
		a["machineType"] = c.Body.InstanceProperties.MachineType
		a["location"] = "https://www.googleapis.com/compute/v1/projects/" + testProject + "/" + c.Body.LocationPolicy.Location
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(a)
	}
}

// pricesUnchanged checks that the run's rows are those of TestCollectPaging.
func pricesUnchanged(t *testing.T, sink *scrapertest.Sink, env *capacityEnv) {
	t.Helper()
	rows := sink.Sorted()
	for i := range rows {
		rows[i].SourceURL = strings.Replace(rows[i].SourceURL, env.prices.URL, "http://mirror", 1)
	}
	scrapertest.Golden(t, "testdata/collect_expected.json", rows)
}

// noToken fails when the access token appears in s.
func noToken(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, testAccessToken) {
		t.Errorf("%s carries the access token: %s", what, s)
	}
}

// machinePairs are the machine type @ region pairs the rows price.
func machinePairs(rows []schemas.Observation) []string {
	seen := map[string]bool{}
	var out []string
	for _, o := range rows {
		k := o.SKU + "@" + o.Region
		if hasCapacityHistory(o.SKU) && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// The whole flow: the prices as without a token, then one documented capacity
// history request per machine type and region priced (spot-priced ones first), and
// one preemption signal per day of each answer.
func TestPreemptionHistory(t *testing.T) {
	t.Setenv(EnvAccessToken, testAccessToken)
	env := newCapacityEnv(t, regionAnswer(t))
	var logs bytes.Buffer
	var sink scrapertest.Sink
	if err := env.source(t, nil, &logs).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	pricesUnchanged(t, &sink, env)

	// The requests: POST to the documented path, bearer token, the documented body.
	if len(env.calls) != 31 {
		t.Fatalf("capacity history requests = %d, want 31 (5 A2 × 3 regions + 4 A3 × 2 + 8 G2 × 1)", len(env.calls))
	}
	for i, c := range env.calls {
		b := c.Body
		if c.Method != http.MethodPost || c.RawQuery != "" || c.Auth != "Bearer "+testAccessToken ||
			c.ContentType != "application/json" {
			t.Errorf("call %d: %s %s?%s auth %q type %q", i, c.Method, c.Path, c.RawQuery, c.Auth, c.ContentType)
		}
		if b.InstanceProperties.Scheduling.ProvisioningModel != "SPOT" || strings.Join(b.Types, ",") != "PREEMPTION" ||
			b.LocationPolicy == nil || b.LocationPolicy.Location != "regions/"+c.Region {
			t.Errorf("call %d: region %s body %+v", i, c.Region, b)
		}
	}
	asked := env.targets()
	if len(asked) != 31 {
		t.Errorf("targets asked twice: %v", asked)
	}
	sorted := append([]string(nil), asked...)
	sort.Strings(sorted)
	if want := machinePairs(sink.Rows); strings.Join(sorted, " ") != strings.Join(want, " ") {
		t.Errorf("asked %v,\nwant the machine types and regions priced %v", sorted, want)
	}
	// The 15 A2 pairs have spot rows and come first; A3 and G2 (no spot rows here) follow.
	for i, a := range asked {
		if spot := strings.HasPrefix(a, "a2-"); spot != (i < 15) {
			t.Errorf("request %d is %s: spot-priced targets must come first", i, a)
		}
	}

	// The signals: two days per answer, joined to the price rows' GPU.
	sigs := append([]schemas.Signal(nil), sink.Signals...)
	if len(sigs) != 62 {
		t.Fatalf("signals = %d, want 62", len(sigs))
	}
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range sigs {
		wantURL := env.compute.URL + "/compute/v1/projects/" + testProject + "/regions/" + s.Region + "/advice/capacityHistory"
		if s.Provider != "gcp" || s.Kind != schemas.SignalPreemption || s.Zone != "" || s.Validate() != nil ||
			s.SourceURL != wantURL || !s.ObservedAt.Equal(scrapertest.ObservedAt) || s.Attrs["gpu_name"] == "" {
			t.Errorf("signal %+v", s)
		}
		noToken(t, "signal", s.SourceURL)
		mem, _ := strconv.ParseFloat(s.Attrs["gpu_memory_gb"], 64)
		if g := cat.Canonicalize(schemas.Hint{Provider: s.Provider, Name: s.Attrs["gpu_name"], SKU: s.SKU, MemoryGB: mem}); g == schemas.UnknownGPU {
			t.Errorf("%s %s: GPU %q not known to the catalog", s.SKU, s.Region, s.Attrs["gpu_name"])
		}
		sigs[i].SourceURL = strings.Replace(s.SourceURL, env.compute.URL, "http://compute", 1)
	}
	find := func(sku, region string, day time.Time) (schemas.Signal, bool) {
		for _, s := range sigs {
			if s.SKU == sku && s.Region == region && s.EffectiveAt.Equal(day) {
				return s, true
			}
		}
		return schemas.Signal{}, false
	}
	oct31 := time.Date(2026, 10, 31, 7, 0, 0, 0, time.UTC)
	if s, ok := find("a3-highgpu-8g", "us-east4", oct31); !ok || s.Value != 0.21 || s.Attrs["gpu_name"] != "Nvidia H100 80GB" ||
		s.Attrs["gpu_count"] != "8" || s.Attrs["gpu_memory_gb"] != "80" || s.Attrs["interval_end"] != "2026-11-01T07:00:00Z" ||
		s.Attrs["partial"] != "" {
		t.Errorf("a3-highgpu-8g us-east4 Oct 31: %v %+v", ok, s)
	}
	// 1 November 2026 is the day PDT ends: a 25-hour day, not over at the run's time.
	nov1 := time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)
	if s, ok := find("g2-standard-48", "europe-west4", nov1); !ok || s.Value != 0.04 || s.Attrs["partial"] != "true" ||
		s.Attrs["interval_end"] != "2026-11-02T08:00:00Z" || s.Attrs["gpu_name"] != "Nvidia L4" || s.Attrs["gpu_count"] != "4" {
		t.Errorf("g2-standard-48 europe-west4 Nov 1: %v %+v", ok, s)
	}
	sort.SliceStable(sigs, func(i, j int) bool {
		a, b := sigs[i], sigs[j]
		if a.SKU+" "+a.Region != b.SKU+" "+b.Region {
			return a.SKU+" "+a.Region < b.SKU+" "+b.Region
		}
		return a.EffectiveAt.Before(b.EffectiveAt)
	})
	scrapertest.Golden(t, "testdata/capacity_history/signals_expected.json", sigs)
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings in a clean run:\n%s", logs.String())
	}
	noToken(t, "log", logs.String())
}

// capRejectSink is a Sink that quarantines (scrapers.Rejecter), as a run does.
type capRejectSink struct {
	scrapertest.Sink
	mu      sync.Mutex
	rejects []scrapers.Rejected
}

func (r *capRejectSink) Reject(raw, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejects = append(r.rejects, scrapers.Rejected{Raw: raw, Reason: reason})
}

// Records that give no signal: a rate outside 0…1 and an interval that ends before
// it starts are quarantined with their raw JSON (logged when the emitter cannot
// quarantine); a second record of a day is passed over; a rate of 0 is a signal.
func TestPreemptionOddRecords(t *testing.T) {
	t.Setenv(EnvAccessToken, testAccessToken)
	tmpl := regionAnswer(t)
	answer := func(w http.ResponseWriter, c computeCall, n int) {
		if c.target() == "a3-highgpu-8g@us-east4" {
			serveJSON(t, w, "testdata/capacity_history/collect_odd.json")
			return
		}
		tmpl(w, c, n)
	}
	env := newCapacityEnv(t, answer)
	var logs bytes.Buffer
	var sink capRejectSink
	if err := env.source(t, nil, &logs).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	pricesUnchanged(t, &sink.Sink, env)
	var odd []schemas.Signal
	for _, s := range sink.Signals {
		if s.SKU == "a3-highgpu-8g" && s.Region == "us-east4" {
			odd = append(odd, s)
		}
	}
	if len(sink.Signals) != 60+2 || len(odd) != 2 ||
		!odd[0].EffectiveAt.Equal(time.Date(2026, 10, 30, 7, 0, 0, 0, time.UTC)) || odd[0].Value != 0.35 ||
		!odd[1].EffectiveAt.Equal(time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)) || odd[1].Value != 0 {
		t.Errorf("signals %d, a3-highgpu-8g us-east4: %+v; want Oct 30 (the first of its two records) and a rate 0 on Nov 1",
			len(sink.Signals), odd)
	}
	want := []struct{ reason, raw string }{
		{"preemption rate 1.3 is not within 0…1", `"preemptionRate":1.3`},
		{"preemption rate -0.2 is not within 0…1", `"preemptionRate":-0.2`},
		{"preemption record: interval ends", `"endTime":"2026-10-31T07:00:00Z"`},
	}
	if len(sink.rejects) != len(want) {
		t.Fatalf("rejects %+v, want %d", sink.rejects, len(want))
	}
	for i, w := range want {
		r := sink.rejects[i]
		raw := strings.Join(strings.Fields(r.Raw), "")
		if !strings.HasPrefix(r.Reason, "gcp: capacity history: ") || !strings.Contains(r.Reason, w.reason) || !strings.Contains(raw, w.raw) {
			t.Errorf("reject %d: %q (raw %s), want %q with %s", i, r.Reason, raw, w.reason, w.raw)
		}
	}
	if !strings.Contains(logs.String(), "repeats=1") {
		t.Errorf("the repeated day is not counted:\n%s", logs.String())
	}

	// An emitter without quarantine: the records are logged, the signals still sent.
	logs.Reset()
	var plain scrapertest.Sink
	if err := env.source(t, nil, &logs).Collect(context.Background(), &plain); err != nil {
		t.Fatal(err)
	}
	if len(plain.Signals) != 62 || strings.Count(logs.String(), "capacity history record not used") != 3 {
		t.Errorf("signals %d, logs:\n%s", len(plain.Signals), logs.String())
	}
	noToken(t, "log", logs.String())
}

// A request or an answer that fails loses no price: the run succeeds with every row,
// the other targets are still asked (unless the token, the project or the quota is
// refused), and the warning names no token.
func TestPreemptionFailuresKeepPrices(t *testing.T) {
	status := func(code int, body string) func(http.ResponseWriter, computeCall, int) {
		return func(w http.ResponseWriter, _ computeCall, _ int) { http.Error(w, body, code) }
	}
	tmpl := regionAnswer(t)
	for _, c := range []struct {
		name    string
		answer  func(http.ResponseWriter, computeCall, int)
		warn    []string
		targets int // distinct targets asked
		signals int
	}{
		{"token refused", status(http.StatusUnauthorized,
			`{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`),
			[]string{"access token was refused", "status=401", "not_asked=30"}, 1, 0},
		{"permission denied", status(http.StatusForbidden,
			`{"error":{"code":403,"message":"Required 'compute.regions.get' permission","status":"PERMISSION_DENIED"}}`),
			[]string{"not read further", "status=403"}, 1, 0},
		{"quota spent", status(http.StatusTooManyRequests,
			`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`),
			[]string{"not read further", "status=429"}, 1, 0},
		{"one target fails after retries", func(w http.ResponseWriter, c computeCall, n int) {
			if c.target() == "a3-highgpu-8g@us-east4" {
				http.Error(w, "", http.StatusServiceUnavailable)
				return
			}
			tmpl(w, c, n)
		}, []string{"requests failed", "failed=1", "a3-highgpu-8g@us-east4", "HTTP 503"}, 31, 60},
		{"answer not JSON", func(w http.ResponseWriter, _ computeCall, _ int) {
			_, _ = w.Write([]byte(`<html>maintenance</html>`))
		}, []string{"requests failed", "failed=31", "decoding response"}, 31, 0},
		{"error body with 200", func(w http.ResponseWriter, _ computeCall, _ int) {
			_, _ = w.Write([]byte(`{"error":{"code":400,"message":"Invalid value for field 'resource.instanceProperties.machineType'","status":"INVALID_ARGUMENT"}}`))
		}, []string{"failed=31", "no machineType"}, 31, 0},
		{"answer about another region", func(w http.ResponseWriter, c computeCall, _ int) {
			body, _ := json.Marshal(map[string]any{"machineType": c.Body.InstanceProperties.MachineType,
				"location": "https://www.googleapis.com/compute/v1/projects/" + testProject + "/regions/us-west9",
				"preemptionHistory": []any{map[string]any{"interval": map[string]any{
					"startTime": "2026-10-31T07:00:00Z", "endTime": "2026-11-01T07:00:00Z"}, "preemptionRate": 0.5}}})
			_, _ = w.Write(body)
		}, []string{"failed=31", "not regions/"}, 31, 0},
		// response.json is a3-highgpu-8g in us-central1-a: kept (with its zone) for that
		// target, an answer about another machine type for every other one.
		{"answer about another machine type", func(w http.ResponseWriter, _ computeCall, _ int) {
			serveJSON(t, w, "testdata/capacity_history/response.json")
		}, []string{"failed=30", `is about machine type \"a3-highgpu-8g\", not a2-highgpu-1g`}, 31, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvAccessToken, testAccessToken)
			env := newCapacityEnv(t, c.answer)
			var logs bytes.Buffer
			var sink scrapertest.Sink
			if err := env.source(t, nil, &logs).Collect(context.Background(), &sink); err != nil {
				t.Fatalf("Collect = %v: a failed capacity history must not fail the run", err)
			}
			pricesUnchanged(t, &sink, env)
			if n := len(env.targets()); n != c.targets {
				t.Errorf("targets asked = %d, want %d", n, c.targets)
			}
			if len(sink.Signals) != c.signals {
				t.Errorf("signals = %d, want %d", len(sink.Signals), c.signals)
			}
			if !strings.Contains(logs.String(), "level=WARN") {
				t.Errorf("no warning in:\n%s", logs.String())
			}
			for _, w := range c.warn {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("no %q in:\n%s", w, logs.String())
				}
			}
			noToken(t, "log", logs.String())
			if c.name == "answer about another machine type" {
				for _, s := range sink.Signals {
					if s.SKU != "a3-highgpu-8g" || s.Region != "us-central1" || s.Zone != "us-central1-a" {
						t.Errorf("signal %+v, want a3-highgpu-8g in us-central1-a", s)
					}
				}
			}
		})
	}
}

// Without a token and a project nothing but the catalog is asked; with one of them,
// the missing one is named (never the token) and nothing is asked either. Nor is
// anything asked of a run that priced no machine type (the pricing page) or whose
// emitter takes no signals.
func TestPreemptionNeedsTokenAndProject(t *testing.T) {
	for _, c := range []struct {
		name    string
		token   string
		project any // nil: the option is left out
		warn    string
	}{
		{"neither", "", nil, ""},
		{"token without project", testAccessToken, nil, "missing=options.project"},
		{"project without token", "", testProject, "missing=" + EnvAccessToken},
		{"blank token", "  \n", testProject, "missing=" + EnvAccessToken},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(EnvAccessToken, c.token)
			env := newCapacityEnv(t, regionAnswer(t))
			var logs bytes.Buffer
			var sink scrapertest.Sink
			if err := env.source(t, map[string]any{"project": c.project}, &logs).Collect(context.Background(), &sink); err != nil {
				t.Fatal(err)
			}
			pricesUnchanged(t, &sink, env)
			if len(env.calls) != 0 || len(sink.Signals) != 0 {
				t.Errorf("requests %d, signals %d; want none", len(env.calls), len(sink.Signals))
			}
			if got := strings.Contains(logs.String(), "level=WARN"); got != (c.warn != "") || !strings.Contains(logs.String(), c.warn) {
				t.Errorf("logs:\n%s\nwant warning %q", logs.String(), c.warn)
			}
			noToken(t, "log", logs.String())
		})
	}

	t.Run("pricing page", func(t *testing.T) {
		t.Setenv(EnvAccessToken, testAccessToken)
		env := newCapacityEnv(t, regionAnswer(t))
		page := scrapertest.NewServer(t, map[string][]scrapertest.Route{pagePath: {{File: "testdata/pricing_page/input.html"}}})
		cfg := scrapertest.Config(t, Name, "", env.options(map[string]any{"pricing_page": page.URL + pagePath}))
		var logs bytes.Buffer
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		src, err := newSource(cfg, "")
		if err != nil {
			t.Fatal(err)
		}
		var sink scrapertest.Sink
		if err := src.Collect(context.Background(), &sink); err != nil {
			t.Fatal(err)
		}
		if len(sink.Rows) != 31 || len(env.calls) != 0 || len(sink.Signals) != 0 ||
			!strings.Contains(logs.String(), "priced no A2, A3, A4 or G2 machine type") {
			t.Errorf("rows %d, requests %d, signals %d; logs:\n%s", len(sink.Rows), len(env.calls), len(sink.Signals), logs.String())
		}
	})

	t.Run("emitter without signals", func(t *testing.T) {
		t.Setenv(EnvAccessToken, testAccessToken)
		env := newCapacityEnv(t, regionAnswer(t))
		var rows []schemas.Observation
		var logs bytes.Buffer
		if err := env.source(t, nil, &logs).Collect(context.Background(),
			scrapers.EmitterFunc(func(o schemas.Observation) { rows = append(rows, o) })); err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 || len(env.calls) != 0 {
			t.Errorf("rows %d, requests %d; want the rows and no request", len(rows), len(env.calls))
		}
	})
}

// capacity_requests bounds the requests of a run: the spot-priced targets go first,
// and the warning names the ones not asked.
func TestPreemptionBudget(t *testing.T) {
	t.Setenv(EnvAccessToken, testAccessToken)
	env := newCapacityEnv(t, regionAnswer(t))
	var logs bytes.Buffer
	var sink scrapertest.Sink
	if err := env.source(t, map[string]any{"capacity_requests": 20}, &logs).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	pricesUnchanged(t, &sink, env)
	asked := env.targets()
	if len(env.calls) != 20 || len(asked) != 20 || len(sink.Signals) != 40 {
		t.Fatalf("requests %d (%d targets), signals %d; want 20, 20, 40", len(env.calls), len(asked), len(sink.Signals))
	}
	for i, a := range asked[15:] {
		want := []string{"a3-highgpu-1g@us-central1", "a3-highgpu-1g@us-east4", "a3-highgpu-2g@us-central1",
			"a3-highgpu-2g@us-east4", "a3-highgpu-4g@us-central1"}[i]
		if a != want {
			t.Errorf("request %d is %s, want %s", 15+i, a, want)
		}
	}
	l := logs.String()
	for _, w := range []string{"request budget reached", "budget=20", "targets=31", "skipped=11",
		"a3-highgpu-4g@us-east4", "a3-highgpu-8g@us-central1", "g2-standard-96@europe-west4"} {
		if !strings.Contains(l, w) {
			t.Errorf("no %q in the logs:\n%s", w, l)
		}
	}
	if strings.Contains(l, "not_asked=\"a2-") || strings.Contains(l, "a3-highgpu-1g@us-central1 a3") {
		t.Errorf("an asked target is named as skipped:\n%s", l)
	}
}

// A region whose price rows name zones is asked about zone by zone; one whose rows
// name none, as a whole. Only A2/A3/A4/G2 machine types are asked about: not the
// GPUs priced alone (N1 with GPUs attached has no history), not other names, not a
// row without a region; a zone outside its row's region is ignored.
func TestPreemptionTargets(t *testing.T) {
	p := newPricedMachines()
	for _, o := range []schemas.Observation{
		{SKU: "a3-highgpu-8g", Region: "us-central1", Zone: "us-central1-b", Pricing: schemas.OnDemand, GPUName: "Nvidia H100 80GB", GPUCount: 8, GPUMemoryGB: 80},
		{SKU: "a3-highgpu-8g", Region: "us-central1", Zone: "us-central1-a", Pricing: schemas.Spot},
		{SKU: "a3-highgpu-8g", Region: "us-central1", Pricing: schemas.Reserved1Y},
		{SKU: "a3-highgpu-8g", Region: "us-east4", Zone: "us-west1-a", Pricing: schemas.OnDemand},
		{SKU: "a4-highgpu-8g", Region: "us-west1", Pricing: schemas.Spot, GPUName: "Nvidia B200", GPUCount: 8, GPUMemoryGB: 180},
		{SKU: "a3-megagpu-8g", Region: "us-east5", Pricing: schemas.OnDemand},
		{SKU: "g2-standard-4", Region: "europe-west4", Pricing: schemas.OnDemand},
		{SKU: "g2-standard-4", Region: "", Pricing: schemas.OnDemand},
		{SKU: "nvidia-tesla-t4", Region: "us-central1", Pricing: schemas.Spot},
		{SKU: "n1-standard-8", Region: "us-central1", Pricing: schemas.Spot},
		{SKU: "a2-highgpu-1g", Region: "US Central", Pricing: schemas.Spot},
	} {
		p.add(o)
	}
	var got []string
	for _, tg := range p.targets() {
		got = append(got, tg.String()+" "+tg.location()+" spot="+strconv.FormatBool(tg.Spot))
	}
	want := []string{
		"a3-highgpu-8g@us-central1-a zones/us-central1-a spot=true",
		"a3-highgpu-8g@us-central1-b zones/us-central1-b spot=true",
		"a4-highgpu-8g@us-west1 regions/us-west1 spot=true",
		"a3-highgpu-8g@us-east4 regions/us-east4 spot=false",
		"a3-megagpu-8g@us-east5 regions/us-east5 spot=false",
		"g2-standard-4@europe-west4 regions/europe-west4 spot=false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("targets:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g := p.gpus["a3-highgpu-8g"]; g.Name != "Nvidia H100 80GB" || g.Count != 8 || g.MemoryGB != 80 {
		t.Errorf("a3-highgpu-8g GPU %+v", g)
	}

	// A zone answer for a zone target keeps the zone; a region target takes the zone
	// the answer names; a zone target answered about another zone gives nothing.
	h, err := ParseCapacityHistory(bytes.NewReader(scrapertest.ReadFile(t, "testdata/capacity_history/response.json")))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		zone string
		ok   bool
	}{{"us-central1-a", true}, {"", true}, {"us-central1-b", false}} {
		tg := capacityTarget{SKU: "a3-highgpu-8g", Region: "us-central1", Zone: c.zone}
		res, err := preemptionSignals(h, tg, "u", scrapertest.ObservedAt)
		if (err == nil) != c.ok || (c.ok && (len(res.Signals) != 7 || res.Signals[0].Zone != "us-central1-a")) {
			t.Errorf("target %s: %d signals, err %v; want ok=%v", tg, len(res.Signals), err, c.ok)
		}
	}
	// An answer without a location is the target's; one with a location that names
	// no zone or region is an error.
	h.Location, h.Region, h.Zone = "", "", ""
	if res, err := preemptionSignals(h, capacityTarget{SKU: "a3-highgpu-8g", Region: "us-central1", Zone: "us-central1-c"}, "u",
		scrapertest.ObservedAt); err != nil || res.Signals[0].Zone != "us-central1-c" {
		t.Errorf("no location: %v %+v", err, res)
	}
	h.Location = "https://www.googleapis.com/compute/v1/projects/p/global"
	if _, err := preemptionSignals(h, capacityTarget{SKU: "a3-highgpu-8g", Region: "us-central1"}, "u", scrapertest.ObservedAt); err == nil {
		t.Error("a location that is no zone or region was accepted")
	}
	// machineType may come as a URL.
	h.Location, h.MachineType = "", "https://www.googleapis.com/compute/v1/projects/p/zones/us-central1-a/machineTypes/a3-highgpu-8g"
	if _, err := preemptionSignals(h, capacityTarget{SKU: "a3-highgpu-8g", Region: "us-central1"}, "u", scrapertest.ObservedAt); err != nil {
		t.Errorf("machineType as a URL: %v", err)
	}
}

// What collect --record writes holds no token, even without the recorder's own
// scrubbing of secrets (the token travels in the Authorization header alone, which
// no observer sees); the capacity history requests are archived with their bodies,
// and replaying the archive gives the same signals without asking the network.
func TestPreemptionTokenNotArchived(t *testing.T) {
	t.Setenv(EnvAccessToken, testAccessToken)
	env := newCapacityEnv(t, regionAnswer(t))
	dir := filepath.Join(t.TempDir(), "archive")
	rec, err := archive.Create(dir, "run-1", scrapertest.ObservedAt, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := scrapertest.Config(t, Name, env.prices.URL+apiPath, env.options(nil))
	c := *cfg.Client
	c.Observer = rec.Source(Name, archive.SourceInfo{ObservedAt: scrapertest.ObservedAt, Endpoint: cfg.Endpoint, Options: cfg.Options})
	cfg.Client = &c
	src, err := newSource(cfg, testKey)
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(scrapertest.ObservedAt); err != nil {
		t.Fatal(err)
	}
	if len(sink.Signals) != 62 {
		t.Fatalf("signals %d", len(sink.Signals))
	}
	files := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".gz") {
			zr, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				return err
			}
			if data, err = io.ReadAll(zr); err != nil {
				return err
			}
		}
		files++
		noToken(t, path, string(data))
		if bytes.Contains(data, []byte("Bearer")) {
			t.Errorf("%s holds a bearer credential", path)
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("walking the archive: %v (%d files)", err, files)
	}
	queries := 0
	for _, e := range rec.Manifest().Entries {
		if strings.HasSuffix(e.URL, "/advice/capacityHistory") {
			queries++
			if e.Method != http.MethodPost || !bytes.Contains(e.RequestBody, []byte(`"provisioningModel":"SPOT"`)) {
				t.Errorf("archived query %s %s %s", e.Method, e.URL, e.RequestBody)
			}
		}
	}
	if queries != 31 {
		t.Errorf("archived capacity history queries = %d, want 31", queries)
	}

	// Replay: the archive answers every request (any token value turns the history
	// on; none is sent anywhere).
	env.compute.Close()
	a, err := archive.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := a.Jobs([]string{Name}, archive.JobOptions{Timeout: 5 * time.Second, Getenv: func(name string) string {
		return map[string]string{EnvAPIKey: "replay-key", EnvAccessToken: "replay-token"}[name]
	}})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs %v, %v", jobs, err)
	}
	var replay scrapertest.Sink
	if err := jobs[0].Source.Collect(context.Background(), &replay); err != nil {
		t.Fatal(err)
	}
	if m := a.Misses(); len(m) != 0 {
		t.Errorf("replay misses %v", m)
	}
	key := func(ss []schemas.Signal) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.SKU+" "+s.Region+" "+s.EffectiveAt.Format(time.RFC3339)+" "+strconv.FormatFloat(s.Value, 'g', -1, 64))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	if key(replay.Signals) != key(sink.Signals) || len(replay.Rows) != len(sink.Rows) {
		t.Errorf("replay gave %d signals, %d rows; want %d, %d", len(replay.Signals), len(replay.Rows), len(sink.Signals), len(sink.Rows))
	}
}

func TestPreemptionOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		ok   bool
	}{
		{map[string]any{"project": "my-project-123", "capacity_requests": 1}, true},
		{map[string]any{"project": "example.com:my-project", "capacity_requests": MaxCapacityRequests}, true},
		{map[string]any{"compute_endpoint": "https://compute.googleapis.com/compute/beta"}, true},
		{map[string]any{"compute_endpoint": "http://127.0.0.1:8080/compute/v1"}, true},
		{map[string]any{"compute_endpoint": "http://localhost:9090/"}, true},
		{map[string]any{"project": "My-Project"}, false},
		{map[string]any{"project": "short"}, false},
		{map[string]any{"project": "1project"}, false},
		{map[string]any{"project": "my-project-"}, false},
		{map[string]any{"project": "my project"}, false},
		{map[string]any{"project": "../../other/x"}, false},
		{map[string]any{"capacity_requests": -1}, false},
		{map[string]any{"capacity_requests": MaxCapacityRequests + 1}, false},
		{map[string]any{"compute_endpoint": "http://compute.example.com/compute/v1"}, false},
		{map[string]any{"compute_endpoint": "https://compute.googleapis.com/compute/v1?key=x"}, false},
		{map[string]any{"compute_endpoint": "https://user:pw@compute.googleapis.com/compute/v1"}, false},
		{map[string]any{"compute_endpoint": "compute.googleapis.com/compute/v1"}, false},
	} {
		_, err := newSource(scrapertest.Config(t, Name, "", c.opts), testKey)
		if (err == nil) != c.ok {
			t.Errorf("newSource(%v) error = %v, want ok=%v", c.opts, err, c.ok)
		}
	}
	s, err := newSource(scrapertest.Config(t, Name, "", nil), testKey)
	if err != nil {
		t.Fatal(err)
	}
	if s.opts.CapacityRequests != DefaultCapacityRequests || s.computeEndpoint() != DefaultComputeEndpoint ||
		!strings.Contains(s.String(), "access_token=unset") {
		t.Errorf("defaults: %d %s %s", s.opts.CapacityRequests, s.computeEndpoint(), s)
	}
	t.Setenv(EnvAccessToken, testAccessToken)
	s, err = newSource(scrapertest.Config(t, Name, "", map[string]any{"project": testProject}), testKey)
	if err != nil {
		t.Fatal(err)
	}
	noToken(t, "String()", s.String())
	noToken(t, "%+v", fmt.Sprintf("%+v", s))
	if !strings.Contains(s.String(), "access_token=set") || !strings.Contains(s.String(), testProject) {
		t.Errorf("String() = %s", s)
	}
}

func TestPreemptionRegistered(t *testing.T) {
	info, _, _ := scrapers.Lookup(Name)
	if strings.Join(info.SecretEnv, ",") != EnvAPIKey+","+EnvAccessToken {
		t.Errorf("SecretEnv = %v", info.SecretEnv)
	}
	for _, s := range []string{info.Credentials, info.Doc.Credentials} {
		if !strings.Contains(s, EnvAccessToken) || !strings.Contains(s, "optional") || !strings.Contains(s, "gcloud auth print-access-token") {
			t.Errorf("credentials text %q does not explain %s", s, EnvAccessToken)
		}
	}
	if !strings.Contains(info.SampleOptions, "project:") || !strings.Contains(info.SampleOptions, "capacity_requests:") {
		t.Errorf("sample options do not document project and capacity_requests:\n%s", info.SampleOptions)
	}
}

func FuzzPreemptionSignals(f *testing.F) {
	for _, p := range []string{"response", "odd_records", "region", "collect_odd"} {
		data, err := os.ReadFile("testdata/capacity_history/" + p + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseCapacityHistory(bytes.NewReader(data))
		if err != nil {
			return
		}
		tg := capacityTarget{SKU: path0(h.MachineType), Region: h.Region, Zone: h.Zone}
		res, err := preemptionSignals(h, tg, "u", scrapertest.ObservedAt)
		if err != nil {
			return
		}
		for _, s := range res.Signals {
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// path0 is the last segment of a slash-separated name.
func path0(s string) string {
	if i := strings.LastIndex(s, "/"); i >= 0 {
		return s[i+1:]
	}
	return s
}

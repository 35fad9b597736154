package azure

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// The fake credentials of the eviction tests: none may appear in a log line, a
// signal or an archived request.
const (
	testTenant = "0f1e2d3c-tenant-fixture"
	testClient = "9a8b7c6d-client-fixture"
	testSecret = "s3cr3t~client-secret-fixture"
)

// fixtureToken is the access token of testdata/eviction_rates/token.json.
func fixtureToken(t *testing.T) string {
	t.Helper()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(scrapertest.ReadFile(t, "testdata/eviction_rates/token.json"), &tok); err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// graphCall is one request the fake Resource Graph received.
type graphCall struct {
	Auth  string
	Query string // the URL's raw query
	Body  graphRequest
}

// evictionEnv is a price replay server (page1 → page2), a token endpoint and a
// Resource Graph, each a local server, with what they were asked.
type evictionEnv struct {
	prices *scrapertest.Server
	login  *httptest.Server
	graph  *httptest.Server

	mu     sync.Mutex
	tokens []*http.Request // with their parsed form
	forms  []map[string][]string
	calls  []graphCall
}

// newEvictionEnv starts the servers; token and graph answer the token and query
// requests (the query handler gets the decoded body and the call's number, from 0).
func newEvictionEnv(t *testing.T, token http.HandlerFunc, graph func(w http.ResponseWriter, c graphCall, n int)) *evictionEnv {
	t.Helper()
	env := &evictionEnv{prices: scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath: {{File: "testdata/page1/input.json"}},
		nextRoute(t, "testdata/page1/input.json"): {{File: "testdata/page2/input.json"}},
	})}
	env.login = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		env.mu.Lock()
		env.tokens = append(env.tokens, r.Clone(r.Context()))
		env.forms = append(env.forms, r.PostForm)
		env.mu.Unlock()
		token(w, r)
	}))
	t.Cleanup(env.login.Close)
	env.graph = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := graphCall{Auth: r.Header.Get("Authorization"), Query: r.URL.RawQuery}
		if r.URL.Path != ResourceGraphPath {
			http.NotFound(w, r)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&c.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		env.mu.Lock()
		n := len(env.calls)
		env.calls = append(env.calls, c)
		env.mu.Unlock()
		graph(w, c, n)
	}))
	t.Cleanup(env.graph.Close)
	return env
}

// source builds the source against the servers, with logs into buf.
func (env *evictionEnv) source(t *testing.T, opts map[string]any, buf *bytes.Buffer) scrapers.Source {
	t.Helper()
	o := map[string]any{"login_endpoint": env.login.URL, "management_endpoint": env.graph.URL}
	for k, v := range opts {
		o[k] = v
	}
	cfg := scrapertest.Config(t, Name, env.prices.URL+apiPath, o)
	cfg.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func setCredentials(t *testing.T) {
	t.Setenv(EnvTenantID, testTenant)
	t.Setenv(EnvClientID, testClient)
	t.Setenv(EnvClientSecret, testSecret)
}

func serveFile(path string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		body, err := os.ReadFile(path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}
}

// pagedGraph answers the first query with page1 and the one carrying page1's
// $skipToken with page2.
func pagedGraph(t *testing.T) func(w http.ResponseWriter, c graphCall, n int) {
	var p1 struct {
		SkipToken string `json:"$skipToken"`
	}
	if err := json.Unmarshal(scrapertest.ReadFile(t, "testdata/eviction_rates/page1.json"), &p1); err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, c graphCall, _ int) {
		switch c.Body.Options.SkipToken {
		case "":
			serveFile("testdata/eviction_rates/page1.json")(w, nil)
		case p1.SkipToken:
			serveFile("testdata/eviction_rates/page2.json")(w, nil)
		default:
			http.Error(w, `{"error":{"code":"BadRequest","message":"unknown $skipToken"}}`, http.StatusBadRequest)
		}
	}
}

// mirrorRows is the rows of a run with the price server's URL written as in
// testdata/collect_expected.json.
func mirrorRows(t *testing.T, sink *scrapertest.Sink, base string) []schemas.Observation {
	t.Helper()
	rows := sink.Sorted()
	for i := range rows {
		rows[i].SourceURL = strings.Replace(rows[i].SourceURL, base, "http://mirror", 1)
	}
	return rows
}

// noSecrets fails when a credential or the token appears in s.
func noSecrets(t *testing.T, what, s, token string) {
	t.Helper()
	for _, v := range []string{testSecret, testTenant, testClient, token} {
		if v != "" && strings.Contains(s, v) {
			t.Errorf("%s carries a secret (%q): %s", what, v, s)
		}
	}
}

// The whole flow: prices as without credentials, then a token by the client
// credentials grant, a paged Resource Graph query of the sizes priced, and one
// interruption signal per size and region.
func TestEvictionRates(t *testing.T) {
	setCredentials(t)
	token := fixtureToken(t)
	env := newEvictionEnv(t, serveFile("testdata/eviction_rates/token.json"), pagedGraph(t))
	var logs bytes.Buffer
	src := env.source(t, nil, &logs)
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}

	// The prices are those of the run without eviction rates.
	scrapertest.Golden(t, "testdata/collect_expected.json", mirrorRows(t, &sink, env.prices.URL))

	// Authentication: one token request, the documented client credentials form.
	if len(env.tokens) != 1 {
		t.Fatalf("token requests = %d, want 1", len(env.tokens))
	}
	tr, form := env.tokens[0], env.forms[0]
	if tr.Method != http.MethodPost || tr.URL.Path != "/"+testTenant+"/oauth2/v2.0/token" ||
		tr.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("token request %s %s (%s)", tr.Method, tr.URL.Path, tr.Header.Get("Content-Type"))
	}
	for k, want := range map[string]string{
		"grant_type": "client_credentials", "client_id": testClient, "client_secret": testSecret,
		"scope": env.graph.URL + "/.default",
	} {
		if got := strings.Join(form[k], ","); got != want {
			t.Errorf("token form %s = %q, want %q", k, got, want)
		}
	}

	// The query: bearer token, api-version, the sizes priced, paged by $skipToken.
	if len(env.calls) != 2 {
		t.Fatalf("Resource Graph requests = %d, want 2 (paged)", len(env.calls))
	}
	var p1 graphResponse
	if err := json.Unmarshal(scrapertest.ReadFile(t, "testdata/eviction_rates/page1.json"), &p1); err != nil {
		t.Fatal(err)
	}
	wantQuery := "SpotResources | where type =~ 'microsoft.compute/skuspotevictionrate/location' | where sku.name in~ (" +
		"'Standard_NC24ads_A100_v4', 'Standard_NC40ads_H100_v5', 'Standard_NC48ads_A100_v4', " +
		"'Standard_NC80adis_H100_v5', 'Standard_NC96ads_A100_v4', 'Standard_ND96amsr_A100_v4', " +
		"'Standard_ND96asr_v4', 'Standard_ND96isr_H100_v5', 'Standard_ND96isr_H200_v5') | project id, sku, location, properties"
	for i, c := range env.calls {
		if c.Auth != "Bearer "+token || c.Query != "api-version="+ResourceGraphAPIVersion {
			t.Errorf("call %d: auth %q query %q", i, c.Auth, c.Query)
		}
		if c.Body.Query != wantQuery || c.Body.Options.ResultFormat != "objectArray" {
			t.Errorf("call %d: body %+v\nwant query %s", i, c.Body, wantQuery)
		}
	}
	if env.calls[0].Body.Options.SkipToken != "" || env.calls[1].Body.Options.SkipToken != p1.SkipToken {
		t.Errorf("skip tokens %q, %q; want none then page 1's", env.calls[0].Body.Options.SkipToken, env.calls[1].Body.Options.SkipToken)
	}

	// The signals: one per record of both pages, joined to the price rows' SKU.
	sigs := append([]schemas.Signal(nil), sink.Signals...)
	if len(sigs) != 7 {
		t.Fatalf("signals = %d, want 7: %+v", len(sigs), sigs)
	}
	graphURL := env.graph.URL + ResourceGraphPath + "?api-version=" + ResourceGraphAPIVersion
	by := map[string]schemas.Signal{}
	for i, s := range sigs {
		if s.Provider != "azure" || s.Kind != schemas.SignalInterruption || s.Zone != "" ||
			!s.EffectiveAt.Equal(scrapertest.ObservedAt) || s.Validate() != nil || s.SourceURL != graphURL {
			t.Errorf("signal %+v", s)
		}
		noSecrets(t, "signal", s.SourceURL, token)
		by[s.SKU+" "+s.Region] = s
		sigs[i].SourceURL = "http://management" + ResourceGraphPath + "?api-version=" + ResourceGraphAPIVersion
	}
	for _, c := range []struct {
		key, label, gpu, count string
		value                  float64
	}{
		{"Standard_NC40ads_H100_v5 uaenorth", "0-5", "NVIDIA H100 NVL", "1", 0},
		// Resource Graph spelled it in lower case: the signal has the price rows' SKU.
		{"Standard_NC80adis_H100_v5 malaysiawest", "5-10", "NVIDIA H100 NVL", "2", 1},
		{"Standard_ND96asr_v4 eastus", "10-15", "NVIDIA A100 SXM", "8", 2},
		{"Standard_NC96ads_A100_v4 southcentralus", "15-20", "NVIDIA A100 PCIe", "4", 3},
		{"Standard_ND96isr_H100_v5 eastus", "20+", "NVIDIA H100 SXM", "8", 4},
		// A region the run did not price keeps Resource Graph's location.
		{"Standard_ND96isr_H100_v5 swedencentral", "5-10", "NVIDIA H100 SXM", "8", 1},
	} {
		s, ok := by[c.key]
		if !ok {
			t.Errorf("no signal for %s", c.key)
			continue
		}
		if s.Label != c.label || s.Value != c.value || s.Attrs["gpu_name"] != c.gpu || s.Attrs["gpu_count"] != c.count {
			t.Errorf("%s: %+v, want %s (%v) %s × %s", c.key, s, c.label, c.value, c.count, c.gpu)
		}
	}
	if s := by["Standard_ND96isr_H100_v5 eastus"]; s.Attrs["band_max"] != "100" || s.Attrs["gpu_memory_gb"] != "80" {
		t.Errorf("open band attrs %v", s.Attrs)
	}
	// ingest derives each signal's GPU from gpu_name and gpu_memory_gb as it does the
	// price rows': the catalog knows every one.
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sigs {
		mem, _ := strconv.ParseFloat(s.Attrs["gpu_memory_gb"], 64)
		if g := cat.Canonicalize(schemas.Hint{Provider: s.Provider, Name: s.Attrs["gpu_name"], SKU: s.SKU, MemoryGB: mem}); g == schemas.UnknownGPU {
			t.Errorf("%s %s: GPU %q not known to the catalog", s.SKU, s.Region, s.Attrs["gpu_name"])
		}
	}
	sort.Slice(sigs, func(i, j int) bool { return sigs[i].SKU+sigs[i].Region < sigs[j].SKU+sigs[j].Region })
	scrapertest.Golden(t, "testdata/eviction_rates/signals_expected.json", sigs)
	noSecrets(t, "log", logs.String(), token)
}

// Every published band maps to its index; anything else is rejected, not guessed.
func TestEvictionBands(t *testing.T) {
	p := newPriced()
	p.add(schemas.Observation{SKU: "Standard_NC40ads_H100_v5", Region: "eastus", GPUName: "NVIDIA H100 NVL", GPUCount: 1, GPUMemoryGB: 94})
	row := func(rate string) evictionRow {
		var r evictionRow
		r.SKU.Name, r.Location, r.Properties.EvictionRate = "Standard_NC40ads_H100_v5", "eastus", &rate
		return r
	}
	for _, c := range []struct {
		rate  string
		index int
		max   string
	}{{"0-5", 0, "5"}, {"5-10", 1, "10"}, {"10-15", 2, "15"}, {"15-20", 3, "20"}, {"20+", 4, "100"}, {" 20+ ", 4, "100"}} {
		res := evictionSignals([]evictionRow{row(c.rate)}, []string{"raw"}, p, scrapertest.ObservedAt, "u")
		if len(res.Signals) != 1 || len(res.Rejects) != 0 {
			t.Errorf("%q: %+v", c.rate, res)
			continue
		}
		s := res.Signals[0]
		if s.Value != float64(c.index) || s.Label != strings.TrimSpace(c.rate) || s.Attrs["band_max"] != c.max {
			t.Errorf("%q: value %v label %q band_max %q, want %d %q", c.rate, s.Value, s.Label, s.Attrs["band_max"], c.index, c.max)
		}
	}
	for _, rate := range []string{"", "20-25", "0-5%", "<5%", "20 +", "low"} {
		res := evictionSignals([]evictionRow{row(rate)}, []string{"raw " + rate}, p, scrapertest.ObservedAt, "u")
		if len(res.Signals) != 0 || len(res.Rejects) != 1 || res.Rejects[0].Raw != "raw "+rate ||
			!strings.Contains(res.Rejects[0].Reason, "unknown eviction rate band") {
			t.Errorf("%q: %+v, want one rejected record", rate, res)
		}
	}
	if len(EvictionBands) != 5 {
		t.Errorf("bands %v", EvictionBands)
	}
	for i, b := range EvictionBands {
		if b.Index != i {
			t.Errorf("band %d has index %d", i, b.Index)
		}
	}
}

// rejectSink is a Sink that quarantines (scrapers.Rejecter), as a run does.
type rejectSink struct {
	scrapertest.Sink
	mu      sync.Mutex
	rejects []scrapers.Rejected
}

func (r *rejectSink) Reject(raw, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejects = append(r.rejects, scrapers.Rejected{Raw: raw, Reason: reason})
}

// Records that give no signal: a repeat and a size not priced are passed over; an
// unknown band, a record without a rate and one that is not an object are
// quarantined with their raw JSON; with an emitter that cannot quarantine they are
// logged.
func TestEvictionOddRecords(t *testing.T) {
	setCredentials(t)
	env := newEvictionEnv(t, serveFile("testdata/eviction_rates/token.json"),
		func(w http.ResponseWriter, _ graphCall, _ int) {
			serveFile("testdata/eviction_rates/odd_rows.json")(w, nil)
		})
	var logs bytes.Buffer
	var sink rejectSink
	if err := env.source(t, nil, &logs).Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Signals) != 1 || sink.Signals[0].SKU != "Standard_NC40ads_H100_v5" || sink.Signals[0].Label != "0-5" {
		t.Errorf("signals %+v, want the first uaenorth record alone", sink.Signals)
	}
	reasons := map[string]string{}
	for _, r := range sink.rejects {
		reasons[r.Reason] = r.Raw
	}
	if len(sink.rejects) != 3 {
		t.Fatalf("rejects %+v, want 3", sink.rejects)
	}
	for _, want := range []struct{ reason, raw string }{
		{`azure: unknown eviction rate band "20-25"`, `"evictionRate": "20-25"`},
		{"without properties.evictionRate", "Standard_NC96ads_A100_v4"},
		{"eviction rate record not readable", `"not a record"`},
	} {
		found := false
		for reason, raw := range reasons {
			if strings.Contains(reason, want.reason) && strings.Contains(raw, want.raw) {
				found = true
			}
		}
		if !found {
			t.Errorf("no reject %q with raw %q in %v", want.reason, want.raw, reasons)
		}
	}
	if len(sink.Rows) == 0 {
		t.Error("prices lost")
	}

	// The same through the parser alone: what was passed over, by reason.
	pg, err := parseEvictionPage(bytes.NewReader(scrapertest.ReadFile(t, "testdata/eviction_rates/odd_rows.json")))
	if err != nil {
		t.Fatal(err)
	}
	p := newPriced()
	p.add(schemas.Observation{SKU: "Standard_NC40ads_H100_v5", Region: "uaenorth"})
	p.add(schemas.Observation{SKU: "Standard_ND96asr_v4", Region: "eastus"})
	p.add(schemas.Observation{SKU: "Standard_NC96ads_A100_v4", Region: "southcentralus"})
	res := evictionSignals(pg.Rows, pg.Raw, p, scrapertest.ObservedAt, "u")
	if res.Skipped[skipDuplicate] != 1 || res.Skipped[skipNotPriced] != 1 || len(res.Rejects) != 2 || len(pg.Rejects) != 1 {
		t.Errorf("skipped %v, rejects %d (+%d unreadable)", res.Skipped, len(res.Rejects), len(pg.Rejects))
	}

	// An emitter without quarantine: the records are logged, the signal still sent.
	logs.Reset()
	var plain scrapertest.Sink
	if err := env.source(t, nil, &logs).Collect(context.Background(), &plain); err != nil {
		t.Fatal(err)
	}
	if len(plain.Signals) != 1 || strings.Count(logs.String(), "eviction rate record not used") != 3 {
		t.Errorf("signals %d, logs:\n%s", len(plain.Signals), logs.String())
	}
}

// A token or a query that fails loses no price: the run succeeds with every row, and
// the warning names no secret.
func TestEvictionFailuresKeepPrices(t *testing.T) {
	token := fixtureToken(t)
	okToken := serveFile("testdata/eviction_rates/token.json")
	okGraph := pagedGraph(t)
	status := func(code int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { http.Error(w, body, code) }
	}
	graphStatus := func(code int) func(http.ResponseWriter, graphCall, int) {
		return func(w http.ResponseWriter, _ graphCall, _ int) {
			http.Error(w, `{"error":{"code":"AuthorizationFailed","message":"no access"}}`, code)
		}
	}
	var p1 graphResponse
	if err := json.Unmarshal(scrapertest.ReadFile(t, "testdata/eviction_rates/page1.json"), &p1); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		token   http.HandlerFunc
		graph   func(http.ResponseWriter, graphCall, int)
		warn    string
		signals int
	}{
		{"token refused", status(http.StatusUnauthorized,
			`{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`),
			okGraph, "no access token", 0},
		{"token answer without a token", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"token_type":"Bearer","expires_in":3599}`))
		}, okGraph, "no access token", 0},
		{"query forbidden", okToken, graphStatus(http.StatusForbidden), "Resource Graph query failed", 0},
		{"query fails after retries", okToken, graphStatus(http.StatusServiceUnavailable), "Resource Graph query failed", 0},
		{"query answer not JSON", okToken, func(w http.ResponseWriter, _ graphCall, _ int) {
			_, _ = w.Write([]byte(`<html>maintenance</html>`))
		}, "decoding response", 0},
		{"query answer in table format", okToken, func(w http.ResponseWriter, _ graphCall, _ int) {
			_, _ = w.Write([]byte(`{"totalRecords":1,"count":1,"resultTruncated":"false","data":{"columns":[],"rows":[]}}`))
		}, "not an object array", 0},
		{"second page fails", okToken, func(w http.ResponseWriter, c graphCall, n int) {
			if n == 0 {
				okGraph(w, c, n)
				return
			}
			http.Error(w, "", http.StatusBadGateway)
		}, "page 2", 3},
		{"skip token repeats", okToken, func(w http.ResponseWriter, _ graphCall, _ int) {
			serveFile("testdata/eviction_rates/page1.json")(w, nil)
		}, "$skipToken repeats", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			setCredentials(t)
			env := newEvictionEnv(t, c.token, c.graph)
			var logs bytes.Buffer
			var sink scrapertest.Sink
			if err := env.source(t, nil, &logs).Collect(context.Background(), &sink); err != nil {
				t.Fatalf("Collect = %v: a failed eviction query must not fail the run", err)
			}
			scrapertest.Golden(t, "testdata/collect_expected.json", mirrorRows(t, &sink, env.prices.URL))
			if len(sink.Signals) != c.signals {
				t.Errorf("signals = %d, want %d", len(sink.Signals), c.signals)
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), c.warn) {
				t.Errorf("no warning %q in:\n%s", c.warn, logs.String())
			}
			noSecrets(t, "log", logs.String(), token)
		})
	}
}

// Without credentials nothing but the Retail Prices API is asked; with some but not
// all, the missing variables are named (not the values) and nothing is asked either.
func TestEvictionCredentials(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		warn string
	}{
		{"none", nil, ""},
		{"tenant only", map[string]string{EnvTenantID: testTenant}, "missing=AZURE_CLIENT_ID,AZURE_CLIENT_SECRET"},
		{"no secret", map[string]string{EnvTenantID: testTenant, EnvClientID: testClient}, "missing=AZURE_CLIENT_SECRET"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{EnvTenantID, EnvClientID, EnvClientSecret} {
				t.Setenv(k, c.env[k])
			}
			env := newEvictionEnv(t, serveFile("testdata/eviction_rates/token.json"), pagedGraph(t))
			var logs bytes.Buffer
			var sink scrapertest.Sink
			if err := env.source(t, nil, &logs).Collect(context.Background(), &sink); err != nil {
				t.Fatal(err)
			}
			if len(env.tokens) != 0 || len(env.calls) != 0 || len(sink.Signals) != 0 {
				t.Errorf("token requests %d, queries %d, signals %d; want none", len(env.tokens), len(env.calls), len(sink.Signals))
			}
			if got := strings.Contains(logs.String(), "credentials incomplete"); got != (c.warn != "") ||
				!strings.Contains(logs.String(), c.warn) {
				t.Errorf("logs:\n%s\nwant warning %q", logs.String(), c.warn)
			}
			noSecrets(t, "log", logs.String(), "")
			scrapertest.Golden(t, "testdata/collect_expected.json", mirrorRows(t, &sink, env.prices.URL))
		})
	}
}

// The regions option limits the query to those locations.
func TestEvictionRegions(t *testing.T) {
	setCredentials(t)
	env := newEvictionEnv(t, serveFile("testdata/eviction_rates/token.json"), pagedGraph(t))
	var logs bytes.Buffer
	if err := env.source(t, map[string]any{"regions": []any{"eastus", "uaenorth"}}, &logs).
		Collect(context.Background(), &scrapertest.Sink{}); err != nil {
		t.Fatal(err)
	}
	if len(env.calls) == 0 || !strings.Contains(env.calls[0].Body.Query,
		"| where location in~ ('eastus', 'uaenorth') | project id, sku, location, properties") {
		t.Errorf("calls %+v", env.calls)
	}
}

// A name that is not an ARM size name never reaches the query text.
func TestEvictionQueryQuoting(t *testing.T) {
	q := evictionQuery([]string{"Standard_NC40ads_H100_v5", "x') | project secret //"}, []string{"east us'"})
	if strings.Contains(q, "secret") || strings.Contains(q, "east us") ||
		!strings.Contains(q, "in~ ('Standard_NC40ads_H100_v5')") {
		t.Errorf("query %s", q)
	}
}

// recordingObserver is what a raw archive sees of a client's requests.
type recordingObserver struct {
	mu   sync.Mutex
	seen []string
}

func (o *recordingObserver) Observe(_ context.Context, method, url string, body []byte, resp *fetch.Response, _ time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, method+" "+url+" "+string(body)+" "+string(resp.Body))
}

// The token request is not shown to the client's Observer (the raw archive): neither
// the secret it sends nor the token it receives is archived; the query is.
func TestEvictionTokenNotArchived(t *testing.T) {
	setCredentials(t)
	token := fixtureToken(t)
	env := newEvictionEnv(t, serveFile("testdata/eviction_rates/token.json"), pagedGraph(t))
	cfg := scrapertest.Config(t, Name, env.prices.URL+apiPath,
		map[string]any{"login_endpoint": env.login.URL, "management_endpoint": env.graph.URL})
	obs := &recordingObserver{}
	cfg.Client.Observer = obs
	src, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Signals) != 7 || len(env.tokens) != 1 {
		t.Fatalf("signals %d, token requests %d", len(sink.Signals), len(env.tokens))
	}
	queries := 0
	for _, s := range obs.seen {
		noSecrets(t, "observed exchange", s, token)
		if strings.Contains(s, ResourceGraphPath) {
			queries++
		}
	}
	if queries != 2 {
		t.Errorf("observed %d queries, want 2", queries)
	}
	if cfg.Client.Observer != obs {
		t.Error("the source's client lost its observer")
	}
}

func TestEvictionOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		ok   bool
	}{
		{map[string]any{"login_endpoint": "https://login.microsoftonline.us", "management_endpoint": "https://management.usgovcloudapi.net"}, true},
		{map[string]any{"login_endpoint": "http://127.0.0.1:8080", "management_endpoint": "http://localhost:9090/"}, true},
		{map[string]any{"login_endpoint": "http://login.example.com"}, false},
		{map[string]any{"management_endpoint": "https://management.azure.com?x=1"}, false},
		{map[string]any{"login_endpoint": "https://user:pw@login.microsoftonline.com"}, false},
		{map[string]any{"login_endpoint": "login.microsoftonline.com"}, false},
	} {
		_, err := New(scrapertest.Config(t, Name, "", c.opts))
		if (err == nil) != c.ok {
			t.Errorf("New(%v) error = %v, want ok=%v", c.opts, err, c.ok)
		}
	}
	src, err := New(scrapertest.Config(t, Name, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*Source)
	if s.graphURL() != "https://management.azure.com/providers/Microsoft.ResourceGraph/resources?api-version=2021-03-01" ||
		s.loginEndpoint() != "https://login.microsoftonline.com" {
		t.Errorf("defaults %s %s", s.graphURL(), s.loginEndpoint())
	}
	setCredentials(t)
	src, err = New(scrapertest.Config(t, Name, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	noSecrets(t, "String()", src.(*Source).String(), "")
	if !strings.Contains(src.(*Source).String(), "eviction_credentials=set") {
		t.Errorf("String() = %s", src.(*Source).String())
	}
}

func FuzzParseEvictionPage(f *testing.F) {
	for _, p := range []string{"page1", "page2", "odd_rows"} {
		data, err := os.ReadFile("testdata/eviction_rates/" + p + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pg, err := parseEvictionPage(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(pg.Rows) != len(pg.Raw) {
			t.Fatalf("%d rows, %d raw", len(pg.Rows), len(pg.Raw))
		}
		p := newPriced()
		for _, r := range pg.Rows {
			p.add(schemas.Observation{SKU: r.SKU.Name, Region: r.Location})
		}
		for _, s := range evictionSignals(pg.Rows, pg.Raw, p, scrapertest.ObservedAt, "u").Signals {
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestEvictionSecretEnv(t *testing.T) {
	info, _, _ := scrapers.Lookup(Name)
	if strings.Join(info.SecretEnv, ",") != "AZURE_TENANT_ID,AZURE_CLIENT_ID,AZURE_CLIENT_SECRET" {
		t.Errorf("SecretEnv = %v", info.SecretEnv)
	}
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// receiver stands in for a webhook, Slack or Alertmanager: it keeps every body
// posted and answers status.
type receiver struct {
	mu     sync.Mutex
	bodies [][]byte
	paths  []string
	status int
	srv    *httptest.Server
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{status: http.StatusOK}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		r.bodies = append(r.bodies, b)
		r.paths = append(r.paths, req.URL.Path)
		w.WriteHeader(r.status)
		if r.status == http.StatusOK {
			_, _ = w.Write([]byte("ok"))
		} else {
			_, _ = w.Write([]byte("invalid_token"))
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) count() int { r.mu.Lock(); defer r.mu.Unlock(); return len(r.bodies) }

func (r *receiver) last(t *testing.T, v any) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.bodies) == 0 {
		t.Fatal("nothing received")
	}
	b := r.bodies[len(r.bodies)-1]
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return r.paths[len(r.paths)-1]
}

// serveInProcess runs gpuprice with args (a serve command) in this process under
// ctx; done gets its exit code.
func serveInProcess(ctx context.Context, args ...string) (out, errb *syncBuffer, done chan int) {
	out, errb, done = &syncBuffer{}, &syncBuffer{}, make(chan int, 1)
	go func() { done <- cli.Main(ctx, args, out, errb) }()
	return out, errb, done
}

// alertDay is the day the alert history ends: --at is four hours into it.
var alertDay = time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC)

// alertStore seeds: H100 on-demand, AWS (hyperscaler) 4.0 and Lambda
// (specialist) 2.5 on 2025-03-03, AWS 4.5 on 2025-03-10 (ratio 1.6 → 1.8: +12.5 %);
// an AWS spot series 3.0 at 00:10 and 3.6 at 01:10 on 2025-03-10 (+20 %); a
// Vast.ai (marketplace) on-demand offer at 1.9; three failed Lambda runs.
func alertStore(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var obs []schemas.Observation
	add := func(provider, tier, pricing, zone string, at time.Time, gpuHour float64) {
		obs = append(obs, schemas.Observation{ObservedAt: at, EffectiveAt: at, Provider: provider, Tier: tier, SKU: provider + "-h100x8",
			Region: "r1", Zone: zone, GPU: "H100-SXM-80GB", GPUName: "H100", GPUCount: 8, GPUMemoryGB: 80, Pricing: pricing,
			PriceUSDHour: 8 * gpuHour, PriceUSDGPUHour: gpuHour, Currency: "USD", PriceNative: 8 * gpuHour, Unit: schemas.UnitHour,
			FXRate: 1, Interconnect: schemas.InterconnectInfiniband, SourceKind: schemas.SourceAPI, SourceURL: "https://example.test", RunID: "r"})
	}
	week := alertDay.Add(-7 * 24 * time.Hour)
	add("aws", schemas.TierHyperscaler, schemas.OnDemand, "", week.Add(12*time.Hour), 4.0)
	add("lambda", schemas.TierSpecialist, schemas.OnDemand, "", week.Add(12*time.Hour), 2.5)
	add("aws", schemas.TierHyperscaler, schemas.OnDemand, "", alertDay.Add(1*time.Hour), 4.5)
	add("aws", schemas.TierHyperscaler, schemas.Spot, "r1a", alertDay.Add(10*time.Minute), 3.0)
	add("aws", schemas.TierHyperscaler, schemas.Spot, "r1a", alertDay.Add(70*time.Minute), 3.6)
	add("vast", schemas.TierMarketplace, schemas.OnDemand, "", alertDay.Add(2*time.Hour), 1.9)
	if err := st.WriteObservations(ctx, obs); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		at := alertDay.Add(time.Duration(i) * time.Hour)
		if err := st.WriteRun(ctx, schemas.Run{RunID: "run" + string(rune('a'+i)), Source: "lambda", StartedAt: at, FinishedAt: at.Add(time.Minute),
			Status: schemas.RunFailed, Error: "lambda: fetch: HTTP 503"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.(store.Rollups).Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
}

func TestAlertsDuckDB(t *testing.T) {
	testAlerts(t, "duckdb://"+filepath.Join(t.TempDir(), "alerts.duckdb"))
}

func TestIntegrationClickHouseAlerts(t *testing.T) {
	dsn := chtest.FreshDSN(t, "alerts")
	testAlerts(t, dsn)
}

type alertReport struct {
	Rules []struct {
		Rule      string `json:"rule"`
		Error     string `json:"error"`
		Instances []struct {
			Subject string             `json:"subject"`
			State   string             `json:"state"`
			Firing  bool               `json:"firing"`
			Value   float64            `json:"value"`
			Detail  map[string]float64 `json:"detail"`
		} `json:"instances"`
	} `json:"rules"`
	Deliveries []struct {
		Notifier string `json:"notifier"`
		Firing   int    `json:"firing"`
		Resolved int    `json:"resolved"`
		Sent     bool   `json:"sent"`
		Error    string `json:"error"`
	} `json:"deliveries"`
	Recent []alert.Episode `json:"recent"`
}

func testAlerts(t *testing.T, dsn string) {
	dataDir := t.TempDir()
	t.Setenv("GPUPRICE_DATA_DIR", dataDir)
	alertStore(t, dsn)
	hook, slack, am, broken := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	broken.status = http.StatusBadRequest
	// Webhook URLs are secrets: the token in their path must never be printed.
	const token = "T0001/B0002/sekretSlackToken42"
	t.Setenv("GPUPRICE_ALERT_WEBHOOK_URL", hook.srv.URL+"/hook/"+token)
	t.Setenv("GPUPRICE_SLACK_WEBHOOK_URL", slack.srv.URL+"/services/"+token)
	t.Setenv("BROKEN_HOOK_LOCATION", broken.srv.URL+"/services/"+token)
	cfg := filepath.Join(t.TempDir(), "gpuprice.yaml")
	if err := os.WriteFile(cfg, []byte(`http: {retries: 1}
serve: {public_url: "https://gpuprice.example.com/"}
alerts:
  rules:
    - {name: h100-premium-shift, kind: spread_shift, gpu: H100-SXM-80GB, pricing: on_demand, window: 7d, threshold_pct: 10}
    - {name: spot-swing, kind: spot_move, gpu: H100-SXM-80GB, window: 24h, threshold_pct: 15}
    - {name: cheap-h100, kind: price_below, gpu: H100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: 2.0}
    - {name: source-down, kind: source_failed, source: lambda, runs: 3}
  notifiers:
    - {name: ops-webhook, kind: webhook, url_env: GPUPRICE_ALERT_WEBHOOK_URL}
    - {name: slack, kind: slack, url_env: GPUPRICE_SLACK_WEBHOOK_URL}
    - {name: am, kind: alertmanager, url: `+am.srv.URL+`}
    - {name: broken, kind: webhook, url_env: BROKEN_HOOK_LOCATION}
    - {name: log, kind: log}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	at := alertDay.Add(4 * time.Hour).Format(time.RFC3339)
	statePath := filepath.Join(dataDir, "alerts-state.json")
	alerts := func(wantCode int, args ...string) (alertReport, string) {
		t.Helper()
		stdout, stderr, code := runCtx(context.Background(), append([]string{"alerts", "--config", cfg, "--store", dsn, "--at", at}, args...)...)
		if code != wantCode {
			t.Fatalf("alerts %v: exit %d, want %d\n%s\n%s", args, code, wantCode, stdout, stderr)
		}
		for _, leak := range []string{token, "sekretSlackToken42"} {
			if strings.Contains(stdout+stderr, leak) {
				t.Fatalf("alerts %v printed a webhook secret:\n%s\n%s", args, stdout, stderr)
			}
		}
		var rep alertReport
		if len(args) > 0 && args[len(args)-1] == "json" {
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
		}
		return rep, stdout + stderr
	}

	// As of 01:30, before the $1.9 Vast offer (02:00) and the third failed Lambda
	// run (02:00): the cheapest offer in force is Lambda's $2.5, two runs failed.
	early, _, code := runCtx(context.Background(), "alerts", "--config", cfg, "--store", dsn, "--dry-run", "--format", "json",
		"--at", alertDay.Add(90*time.Minute).Format(time.RFC3339))
	var earlyRep alertReport
	if err := json.Unmarshal([]byte(early), &earlyRep); err != nil || code != 0 {
		t.Fatalf("alerts --at 01:30: exit %d, %v\n%s", code, err, early)
	}
	for _, r := range earlyRep.Rules {
		switch r.Rule {
		case "cheap-h100":
			if len(r.Instances) != 1 || r.Instances[0].Firing || r.Instances[0].Value != 2.5 {
				t.Errorf("price_below as of 01:30: %+v", r)
			}
		case "source-down":
			if len(r.Instances) != 1 || r.Instances[0].Firing || r.Instances[0].Value != 2 {
				t.Errorf("source_failed as of 01:30: %+v", r)
			}
		}
	}

	// A dry run shows what fires and sends nothing, keeps no state.
	_, out := alerts(0, "--dry-run")
	for _, want := range []string{"h100-premium-shift", "12.50%", "started", "would send 4 firing, 0 resolved (dry run)"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if hook.count()+slack.count()+am.count()+broken.count() != 0 {
		t.Fatal("dry run sent notifications")
	}
	if _, err := os.Stat(statePath); !os.IsNotExist(err) {
		t.Fatalf("dry run wrote the state: %v", err)
	}

	// First evaluation: every rule fires; every notifier is told once; the broken
	// one fails (exit 1) without stopping the others.
	rep, out := alerts(1, "--format", "json")
	want := map[string]float64{"h100-premium-shift": 12.5, "spot-swing": 20, "cheap-h100": 1.9, "source-down": 3}
	for _, r := range rep.Rules {
		if r.Error != "" || len(r.Instances) != 1 || !r.Instances[0].Firing || r.Instances[0].State != "started" ||
			math.Abs(r.Instances[0].Value-want[r.Rule]) > 1e-9 {
			t.Errorf("rule %s: %+v", r.Rule, r)
		}
	}
	if len(rep.Rules) != 4 {
		t.Fatalf("rules: %+v", rep.Rules)
	}
	// The spread figures are `gpuprice spreads`' own.
	var sp struct {
		Summary []struct {
			FirstRatio float64 `json:"first_ratio"`
			LastRatio  float64 `json:"last_ratio"`
		} `json:"summary"`
	}
	runJSON(t, &sp, "spreads", "--store", dsn, "--gpu", "H100-SXM-80GB", "--pricing", "on_demand", "--since", "8d", "--at", at, "--format", "json")
	if d := rep.Rules[0].Instances[0].Detail; len(sp.Summary) != 1 || d["first_ratio"] != sp.Summary[0].FirstRatio || d["last_ratio"] != sp.Summary[0].LastRatio {
		t.Errorf("alert ratios %v, spreads %+v", d, sp.Summary)
	}
	if hook.count() != 1 || slack.count() != 1 || am.count() != 1 || broken.count() != 1 {
		t.Fatalf("posts: hook %d slack %d am %d broken %d", hook.count(), slack.count(), am.count(), broken.count())
	}
	var failed bool
	for _, d := range rep.Deliveries {
		if d.Notifier == "broken" {
			failed = d.Error != "" && !d.Sent && strings.Contains(d.Error, "$BROKEN_HOOK_LOCATION") && strings.Contains(d.Error, "400")
		} else if d.Error != "" || !d.Sent || d.Firing != 4 {
			t.Errorf("delivery %+v", d)
		}
	}
	if !failed {
		t.Errorf("broken notifier's failure not reported: %+v\n%s", rep.Deliveries, out)
	}
	var payload alert.Payload
	if p := hook.last(t, &payload); p != "/hook/"+token || payload.Version != alert.PayloadVersion || payload.Firing != 4 || len(payload.Events) != 4 {
		t.Errorf("webhook %s: %+v", p, payload)
	}
	// Each event says what it is about, the figures it compares and when, the
	// threshold, and links to the series' view in the web app.
	wantCompared := map[string]string{
		"h100-premium-shift": "first 1.6000 on 2025-03-03; first_hyperscaler $4.0000/GPU-h at 2025-03-03T00:00Z; first_specialist $2.5000/GPU-h at 2025-03-03T00:00Z; " +
			"last 1.8000 on 2025-03-10; last_hyperscaler $4.5000/GPU-h at 2025-03-10T00:00Z; last_specialist $2.5000/GPU-h at 2025-03-10T00:00Z",
		"spot-swing":  "before $3.0000/GPU-h at 2025-03-10T00:00Z; after $3.6000/GPU-h at 2025-03-10T01:00Z",
		"cheap-h100":  "cheapest $1.9000/GPU-h at 2025-03-10T02:00Z",
		"source-down": "failed_run at 2025-03-10T02:00Z; failed_run at 2025-03-10T01:00Z; failed_run at 2025-03-10T00:00Z",
	}
	wantURL := map[string]string{
		"h100-premium-shift": "https://gpuprice.example.com/series?gpu=H100-SXM-80GB&pricing=on_demand",
		"spot-swing":         "https://gpuprice.example.com/series?gpu=H100-SXM-80GB&pricing=spot&provider=aws",
		"cheap-h100":         "https://gpuprice.example.com/series?gpu=H100-SXM-80GB&pricing=on_demand&provider=vast&region=r1&sku=vast-h100x8",
		"source-down":        "https://gpuprice.example.com/sources?source=lambda",
	}
	for _, e := range payload.Events {
		if got := alert.ComparedText(e.Compared); got != wantCompared[e.Rule] {
			t.Errorf("webhook %s compared:\n%s\nwant\n%s", e.Rule, got, wantCompared[e.Rule])
		}
		if e.URL != wantURL[e.Rule] || e.Series == nil || e.Threshold == 0 {
			t.Errorf("webhook %s: url %q series %+v threshold %v", e.Rule, e.URL, e.Series, e.Threshold)
		}
	}
	var sl struct{ Text string }
	slack.last(t, &sl)
	if strings.Count(sl.Text, ":rotating_light: FIRING") != 4 || !strings.Contains(sl.Text, "*cheap-h100* H100-SXM-80GB on_demand: cheapest offer $1.9000/GPU-hour at vast") {
		t.Errorf("slack text:\n%s", sl.Text)
	}
	if !strings.Contains(sl.Text, ">compared: cheapest $1.9000/GPU-h at 2025-03-10T02:00Z; threshold below $2/GPU-h\n") ||
		!strings.Contains(sl.Text, "<https://gpuprice.example.com/series?gpu=H100-SXM-80GB&pricing=on_demand&provider=vast&region=r1&sku=vast-h100x8|view in gpuprice>") {
		t.Errorf("slack text lacks the figures or the link:\n%s", sl.Text)
	}
	var ams []alert.AMAlert
	if p := am.last(t, &ams); p != "/api/v2/alerts" || len(ams) != 4 {
		t.Fatalf("alertmanager %s: %+v", p, ams)
	}
	for _, a := range ams {
		if a.Labels["alertname"] == "" || a.Labels["subject"] == "" || a.Annotations["summary"] == "" || !a.EndsAt.After(time.Now()) ||
			!a.StartsAt.Equal(alertDay.Add(4*time.Hour)) {
			t.Errorf("alertmanager alert %+v", a)
		}
		rule := a.Labels["alertname"]
		if a.GeneratorURL != wantURL[rule] || a.Annotations["url"] != wantURL[rule] || a.Annotations["compared"] != wantCompared[rule] ||
			a.Annotations["series"] == "" || a.Annotations["threshold"] == "" {
			t.Errorf("alertmanager %s annotations %v, generatorURL %q", rule, a.Annotations, a.GeneratorURL)
		}
	}

	// Second evaluation, nothing changed: nobody is told again but the broken
	// notifier, which is retried; it recovers.
	broken.status = http.StatusOK
	rep, _ = alerts(0, "--format", "json")
	if hook.count() != 1 || slack.count() != 1 || am.count() != 1 || broken.count() != 2 {
		t.Fatalf("second run posts: hook %d slack %d am %d broken %d", hook.count(), slack.count(), am.count(), broken.count())
	}
	if rep.Rules[2].Instances[0].State != "firing" {
		t.Errorf("second run state %+v", rep.Rules[2])
	}

	// A cheaper offer goes: the cheapest is now 2.3 and cheap-h100 resolves, once.
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	later := alertDay.Add(3 * time.Hour)
	o := schemas.Observation{ObservedAt: later, EffectiveAt: later, Provider: "vast", Tier: schemas.TierMarketplace, SKU: "vast-h100x8",
		Region: "r1", GPU: "H100-SXM-80GB", GPUName: "H100", GPUCount: 8, GPUMemoryGB: 80, Pricing: schemas.OnDemand,
		PriceUSDHour: 8 * 2.3, PriceUSDGPUHour: 2.3, Currency: "USD", PriceNative: 8 * 2.3, Unit: schemas.UnitHour, FXRate: 1,
		Interconnect: schemas.InterconnectInfiniband, SourceKind: schemas.SourceAPI, SourceURL: "https://example.test", RunID: "r2"}
	if err := st.WriteObservations(ctx, []schemas.Observation{o}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, out = alerts(0)
	if !strings.Contains(out, "resolved") || !strings.Contains(out, "notifier am (alertmanager): sent 0 firing, 1 resolved") {
		t.Errorf("resolution output:\n%s", out)
	}
	if hook.count() != 2 || slack.count() != 2 || am.count() != 2 || broken.count() != 3 {
		t.Fatalf("resolution posts: hook %d slack %d am %d broken %d", hook.count(), slack.count(), am.count(), broken.count())
	}
	hook.last(t, &payload)
	if len(payload.Events) != 1 || payload.Events[0].Rule != "cheap-h100" || payload.Events[0].Status != alert.StatusResolved ||
		payload.Resolved != 1 || payload.Events[0].Value != 2.3 {
		t.Errorf("resolution webhook %+v", payload)
	}
	slack.last(t, &sl)
	if !strings.HasPrefix(sl.Text, ":white_check_mark: RESOLVED *cheap-h100*") {
		t.Errorf("resolution slack %q", sl.Text)
	}
	am.last(t, &ams)
	if len(ams) != 1 || ams[0].Labels["alertname"] != "cheap-h100" || !ams[0].EndsAt.Equal(alertDay.Add(4*time.Hour)) {
		t.Errorf("resolution alertmanager %+v", ams)
	}
	// And not again.
	alerts(0)
	if hook.count() != 2 || slack.count() != 2 || am.count() != 2 || broken.count() != 3 {
		t.Fatalf("resolution sent twice: hook %d slack %d am %d broken %d", hook.count(), slack.count(), am.count(), broken.count())
	}
	// The history kept in the store: cheap-h100 fired on $1.9 and resolved on
	// $2.3, the other three still fire; as of before they started, nothing.
	rep, out = alerts(0, "--dry-run", "--window", "30d", "--format", "json")
	if len(rep.Recent) != 4 {
		t.Fatalf("history: %d episodes, want 4: %+v", len(rep.Recent), rep.Recent)
	}
	for _, e := range rep.Recent {
		if !e.StartsAt.Equal(alertDay.Add(4 * time.Hour)) {
			t.Errorf("%s started %v", e.Rule, e.StartsAt)
		}
		if e.Rule != "cheap-h100" {
			if e.State != alert.EpisodeFiring || e.EndsAt != nil || e.Resolved != nil || math.Abs(e.Fired.Value-want[e.Rule]) > 1e-9 {
				t.Errorf("history %s: %+v", e.Rule, e)
			}
			continue
		}
		if e.State != alert.EpisodeResolved || e.EndsAt == nil || !e.EndsAt.Equal(alertDay.Add(4*time.Hour)) || e.Fired.Value != 1.9 ||
			e.Resolved == nil || e.Resolved.Value != 2.3 || alert.ComparedText(e.Fired.Compared) != wantCompared["cheap-h100"] ||
			e.Fired.URL != wantURL["cheap-h100"] || e.Fired.Series == nil || e.Fired.Threshold != 2 {
			t.Errorf("history cheap-h100: %+v", e)
		}
	}
	_, out = alerts(0, "--dry-run")
	if !regexp.MustCompile(`(?m)^cheap-h100\s+H100-SXM-80GB on_demand\s+resolved\s+2025-03-10T04:00:00Z\s+2025-03-10T04:00:00Z\s+\$1\.9000\s+\$2\.3000`).MatchString(out) {
		t.Errorf("alerts history table:\n%s", out)
	}
	if stdout, _, code := runCtx(context.Background(), "alerts", "--config", cfg, "--store", dsn, "--dry-run", "--format", "json",
		"--at", alertDay.Add(time.Hour).Format(time.RFC3339)); code != 0 || !strings.Contains(stdout, `"recent": []`) {
		t.Errorf("history before the alerts fired (exit %d): %s", code, stdout)
	}
	// With the rules gone from the configuration, the history is still shown.
	noRules := filepath.Join(t.TempDir(), "norules.yaml")
	if err := os.WriteFile(noRules, []byte("http: {retries: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, code := runCtx(context.Background(), "alerts", "--config", noRules, "--store", dsn, "--at", at, "--window", "30d"); code != 0 ||
		!strings.Contains(stderr, "no rules configured") || !regexp.MustCompile(`(?m)^cheap-h100\s+H100-SXM-80GB on_demand\s+resolved`).MatchString(stdout) {
		t.Errorf("alerts without rules: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, stderr, code := runCtx(context.Background(), "alerts", "--config", cfg, "--store", dsn, "--window", "soon"); code != 2 || !strings.Contains(stderr, "--window") {
		t.Errorf("alerts --window soon: exit %d %s", code, stderr)
	}
	state, err := os.ReadFile(statePath)
	if err != nil || strings.Contains(string(state), token) || strings.Contains(string(state), "cheap-h100") {
		t.Errorf("state file: %v\n%s", err, state)
	}
	// `gpuprice config` shows the variable's name, not its value.
	if cout, _, code := runCtx(context.Background(), "config", "--config", cfg); code != 0 || strings.Contains(cout, token) ||
		!strings.Contains(cout, "url_env: GPUPRICE_SLACK_WEBHOOK_URL") {
		t.Errorf("config output (%d):\n%s", code, cout)
	}
}

// TestServeEvaluatesAlerts: serve --run-now evaluates the rules once the first
// collections are in, tells the webhook once and exports the firing count.
func TestServeEvaluatesAlerts(t *testing.T) {
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	hook := newReceiver(t)
	t.Setenv("GPUPRICE_ALERT_WEBHOOK_URL", hook.srv.URL+"/hook/serve-secret-token")
	appendConfig(t, cfg, `alerts:
  schedule: "0 0 1 1 *"
  rules:
    - {name: any-h100, kind: price_below, gpu: H100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: 1000}
  notifiers:
    - {name: hook, kind: webhook, url_env: GPUPRICE_ALERT_WEBHOOK_URL}
`)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "serve.duckdb")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errb, done := serveInProcess(ctx, "--config", cfg, "--store", dsn, "serve", "--listen", "127.0.0.1:0", "--run-now")
	waitFor(t, "the alert webhook", func() bool {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d early:\n%s", code, errb.String())
		default:
		}
		return hook.count() > 0
	})
	var p alert.Payload
	hook.last(t, &p)
	if len(p.Events) != 1 || p.Events[0].Rule != "any-h100" || p.Events[0].Status != alert.StatusFiring {
		t.Errorf("payload %+v", p)
	}
	base := regexp.MustCompile(`serving on (http://[0-9.:]+)`).FindStringSubmatch(out.String())
	if base == nil {
		t.Fatalf("no address in %q", out.String())
	}
	waitFor(t, "the firing alert in /metrics", func() bool { // set once the evaluation returns
		_, m := get(t, base[1]+"/metrics")
		return strings.Contains(m, `gpuprice_alerts_firing{rule="any-h100"} 1`)
	})
	// serve's evaluation is kept in the store's alert history, which the API lists.
	var hist struct {
		Data struct {
			Recent []alert.Episode `json:"recent"`
		} `json:"data"`
	}
	if code, body := get(t, base[1]+"/api/v1/alerts"); code != 200 || json.Unmarshal([]byte(body), &hist) != nil ||
		len(hist.Data.Recent) != 1 || hist.Data.Recent[0].Rule != "any-h100" || hist.Data.Recent[0].State != alert.EpisodeFiring ||
		hist.Data.Recent[0].Fired.Series == nil || len(hist.Data.Recent[0].Fired.Compared) == 0 {
		t.Errorf("alert history after serve's evaluation: %d %s", code, body)
	}
	cancel()
	if code := <-done; code != cli.ExitInterrupted || hook.count() != 1 {
		t.Errorf("serve exited %d, webhook posts %d", code, hook.count())
	}
	if strings.Contains(out.String()+errb.String(), "serve-secret-token") {
		t.Errorf("serve printed the webhook URL")
	}
}

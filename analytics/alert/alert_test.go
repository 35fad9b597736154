package alert

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

var t0 = time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func dayPrice(day time.Time, provider, tier string, price float64) analytics.DayPrice {
	b := store.Bar{Provider: provider, SKU: "s", Pricing: schemas.OnDemand, GPU: "H100-SXM-80GB", Tier: tier, Start: day, Close: price}
	return analytics.DayPrice{Day: day, Series: b.SeriesKey(), Bar: b, Price: price}
}

// Ratio 4.0/2.5 = 1.6 on the first day, 4.5/2.5 = 1.8 on the last: +12.5 %.
func TestEvalSpreadShift(t *testing.T) {
	d1, d8 := t0.Truncate(24*time.Hour).Add(-7*24*time.Hour), t0.Truncate(24*time.Hour)
	days := analytics.Spreads([]analytics.DayPrice{
		dayPrice(d1, "aws", schemas.TierHyperscaler, 4.0), dayPrice(d1, "lambda", schemas.TierSpecialist, 2.5),
		dayPrice(d8, "aws", schemas.TierHyperscaler, 4.5), dayPrice(d8, "lambda", schemas.TierSpecialist, 2.5),
	})
	for _, c := range []struct {
		threshold float64
		fire      bool
	}{{10, true}, {12.5, true}, {15, false}} {
		r := Rule{Name: "r", Kind: SpreadShift, GPU: "H100-SXM-80GB", ThresholdPct: c.threshold}
		got := EvalSpreadShift(r, days)
		if len(got) != 1 || !near(got[0].Value, 12.5) || got[0].Firing != c.fire || got[0].Subject != "H100-SXM-80GB on_demand" ||
			!near(got[0].Detail["first_ratio"], 1.6) || !near(got[0].Detail["last_ratio"], 1.8) {
			t.Errorf("threshold %g: %+v", c.threshold, got)
		}
	}
	if got := EvalSpreadShift(Rule{Name: "r", Kind: SpreadShift, Pricing: schemas.Spot, ThresholdPct: 1}, days); len(got) != 0 {
		t.Errorf("spot rule matched on-demand spreads: %+v", got)
	}
	// One day with a ratio: nothing has moved yet.
	one := analytics.Spreads([]analytics.DayPrice{dayPrice(d8, "aws", schemas.TierHyperscaler, 4.5), dayPrice(d8, "lambda", schemas.TierSpecialist, 2.5)})
	if got := EvalSpreadShift(Rule{Name: "r", Kind: SpreadShift, ThresholdPct: 0.001}, one); len(got) != 1 || got[0].Firing {
		t.Errorf("one day: %+v", got)
	}
}

func spotBar(zone string, start time.Time, open, close float64, seen time.Time) store.Bar {
	return store.Bar{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-1", Zone: zone, Pricing: schemas.Spot, GPU: "H100-SXM-80GB",
		Tier: schemas.TierHyperscaler, Start: start, Open: open, High: math.Max(open, close), Low: math.Min(open, close), Close: close,
		Mean: close, Count: 1, LastObservedAt: seen}
}

// Zone a: 2.0 carried in, then 2.2, 2.4, 2.2 (+10 %; returns ±ln(2.4/2.2));
// zone b: opens 3.0, closes 2.85 (−5 %); zone c: carried in, seen in the window,
// unchanged (0 %); zone d: carried in, not seen since (left out).
func TestEvalSpotMove(t *testing.T) {
	since := t0.Add(-24 * time.Hour)
	h := func(n int) time.Time { return since.Add(time.Duration(n) * time.Hour) }
	bars := []store.Bar{
		spotBar("a", h(-2), 2.0, 2.0, h(-2)), spotBar("a", h(1), 2.2, 2.2, h(1)), spotBar("a", h(2), 2.4, 2.4, h(2)), spotBar("a", h(3), 2.2, 2.2, h(3)),
		spotBar("b", h(5), 3.0, 2.85, h(5)),
		spotBar("c", h(-30), 1.5, 1.5, h(4)),
		spotBar("d", h(-30), 9.0, 9.0, h(-29)),
	}
	r := math.Log(2.4 / 2.2)
	annA := math.Sqrt2 * r * math.Sqrt(8760) // sample SD of {r, −r}, annualised over hourly bars

	series := EvalSpotMove(Rule{Name: "s", Kind: SpotMove, ThresholdPct: 8, By: "series"}, bars, since, t0)
	want := map[string]struct {
		move float64
		fire bool
	}{"a": {10, true}, "b": {-5, false}, "c": {0, false}}
	if len(series) != 3 {
		t.Fatalf("series: %+v", series)
	}
	for _, in := range series {
		w, ok := want[in.Labels["zone"]]
		if !ok || !near(in.Value, w.move) || in.Firing != w.fire {
			t.Errorf("series %s: move %v firing %v, want %+v", in.Subject, in.Value, in.Firing, w)
		}
		if in.Labels["zone"] == "a" && !near(in.Detail["annualised_volatility_pct"], annA*100) {
			t.Errorf("zone a volatility %v, want %v", in.Detail["annualised_volatility_pct"], annA*100)
		}
	}
	// The volatility is the one `gpuprice volatility --bar 1h` computes.
	v := analytics.SeriesVolatilityOf(bars[1:4], store.Hourly, t0, 0)
	if !near(v.Annualised, annA) {
		t.Fatalf("analytics disagrees: %v vs %v", v.Annualised, annA)
	}

	// By offering: median move of {10, −5, 0} = 0; volatility: only zone a has
	// two returns, so the median is its own.
	for _, c := range []struct {
		rule Rule
		fire bool
	}{
		{Rule{Name: "o", Kind: SpotMove, ThresholdPct: 1}, false},
		{Rule{Name: "o", Kind: SpotMove, VolatilityPct: annA*100 - 1}, true},
		{Rule{Name: "o", Kind: SpotMove, VolatilityPct: annA*100 + 1}, false},
		{Rule{Name: "o", Kind: SpotMove, VolatilityPct: 1, Provider: "vast"}, false},
	} {
		got := EvalSpotMove(c.rule, bars, since, t0)
		if c.rule.Provider == "vast" {
			if len(got) != 0 {
				t.Errorf("provider filter: %+v", got)
			}
			continue
		}
		if len(got) != 1 || got[0].Subject != "H100-SXM-80GB aws spot" || !near(got[0].Value, 0) || got[0].Firing != c.fire ||
			got[0].Detail["series"] != 3 {
			t.Errorf("%+v: %+v", c.rule, got)
		}
	}
}

func TestEvalPriceBelow(t *testing.T) {
	o := func(provider, pricing string, p float64) schemas.Observation {
		return schemas.Observation{Provider: provider, SKU: "x", Region: "r", GPU: "H100-SXM-80GB", Pricing: pricing, PriceUSDGPUHour: p}
	}
	latest := []schemas.Observation{o("lambda", schemas.OnDemand, 2.49), o("vast", schemas.Spot, 1.2), o("gmi", schemas.OnDemand, 1.99)}
	got := EvalPriceBelow(Rule{Name: "p", Kind: PriceBelow, GPU: "H100-SXM-80GB", BelowUSDGPUHour: 2}, latest)
	if len(got) != 1 || got[0].Value != 1.99 || !got[0].Firing || got[0].Labels["provider"] != "gmi" || got[0].Detail["offers"] != 2 {
		t.Fatalf("%+v", got)
	}
	if got := EvalPriceBelow(Rule{Name: "p", Kind: PriceBelow, GPU: "H100-SXM-80GB", BelowUSDGPUHour: 1.99}, latest); got[0].Firing {
		t.Errorf("1.99 is not below 1.99: %+v", got)
	}
	if got := EvalPriceBelow(Rule{Name: "p", Kind: PriceBelow, GPU: "B200", BelowUSDGPUHour: 9}, latest); got != nil {
		t.Errorf("no offers: %+v", got)
	}
}

func TestEvalSourceFailed(t *testing.T) {
	f := schemas.Run{Status: schemas.RunFailed, Error: "fetch: HTTP 503\nmore"}
	ok := schemas.Run{Status: schemas.RunOK}
	got := EvalSourceFailed(Rule{Name: "down", Kind: SourceFailed}, map[string][]schemas.Run{
		"aws": {f, f, f}, "vast": {f, ok, f}, "never": nil,
	})
	if len(got) != 2 || got[0].Subject != "aws" || !got[0].Firing || got[0].Value != 3 || !strings.HasSuffix(got[0].Summary, "HTTP 503") ||
		got[1].Subject != "vast" || got[1].Firing || got[1].Value != 1 {
		t.Fatalf("%+v", got)
	}
}

// fakeReader serves fixed data; prices changes what Latest returns.
type fakeReader struct {
	prices []schemas.Observation
	err    error
}

func (f *fakeReader) Bars(context.Context, store.BarQuery) ([]store.Bar, error) { return nil, f.err }
func (f *fakeReader) Latest(context.Context, store.Filter) ([]schemas.Observation, error) {
	return f.prices, f.err
}
func (f *fakeReader) Runs(context.Context, string, int) ([]schemas.Run, error) { return nil, f.err }

type recorder struct {
	got  [][]Event
	fail error
}

func (r *recorder) Notify(_ context.Context, ev []Event) error {
	r.got = append(r.got, ev)
	return r.fail
}

func TestEngineDeduplicatesResolvesAndRetries(t *testing.T) {
	rule := Rule{Name: "cheap", Kind: PriceBelow, GPU: "H100-SXM-80GB", BelowUSDGPUHour: 2}
	ok, bad, am := &recorder{}, &recorder{fail: errors.New("HTTP 500")}, &recorder{}
	e := Engine{Rules: []Rule{rule}, Targets: []Target{
		{Config: NotifierConfig{Name: "ok", Kind: Webhook}, Notifier: ok},
		{Config: NotifierConfig{Name: "bad", Kind: Slack}, Notifier: bad},
		{Config: NotifierConfig{Name: "am", Kind: Alertmanager, TTL: 4 * time.Hour}, Notifier: am},
	}}
	cheap := []schemas.Observation{{Provider: "gmi", GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, PriceUSDGPUHour: 1.9}}
	rd := &fakeReader{prices: cheap}
	st := NewState()

	// A dry run tells nobody and changes nothing.
	rep := e.Run(context.Background(), rd, st, t0, true)
	if len(ok.got)+len(bad.got) != 0 || len(st.Alerts) != 0 || rep.Rules[0].Instances[0].State != Started || len(rep.Deliveries) != 3 {
		t.Fatalf("dry run: %+v %+v", rep, st)
	}

	rep = e.Run(context.Background(), rd, st, t0, false)
	if len(ok.got) != 1 || ok.got[0][0].Status != StatusFiring || len(bad.got) != 1 || !rep.Failed() {
		t.Fatalf("first: ok %v bad %v", ok.got, bad.got)
	}
	if st.Alerts["cheap/H100-SXM-80GB on_demand"].Errors["bad"] != "HTTP 500" {
		t.Fatalf("failure not recorded: %+v", st.Alerts)
	}
	// Still firing: only the failed notifier is told again; then it recovers.
	bad.fail = nil
	rep = e.Run(context.Background(), rd, st, t0.Add(15*time.Minute), false)
	if len(ok.got) != 1 || len(bad.got) != 2 || len(am.got) != 1 || rep.Failed() || rep.Rules[0].Instances[0].State != Firing {
		t.Fatalf("second: ok %d bad %d am %d %+v", len(ok.got), len(bad.got), len(am.got), rep)
	}
	// Alertmanager is posted again once a quarter of its TTL has passed.
	e.Run(context.Background(), rd, st, t0.Add(61*time.Minute), false)
	if len(ok.got) != 1 || len(bad.got) != 2 || len(am.got) != 2 || !am.got[1][0].Repeat {
		t.Fatalf("refresh: ok %d bad %d am %d", len(ok.got), len(bad.got), len(am.got))
	}
	// With a repeat interval, the others are told again too.
	e.RepeatInterval = time.Hour
	e.Run(context.Background(), rd, st, t0.Add(62*time.Minute), false)
	if len(ok.got) != 2 || !ok.got[1][0].Repeat || len(bad.got) != 2 { // bad was last told at +15m
		t.Fatalf("repeat: ok %d bad %d", len(ok.got), len(bad.got))
	}
	// The price rises: the alert resolves, everyone is told once, the entry goes.
	rd.prices = []schemas.Observation{{Provider: "gmi", GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, PriceUSDGPUHour: 2.1}}
	rep = e.Run(context.Background(), rd, st, t0.Add(2*time.Hour), false)
	last := ok.got[len(ok.got)-1][0]
	if rep.Rules[0].Instances[0].State != Resolved || last.Status != StatusResolved || !last.EndsAt.Equal(t0.Add(2*time.Hour)) ||
		!last.StartsAt.Equal(t0) || len(st.Alerts) != 0 {
		t.Fatalf("resolve: %+v %+v", last, st.Alerts)
	}
	n := len(ok.got)
	e.Run(context.Background(), rd, st, t0.Add(3*time.Hour), false)
	if len(ok.got) != n {
		t.Fatalf("resolved alert sent again")
	}
	// A store error keeps the state: no resolution, no new firing.
	rd.prices = cheap
	e.Run(context.Background(), rd, st, t0.Add(4*time.Hour), false)
	rd.err = errors.New("store down")
	rep = e.Run(context.Background(), rd, st, t0.Add(5*time.Hour), false)
	if rep.Rules[0].Error == "" || len(st.Alerts) != 1 || st.Alerts["cheap/H100-SXM-80GB on_demand"].EndsAt != (time.Time{}) {
		t.Fatalf("store error: %+v %+v", rep, st.Alerts)
	}
	// A rule removed from the configuration takes its entries with it.
	rd.err = nil
	e.Rules = nil
	e.Run(context.Background(), rd, st, t0.Add(6*time.Hour), false)
	if len(st.Alerts) != 0 {
		t.Fatalf("removed rule kept: %+v", st.Alerts)
	}
}

func TestStateSaveLoad(t *testing.T) {
	p := t.TempDir() + "/sub/state.json"
	s, err := LoadState(p)
	if err != nil || len(s.Alerts) != 0 {
		t.Fatal(s, err)
	}
	s.Step([]Result{{Rule: Rule{Name: "r"}, Instances: []Instance{{Rule: "r", Subject: "x", Firing: true, Value: 1.5}}}}, t0)
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	back, err := LoadState(p)
	if err != nil || back.Alerts["r/x"] == nil || !back.Alerts["r/x"].StartsAt.Equal(t0) || back.Alerts["r/x"].Value != 1.5 {
		t.Fatalf("%+v %v", back, err)
	}
}

func TestConfigValidate(t *testing.T) {
	var c Config
	body := `
schedule: "*/5 * * * *"
rules:
  - {name: a, kind: spread_shift, gpu: H100-SXM-80GB, window: 7d, threshold_pct: 10}
  - {name: b, kind: spot_move, window: 36h, threshold_pct: 15, by: series}
  - {name: c, kind: price_below, gpu: H100-SXM-80GB, below_usd_gpu_hour: 2}
  - {name: d, kind: source_failed, runs: 2}
notifiers:
  - {name: w, kind: webhook, url_env: HOOK}
  - {name: am, kind: alertmanager, url: "http://am:9093", ttl: 1h, rules: [a]}
  - {name: l, kind: log}
`
	if err := yaml.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.Rules[0].Window) != 7*24*time.Hour || time.Duration(c.Rules[1].Window) != 36*time.Hour || c.Rules[1].Window.String() != "36h0m0s" {
		t.Errorf("windows %v %v", c.Rules[0].Window, c.Rules[1].Window)
	}
	if got := c.SecretEnv(); len(got) != 1 || got[0] != "HOOK" {
		t.Errorf("SecretEnv %v", got)
	}
	for body, want := range map[string]string{
		"rules: [{name: a, kind: spread_shift}]\nnotifiers: [{name: l, kind: log}]":                                           "alerts.rules[0] (a).threshold_pct",
		"rules: [{name: a, kind: nope}]\nnotifiers: [{name: l, kind: log}]":                                                   "alerts.rules[0] (a).kind",
		"rules: [{name: a, kind: price_below, gpu: X, below_usd_gpu_hour: 1, window: 2d}]\nnotifiers: [{name: l, kind: log}]": "window: not used",
		"rules: [{name: a, kind: source_failed}, {name: a, kind: source_failed}]\nnotifiers: [{name: l, kind: log}]":          "name used twice",
		"rules: [{name: a, kind: source_failed}]":                                                                             "no notifier",
		"notifiers: [{name: s, kind: slack, url: 'https://hooks.slack.com/services/T/B/x'}]":                                  "is a secret",
		"notifiers: [{name: s, kind: slack}]":                                                                                 "url_env: required",
		"notifiers: [{name: am, kind: alertmanager, url: 'http://u:pw@am:9093'}]":                                             "holds credentials",
		"notifiers: [{name: w, kind: webhook, url_env: H, rules: [zzz]}]":                                                     "no rule named",
		"schedule: 'every day'": "alerts.schedule",
	} {
		var c Config
		err := yaml.Unmarshal([]byte(body), &c)
		if err == nil {
			err = c.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	var s Span
	if err := yaml.Unmarshal([]byte("x: 0d"), &struct {
		X *Span `yaml:"x"`
	}{&s}); err == nil {
		t.Errorf("0d accepted")
	}
}

func TestBuildTargetsNeedsEnvironment(t *testing.T) {
	env := map[string]string{"HOOK": "https://hooks.example/T/secret-token"}
	_, err := BuildTargets([]NotifierConfig{{Name: "w", Kind: Webhook, URLEnv: "HOOK"}, {Name: "s", Kind: Slack, URLEnv: "MISSING"}},
		nil, func(k string) string { return env[k] }, nil)
	if err == nil || !strings.Contains(err.Error(), "$MISSING is not set") || strings.Contains(err.Error(), "secret-token") {
		t.Fatalf("%v", err)
	}
}

func TestPayloads(t *testing.T) {
	ev := []Event{
		{Status: StatusFiring, Rule: "r", Summary: "H100: $1.9", Value: 1.9, Threshold: 2, Unit: "usd_gpu_hour",
			Labels: map[string]string{"alertname": "r"}, StartsAt: t0},
		{Status: StatusResolved, Rule: "q", Summary: "aws ok", Labels: map[string]string{"alertname": "q"}, StartsAt: t0, EndsAt: t0.Add(time.Hour)},
	}
	if got := SlackText(ev); got != ":rotating_light: FIRING *r* H100: $1.9\n:white_check_mark: RESOLVED *q* aws ok" {
		t.Errorf("slack %q", got)
	}
	am := AMAlerts(ev, t0.Add(time.Minute), time.Hour)
	if !am[0].EndsAt.Equal(t0.Add(61*time.Minute)) || !am[1].EndsAt.Equal(t0.Add(time.Hour)) || am[0].Annotations["value"] != "1.9" {
		t.Errorf("am %+v", am)
	}
}

// signalReader is a fakeReader that also keeps interruption signals.
type signalReader struct {
	fakeReader
	sigs []schemas.Signal
}

func (s *signalReader) Signals(_ context.Context, q store.SignalQuery) ([]schemas.Signal, error) {
	var out []schemas.Signal
	for _, g := range s.sigs {
		if (q.GPU == "" || g.GPU == q.GPU) && (q.Kind == "" || g.Kind == q.Kind) &&
			(q.Until.IsZero() || g.EffectiveAt.Before(q.Until)) && (q.Since.IsZero() || !g.EffectiveAt.Before(q.Since)) {
			out = append(out, g)
		}
	}
	return out, nil
}

// TestRiskRiseFiresAndResolves: p4d.24xlarge in us-east-1 moves from <5% (band 0)
// to 10-15% (band 2) on day 10: a 7-day risk_rise rule fires from then, tells the
// notifier once, and resolves when the band falls back to <5% (day 12). Another
// series whose band fell, one whose first band is in the window and one of another
// GPU never fire; a store without signals is an error of the rule.
func TestRiskRiseFiresAndResolves(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 10, d, 0, 0, 0, 0, time.UTC) }
	sig := func(sku, region, gpu string, d int, band float64, label string) schemas.Signal {
		return schemas.Signal{Provider: "aws", SKU: sku, Region: region, GPU: gpu, Kind: schemas.SignalInterruption,
			EffectiveAt: day(d), Value: band, Label: label}
	}
	rd := &signalReader{sigs: []schemas.Signal{
		sig("p4d.24xlarge", "eu-west-1", "A100-SXM-40GB", 1, 4, ">20%"),
		sig("p4d.24xlarge", "eu-west-1", "A100-SXM-40GB", 10, 2, "10-15%"),
		sig("p4d.24xlarge", "us-east-1", "A100-SXM-40GB", 1, 0, "<5%"),
		sig("p4d.24xlarge", "us-east-1", "A100-SXM-40GB", 10, 2, "10-15%"),
		sig("p4d.24xlarge", "us-west-2", "A100-SXM-40GB", 9, 4, ">20%"),
		sig("p5.48xlarge", "us-east-1", "H100-SXM-80GB", 1, 0, "<5%"),
		sig("p5.48xlarge", "us-east-1", "H100-SXM-80GB", 10, 4, ">20%"),
	}}
	rule := Rule{Name: "a100-risk", Kind: RiskRise, GPU: "A100-SXM-40GB", Window: Span(7 * 24 * time.Hour)}
	if err := (Config{Rules: []Rule{rule}, Notifiers: []NotifierConfig{{Name: "log", Kind: Log}}}).Validate(); err != nil {
		t.Fatal(err)
	}
	hook := &recorder{}
	e := Engine{Rules: []Rule{rule}, Targets: []Target{{Config: NotifierConfig{Name: "hook", Kind: Webhook}, Notifier: hook}}}
	st := NewState()

	rep := e.Run(context.Background(), rd, st, day(9), false)
	if len(rep.Rules[0].Instances) != 0 || len(hook.got) != 0 {
		t.Fatalf("day 9, before any move: %+v", rep.Rules[0])
	}
	rep = e.Run(context.Background(), rd, st, day(11), false)
	var firing []InstanceReport
	for _, in := range rep.Rules[0].Instances {
		if in.Firing {
			firing = append(firing, in)
		}
	}
	if len(firing) != 1 || firing[0].Subject != "aws p4d.24xlarge us-east-1" || firing[0].Value != 2 ||
		firing[0].Threshold != 0 || firing[0].Labels["band_now"] != "10-15%" || firing[0].Labels["gpu"] != "A100-SXM-40GB" ||
		len(hook.got) != 1 || hook.got[0][0].Status != StatusFiring {
		t.Fatalf("day 11: firing %+v, notified %v", firing, hook.got)
	}
	if !strings.Contains(firing[0].Summary, "interruption band <5% → 10-15% since 2026-10-04T00:00:00Z") {
		t.Errorf("summary %q", firing[0].Summary)
	}
	e.Run(context.Background(), rd, st, day(11).Add(time.Hour), false)
	if len(hook.got) != 1 {
		t.Fatalf("still firing, told again: %d", len(hook.got))
	}
	rd.sigs = append(rd.sigs[:4:4], append([]schemas.Signal{sig("p4d.24xlarge", "us-east-1", "A100-SXM-40GB", 12, 0, "<5%")},
		rd.sigs[4:]...)...)
	rep = e.Run(context.Background(), rd, st, day(13), false)
	last := hook.got[len(hook.got)-1][0]
	if len(hook.got) != 2 || last.Status != StatusResolved || len(st.Alerts) != 0 {
		t.Fatalf("day 13, back to <5%%: notified %d, last %+v, state %+v", len(hook.got), last, st.Alerts)
	}
	if res := Evaluate(context.Background(), &fakeReader{}, []Rule{rule}, nil, day(13)); res[0].Err == nil ||
		!strings.Contains(res[0].Err.Error(), "keeps no interruption signals") {
		t.Errorf("a store without signals: %v", res[0].Err)
	}
}

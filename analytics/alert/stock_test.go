package alert

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// TestStockAlertsFireAndResolve: out_of_stock, back_in_stock and capacity_below
// over constructed stock signals, through the engine (one notifier), at three times:
//
//   - runpod secure (GPUs): 8 at 00:00, 0 at 01:00 and 02:00, 16 at 03:00 and 27:00;
//   - runpod community: 0 at 00:00 only (never in stock: no out_of_stock);
//   - crusoe (instances of 8 GPUs): 2 at 00:00 (16 GPUs), no later signal: it holds
//     until 03:00 (analytics.StockHold), then is not observed.
func TestStockAlertsFireAndResolve(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	h := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Hour))) }
	sig := func(provider, sku string, at float64, v float64, attrs ...string) schemas.Signal {
		a := map[string]string{}
		for i := 0; i+1 < len(attrs); i += 2 {
			a[attrs[i]] = attrs[i+1]
		}
		return schemas.Signal{Provider: provider, SKU: sku, GPU: "H100-SXM-80GB", Kind: schemas.SignalStock,
			EffectiveAt: h(at), Value: v, Label: "x", Attrs: a}
	}
	rd := &signalReader{sigs: []schemas.Signal{
		sig("crusoe", "h100.8x", 0, 2, "unit", "instances", "gpu_count", "8"),
		sig("runpod", "H100:community", 0, 0),
		sig("runpod", "H100:secure", 0, 8), sig("runpod", "H100:secure", 1, 0), sig("runpod", "H100:secure", 2, 0),
		sig("runpod", "H100:secure", 3, 16), sig("runpod", "H100:secure", 27, 16),
		// Another GPU, out of stock after being in: not selected by the rules' gpu.
		{Provider: "runpod", SKU: "A100:secure", GPU: "A100-SXM-80GB", Kind: schemas.SignalStock, EffectiveAt: h(0),
			Value: 1},
		{Provider: "runpod", SKU: "A100:secure", GPU: "A100-SXM-80GB", Kind: schemas.SignalStock, EffectiveAt: h(1)},
	}}
	rules := []Rule{
		{Name: "h100-out", Kind: OutOfStock, GPU: "H100-SXM-80GB"},
		{Name: "h100-back", Kind: BackInStock, GPU: "H100-SXM-80GB"},
		{Name: "h100-capacity", Kind: CapacityBelow, GPU: "H100-SXM-80GB", BelowGPUs: 20},
	}
	if err := (Config{Rules: rules, Notifiers: []NotifierConfig{{Name: "log", Kind: Log}}}).Validate(); err != nil {
		t.Fatal(err)
	}
	hook := &recorder{}
	e := Engine{Rules: rules, Targets: []Target{{Config: NotifierConfig{Name: "hook", Kind: Webhook}, Notifier: hook}}}
	st := NewState()
	firing := func(rep Report) map[string]InstanceReport {
		out := map[string]InstanceReport{}
		for _, rr := range rep.Rules {
			if rr.Error != "" {
				t.Fatalf("rule %s: %s", rr.Rule, rr.Error)
			}
			for _, in := range rr.Instances {
				if in.Firing && in.State != Resolved {
					out[rr.Rule+" "+in.Subject] = in
				}
			}
		}
		return out
	}

	// 01:30: secure is out since 01:00 (in at 00:00); runpod's H100 capacity is 0
	// GPUs and crusoe's 2 × 8 = 16, both below 20.
	got := firing(e.Run(context.Background(), rd, st, h(1.5), false))
	want := []string{"h100-out runpod H100:secure", "h100-capacity runpod H100-SXM-80GB",
		"h100-capacity crusoe H100-SXM-80GB"}
	if len(got) != len(want) {
		t.Fatalf("01:30 firing %v, want %v", keys(got), want)
	}
	for _, w := range want {
		if _, ok := got[w]; !ok {
			t.Errorf("01:30: %s not firing (%v)", w, keys(got))
		}
	}
	if in := got["h100-out runpod H100:secure"]; !strings.Contains(in.Summary,
		"out of stock since 2026-11-20T01:00:00Z (last in stock 2026-11-20T00:00:00Z)") {
		t.Errorf("out_of_stock summary %q", in.Summary)
	}
	if in := got["h100-capacity crusoe H100-SXM-80GB"]; in.Value != 16 || in.Threshold != 20 || in.Unit != "gpus" {
		t.Errorf("crusoe capacity %+v", in)
	}
	if len(hook.got) != 1 || len(hook.got[0]) != 3 {
		t.Fatalf("01:30 notified %+v", hook.got)
	}

	// 03:30: secure is back (16 GPUs, out within the last 24 h): out_of_stock
	// resolves, back_in_stock fires; runpod's capacity is 16, still below 20;
	// crusoe's signal no longer holds: its capacity alert resolves.
	got = firing(e.Run(context.Background(), rd, st, h(3.5), false))
	if len(got) != 2 {
		t.Fatalf("03:30 firing %v", keys(got))
	}
	if in, ok := got["h100-back runpod H100:secure"]; !ok || in.Value != 16 ||
		!strings.Contains(in.Summary, "back in stock (16 gpus) at 2026-11-20T03:00:00Z, out of stock within the last 1d") {
		t.Errorf("back_in_stock %+v", in)
	}
	if in := got["h100-capacity runpod H100-SXM-80GB"]; in.Value != 16 {
		t.Errorf("runpod capacity %+v", in)
	}
	statuses := map[string]int{}
	for _, ev := range hook.got[len(hook.got)-1] {
		statuses[string(ev.Status)]++
	}
	if statuses[string(StatusFiring)] != 1 || statuses[string(StatusResolved)] != 2 {
		t.Errorf("03:30 notified %v", statuses)
	}

	// 28:00: in stock for a whole day (the 03:00 signal in force when the window
	// began, 16 again at 27:00): back_in_stock resolves; runpod's capacity is still
	// 16 (firing, told once).
	got = firing(e.Run(context.Background(), rd, st, h(28), false))
	if len(got) != 1 || got["h100-capacity runpod H100-SXM-80GB"].Value != 16 {
		t.Fatalf("28:00 firing %v", keys(got))
	}
	if last := hook.got[len(hook.got)-1]; len(last) != 1 || last[0].Status != StatusResolved ||
		last[0].Rule != "h100-back" {
		t.Errorf("28:00 notified %+v", last)
	}

	for _, bad := range []Rule{
		{Name: "x", Kind: CapacityBelow, GPU: "H100-SXM-80GB"},
		{Name: "x", Kind: OutOfStock, Pricing: "spot"},
		{Name: "x", Kind: BackInStock, BelowGPUs: 3},
	} {
		if err := (Config{Rules: []Rule{bad}}).Validate(); err == nil {
			t.Errorf("rule %+v accepted", bad)
		}
	}
	if res := Evaluate(context.Background(), &fakeReader{}, rules[:1], nil, h(2)); res[0].Err == nil ||
		!strings.Contains(res[0].Err.Error(), "keeps no stock signals") {
		t.Errorf("a store without signals: %v", res[0].Err)
	}
}

func keys(m map[string]InstanceReport) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

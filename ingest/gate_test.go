package ingest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

func peerRow(provider, sku, region string, usdGPUHour float64) schemas.Observation {
	return schemas.Observation{ObservedAt: t0, EffectiveAt: t0, Provider: provider, SKU: sku, Region: region,
		GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, PriceUSDGPUHour: usdGPUHour, GPUCount: 1, Tier: schemas.TierMarketplace,
		PriceScope: schemas.ScopeInstance, PriceBasis: schemas.BasisListed}
}

func TestPeersJudge(t *testing.T) {
	current := []schemas.Observation{
		peerRow("lambda", "gpu_1x_h100_sxm5", "", 2.99),
		peerRow("coreweave", "h100", "", 2.69),
		peerRow("runpod", "NVIDIA H100 80GB HBM3:secure", "", 2.79),
		// Not peers: another GPU, a derived price, a GPU-only price.
		{Provider: "x", SKU: "a100", GPU: "A100-SXM-80GB", Pricing: schemas.OnDemand, PriceUSDGPUHour: 0.1},
		{Provider: "oci", SKU: "BM.GPU.H100.8", GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, PriceUSDGPUHour: 0.1, PriceBasis: schemas.BasisDerived},
		{Provider: "gcp", SKU: "nvidia-h100", GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, PriceUSDGPUHour: 0.1, PriceScope: schemas.ScopeGPUOnly},
	}
	p := NewPeers(DefaultSuspect(), current)
	// RunPod's community cloud placeholder: $0.50 against a $2.79 median.
	why := p.Judge(peerRow("runpod", "NVIDIA H100 80GB HBM3:community", "", 0.50))
	if !strings.HasPrefix(why, SuspectPrefix) || !strings.Contains(why, "peer median $2.79/GPU-h") || !strings.Contains(why, "of 3 current marketplace H100-SXM-80GB on_demand instance prices") {
		t.Errorf("placeholder: %q", why)
	}
	if why := p.Judge(peerRow("vast", "m:1", "", 12)); !strings.HasPrefix(why, SuspectPrefix) {
		t.Errorf("4.3× the median: %q", why)
	}
	for _, ok := range []float64{0.70, 2.0, 11.16} {
		if why := p.Judge(peerRow("vast", "m:2", "", ok)); why != "" {
			t.Errorf("$%v within [¼, 4]× the median: %q", ok, why)
		}
	}
	// Tiers are judged apart: a hyperscaler's $12.29 is no outlier among marketplace
	// prices, it has no hyperscaler peers here.
	hs := peerRow("azure", "Standard_ND96isr_H100_v5", "eastus", 12.29)
	hs.Tier = schemas.TierHyperscaler
	if why := p.Judge(hs); why != "" {
		t.Errorf("hyperscaler judged against marketplace peers: %q", why)
	}
	// Spot prices have no peers here: not judged. Nor is an unknown GPU.
	sp := peerRow("vast", "m:3", "", 0.01)
	sp.Pricing = schemas.Spot
	unk := peerRow("vast", "m:4", "", 0.01)
	unk.GPU = schemas.UnknownGPU
	if p.Judge(sp) != "" || p.Judge(unk) != "" {
		t.Error("judged without peers")
	}
	// Thresholds come from the configuration.
	strict := NewPeers(SuspectConfig{Below: 0.9, Above: 1.1, MinPeers: 3}, current)
	if strict.Judge(peerRow("vast", "m:5", "", 2.0)) == "" {
		t.Error("configured threshold 0.9 not applied")
	}
	if NewPeers(SuspectConfig{Disabled: true}, current).Judge(peerRow("vast", "m:6", "", 0.01)) != "" {
		t.Error("disabled gate judged")
	}
}

// A run holds suspect rows in quarantine with the reason and the peer median,
// counts them in the run, and never stores them; the rows it accepts become peers.
func TestCollectHoldsSuspectPrices(t *testing.T) {
	sink := newMemSink()
	c := newCollector(sink)
	c.Normalizer.GPUs = fakeGPUs{"H100 SXM": "H100-SXM-80GB"}
	c.Normalizer.Peers = NewPeers(DefaultSuspect(), nil) // an empty store: the run's own rows are the peers
	rows := []schemas.Observation{
		raw(func(o *schemas.Observation) { o.SKU, o.PriceNative, o.GPUCount = "a", 2.69, 1 }),
		raw(func(o *schemas.Observation) { o.SKU, o.PriceNative, o.GPUCount = "b", 2.99, 1 }),
		raw(func(o *schemas.Observation) { o.SKU, o.PriceNative, o.GPUCount = "c", 2.79, 1 }),
		raw(func(o *schemas.Observation) { o.SKU, o.PriceNative, o.GPUCount = "placeholder", 0.4, 1 }),
		raw(func(o *schemas.Observation) { o.SKU, o.PriceNative, o.GPUCount = "free", 0, 1 }),
	}
	res := c.Collect(context.Background(), "r", []Job{{Name: "runpod", Source: emitRows(rows)}})
	r := res[0]
	if r.RowsAccepted != 3 || r.RowsQuarantine != 1 || r.RowsSuspect != 1 || r.RowsNotOffered != 1 {
		t.Fatalf("run %+v: want 3 accepted, 1 quarantined and held as suspect (counted apart), 1 not offered", r.Run)
	}
	sink.quarantine = slices.DeleteFunc(sink.quarantine, func(q schemas.Quarantined) bool { return strings.Contains(q.Raw, `"free"`) })
	if len(sink.quarantine) != 1 || !strings.HasPrefix(sink.quarantine[0].Reason, SuspectPrefix) ||
		!strings.Contains(sink.quarantine[0].Reason, "$2.79") || !strings.Contains(sink.quarantine[0].Raw, `"placeholder"`) {
		t.Errorf("quarantine %+v", sink.quarantine)
	}
	for _, o := range sink.rows {
		if o.SKU == "placeholder" {
			t.Error("suspect row stored")
		}
	}
}

func emitRows(rows []schemas.Observation) sourceFunc {
	return func(_ context.Context, e scrapers.Emitter) error {
		for _, o := range rows {
			e.Emit(o)
		}
		return nil
	}
}

// Rows replayed from history (observed more than the window from now) are not
// judged by today's peers.
func TestPeersJudgeOnlyCurrentRows(t *testing.T) {
	p := NewPeers(DefaultSuspect(), []schemas.Observation{
		peerRow("a", "1", "", 2.5), peerRow("b", "2", "", 2.7), peerRow("c", "3", "", 2.9)})
	p.now, p.window = t0, peerWindow
	old := peerRow("vast", "m:1", "", 0.3)
	old.ObservedAt = t0.Add(-30 * 24 * time.Hour)
	if why := p.Judge(old); why != "" {
		t.Errorf("a month-old row judged: %q", why)
	}
	if why := p.Judge(peerRow("vast", "m:1", "", 0.3)); why == "" {
		t.Error("a current placeholder was not judged")
	}
}

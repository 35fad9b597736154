package analytics

import (
	"errors"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

// TestTermCurveAndBreakEven, by hand: on-demand 4.00 (x, the twin) and 2.00 (y),
// median 3.00; x's 1-year reservation at 2.40 is 40 % off its twin and 20 % below
// the median; its break-even is 2.40 / 3.00 = 80 % against the median and 60 %
// against the twin; at 60 % utilisation over 8,760 hours it costs 21,024 against
// 15,768 at the median (loses 5,256) and 21,024 at the twin (level).
func TestTermCurveAndBreakEven(t *testing.T) {
	od := []Offer{{Provider: "x", SKU: "a", Price: 4}, {Provider: "y", SKU: "b", Price: 2}}
	res := []Offer{{Provider: "x", SKU: "a:all-upfront", Pricing: schemas.Reserved1Y, Price: 2.4}}
	spot := []Offer{{Provider: "y", SKU: "b", Price: 1.2}}
	market, prov := TermCurve(map[string][]Offer{schemas.OnDemand: od, schemas.Reserved1Y: res, schemas.Spot: spot,
		schemas.LowPriority: spot})
	if len(market) != 3 || market[0].Pricing != schemas.OnDemand || market[1].Pricing != schemas.Spot ||
		market[2].Pricing != schemas.Reserved1Y {
		t.Fatalf("market points: %+v", market)
	}
	r := market[2]
	if r.Months != 12 || r.Hours != 8760 || r.Median != 2.4 || r.Pairs != 1 || *r.DiscountPct != 40 || *r.VsOnDemandPct != 20 {
		t.Errorf("reserved point: %+v (discount %v, vs median %v)", r, *r.DiscountPct, *r.VsOnDemandPct)
	}
	if market[0].Median != 3 || market[0].DiscountPct != nil || market[0].VsOnDemandPct != nil {
		t.Errorf("on-demand point: %+v", market[0])
	}
	if len(prov) != 4 || prov[0].Provider != "x" || prov[1].Pricing != schemas.Reserved1Y || *prov[1].VsOnDemandPct != 40 {
		t.Errorf("provider points: %+v", prov)
	}
	bes, err := BreakEvens("1y", 8760, 0.6, res, od, spot)
	if err != nil || len(bes) != 1 {
		t.Fatal(bes, err)
	}
	b := bes[0]
	if b.Market.BreakEven != 0.8 || b.Market.Committed != 21024 || b.Market.PayAsYouGo != 15768 || b.Market.Saving != -5256 {
		t.Errorf("against the median: %+v", *b.Market)
	}
	if b.Twin == nil || b.Twin.Alternative != 4 || b.Twin.BreakEven != 0.6 || b.Twin.Saving != 0 {
		t.Errorf("against the twin: %+v", b.Twin)
	}
	if b.Spot.BreakEven != 2 {
		t.Errorf("against spot: %+v", *b.Spot)
	}
	s := b.Market.Sentence("quote", "1y", "on-demand")
	if s != "At your 60 % utilisation this one-year quote loses to on-demand by $5256 over the term per GPU; above 80 % it wins." {
		t.Errorf("sentence: %s", s)
	}
	c, _ := CostAtUtilisation(2.4, 3, 8760, 0.9)
	if c.Saving != 2628 || !strings.Contains(c.Sentence("quote", "1y", "on-demand"), "beats on-demand by $2628") {
		t.Errorf("at 90 %%: %+v %s", c, c.Sentence("quote", "1y", "on-demand"))
	}
	if _, err := CostAtUtilisation(2.4, 3, 8760, 1.2); err == nil {
		t.Error("utilisation 1.2 accepted")
	}
}

// TestServe, by hand: 70e9 parameters at fp8 are 70 GB, which fits one
// H100-SXM-80GB (80 GB): decode reads 70 GB per token at 3.35 TB/s × 0.658 →
// 31.49 tokens/s; at $2.00 per GPU-hour that is 2 × 1e6 / (31.49 × 3600) =
// $17.6423 per 1M output tokens. At fp16 (140 GB) it needs two GPUs (TP 2): the
// tokens/s double and so does the hourly price, and it does not fit a 1-GPU offer.
func TestServe(t *testing.T) {
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := cat.Lookup("H100-SXM-80GB")
	c, err := Serve(h100, 8, 2, Model{Params: 70e9, Precision: FP8, Batch: 1}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	tps := 3.35e12 * 0.658 / 70e9
	if c.GPUs != 1 || math.Abs(c.OutputTokensPerSec-tps) > 0.001 || math.Abs(c.USDPer1MOutput-2e6/(tps*3600)) > 1e-5 ||
		math.Abs(c.USDPer1MOutput-17.6423) > 0.0001 {
		t.Errorf("fp8: %+v (want %.3f tok/s)", c, tps)
	}
	if in := 1979e12 * 0.638 / 140e9; math.Abs(c.InputTokensPerSec-in) > 0.01 {
		t.Errorf("prefill: %v, want %v", c.InputTokensPerSec, in)
	}
	c16, err := Serve(h100, 8, 2, Model{Params: 70e9, Precision: FP16, Batch: 1}, 0, 0)
	if err != nil || c16.GPUs != 2 || !strings.Contains(c16.TPNote, "tensor parallelism over 2 GPUs") ||
		math.Abs(c16.USDPer1MOutput-c.USDPer1MOutput*2) > 0.001 {
		t.Errorf("fp16 on 8: %+v %v", c16, err)
	}
	if _, err := Serve(h100, 1, 2, Model{Params: 70e9, Precision: FP16, Batch: 1}, 0, 0); !errors.Is(err, ErrNoFit) {
		t.Errorf("fp16 on one GPU: %v, want ErrNoFit", err)
	}
	// The KV cache of Llama 2 70B (80 layers, 8 KV heads, 128 dims) at fp8: 163,840
	// bytes a token; 8 sequences of 4,096 tokens are 5.37 GB more read per step.
	kv := KVBytesPerToken(80, 8, 128, 1)
	ck, _ := Serve(h100, 8, 2, Model{Params: 70e9, Precision: FP8, Batch: 8, Context: 4096, KVBytesPerToken: kv}, 0, 0)
	if kv != 163840 || ck.KVCacheGB != 5.369 || ck.GPUs != 1 ||
		math.Abs(ck.OutputTokensPerSec-8*3.35e12*0.658/(70e9+8*4096*kv)) > 0.01 {
		t.Errorf("with KV: %+v", ck)
	}
}

// TestPricingRankOrdersByTerm: kinds sort by term (issue 23): 1m, 6m, 12m, 36m, a
// reservation right after the commitment of its length, low priority last, the
// order `prices`, the report and the web app's tabs use.
func TestPricingRankOrdersByTerm(t *testing.T) {
	kinds := []string{"low_priority", "commitment_36m", "reserved_3y", "commitment_12m", "commitment_1m",
		"reserved_1y", "commitment_7m", "commitment_6m", "spot", "on_demand"}
	sort.SliceStable(kinds, func(i, j int) bool { return PricingRank(kinds[i]) < PricingRank(kinds[j]) })
	want := []string{"on_demand", "spot", "commitment_1m", "commitment_6m", "commitment_7m", "commitment_12m",
		"reserved_1y", "commitment_36m", "reserved_3y", "low_priority"}
	if !slices.Equal(kinds, want) {
		t.Errorf("sorted %v, want %v", kinds, want)
	}
}

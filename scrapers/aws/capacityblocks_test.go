package aws

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"gopkg.in/yaml.v3"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// cbPages serves the Capacity Block fixtures: p5.48xlarge in us-east-1 in two pages
// (NextToken checked), a throttled us-east-2, and no offering anywhere else.
func cbPages(t *testing.T) func(int, string, url.Values) (int, string) {
	return func(_ int, region string, form url.Values) (int, string) {
		switch {
		case region == "us-east-2":
			return http.StatusServiceUnavailable, file(t, "testdata/spot_history/throttled.xml")
		case region != "us-east-1" || form.Get("InstanceType") != "p5.48xlarge":
			return http.StatusOK, file(t, "testdata/capacity_blocks/empty.xml")
		case form.Get("NextToken") == "":
			return http.StatusOK, file(t, "testdata/capacity_blocks/p5_page1.xml")
		case form.Get("NextToken") != "eyJ2IjoiMSIsImMiOiJjYi1vZmZlcmluZ3MiLCJzIjoyfQ==":
			t.Errorf("NextToken = %q", form.Get("NextToken"))
		}
		return http.StatusOK, file(t, "testdata/capacity_blocks/p5_page2.xml")
	}
}

func mirroredSignals(sigs []schemas.Signal, base string) []schemas.Signal {
	out := slices.Clone(sigs)
	for i := range out {
		out[i].SourceURL = strings.Replace(out[i].SourceURL, base, "http://mirror", 1)
	}
	return out
}

// logTo sends the source's log to buf.
func logTo(s *Source, buf *bytes.Buffer) {
	s.cfg.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestCollectCapacityBlocks: the capacity_blocks part asks each region for each type
// with the documented parameters, follows NextToken, and sends one stock signal per
// (type, zone) with offerings, zeros for the region's other zones and a region-level
// zero where no zone was named; a throttled region is skipped with a warning; no price
// row is emitted. The signals are the golden collect_capacity_blocks_expected.json.
func TestCollectCapacityBlocks(t *testing.T) {
	f := newFakeAWS(t)
	f.cb = cbPages(t)
	s := newAPISource(t, f, map[string]any{"mode": "api", "collect": []any{"capacity_blocks"},
		"regions": []any{"us-east-1", "eu-west-1", "us-east-2"}, "capacity_block_types": []any{"p5.48xlarge", "p4d.24xlarge"}})
	var logs bytes.Buffer
	logTo(s, &logs)
	var sink rejectSink
	if err := s.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	// us-east-1: p5 (2 pages), p4d; eu-west-1: p5, p4d; us-east-2: p5 throttled, 3
	// attempts, then the region's other types are not asked.
	if want := []string{"us-east-1", "us-east-1", "us-east-1", "eu-west-1", "eu-west-1", "us-east-2", "us-east-2", "us-east-2"}; !slices.Equal(f.cbReg, want) {
		t.Errorf("DescribeCapacityBlockOfferings regions %v, want %v", f.cbReg, want)
	}
	var types []string
	for i, form := range f.cbReq {
		types = append(types, form.Get("InstanceType"))
		if form.Get("Action") != "DescribeCapacityBlockOfferings" || form.Get("InstanceCount") != "1" ||
			form.Get("CapacityDurationHours") != "24" || form.Get("StartDateRange") != "2026-11-01T12:00:00Z" ||
			form.Get("EndDateRange") != "2026-11-16T12:00:00Z" || form.Get("UltraserverType") != "" {
			t.Errorf("request %d = %v", i, form)
		}
	}
	if want := []string{"p5.48xlarge", "p5.48xlarge", "p4d.24xlarge", "p5.48xlarge", "p4d.24xlarge", "p5.48xlarge", "p5.48xlarge", "p5.48xlarge"}; !slices.Equal(types, want) {
		t.Errorf("types asked %v, want %v", types, want)
	}
	if f.cbReq[1].Get("NextToken") == "" || f.cbReq[0].Get("NextToken") != "" {
		t.Errorf("NextToken: first %q, second %q", f.cbReq[0].Get("NextToken"), f.cbReq[1].Get("NextToken"))
	}
	if len(sink.Rows) != 0 || len(f.ec2Req)+len(f.pricReq)+len(f.fileReq) != 0 {
		t.Errorf("rows %d; spot %d, price list %d, files %d requests: want none", len(sink.Rows), len(f.ec2Req), len(f.pricReq), len(f.fileReq))
	}
	if len(sink.rejects) != 1 || !strings.Contains(sink.rejects[0].Raw, "cb-0c9b8a7f6e5d4c3b2") ||
		!strings.Contains(sink.rejects[0].Reason, "without availability zone") {
		t.Errorf("rejects = %+v", sink.rejects)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "region=us-east-2") ||
		!strings.Contains(logs.String(), "types=p5.48xlarge,p4d.24xlarge") || !strings.Contains(logs.String(), "RequestLimitExceeded") {
		t.Errorf("no warning for the throttled region:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "wJalrXUtnFEMI") {
		t.Error("the secret key is in the log")
	}
	for _, sig := range sink.Signals {
		if err := sig.Validate(); err != nil {
			t.Error(err)
		}
		if sig.Region == "us-east-2" {
			t.Errorf("signal of the throttled region: %+v", sig)
		}
	}
	sigs := mirroredSignals(sink.Signals, f.URL)
	scrapertest.Golden(t, "testdata/collect_capacity_blocks_expected.json", sigs)

	// The hand-computed figures of us-east-1a: two offerings, the earliest 22 h 35 min
	// for $711.35, the other 24 h for $755.14, 8 GPUs each.
	var a *schemas.Signal
	for i := range sigs {
		if sigs[i].SKU == "p5.48xlarge:capacity-block" && sigs[i].Zone == "us-east-1a" {
			a = &sigs[i]
		}
	}
	if a == nil || a.Value != 1 || a.Label != "capacity-block" || a.Kind != schemas.SignalStock ||
		a.Attrs["unit"] != "instances" || a.Attrs["offerings"] != "2" || a.Attrs["requested_hours"] != "24" || a.Attrs["earliest_start"] != "2026-11-01T12:55:00Z" ||
		a.Attrs["duration_hours"] != "22.583333333" || a.Attrs["upfront_fee_usd"] != "711.35" ||
		a.Attrs["usd_gpu_hour"] != schemas.FormatNum(711.35/((22+35.0/60)*8)) ||
		a.Attrs["min_usd_gpu_hour"] != schemas.FormatNum(755.14/(24*8)) || a.Attrs["gpu_name"] != "NVIDIA H100 SXM" ||
		a.Attrs["gpu_count"] != "8" || a.Attrs["gpu_memory_gb"] != "80" || a.SourceURL != "http://mirror" ||
		!a.EffectiveAt.Equal(scrapertest.ObservedAt) {
		t.Errorf("p5.48xlarge us-east-1a = %+v", a)
	}
}

// TestCollectAPIDefaultsAskCapacityBlocks: in api mode the default parts include
// capacity_blocks, with the default types, beside the prices; the price rows are
// those of TestCollectAPI.
func TestCollectAPIDefaultsAskCapacityBlocks(t *testing.T) {
	f := newFakeAWS(t)
	f.pricing = pricingPages(t)
	f.ec2 = spotPages(t)
	s := newAPISource(t, f, map[string]any{"mode": "api", "regions": []any{"us-east-1"}})
	var sink rejectSink
	if err := s.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, form := range f.cbReq {
		types = append(types, form.Get("InstanceType"))
	}
	if !slices.Equal(types, DefaultCapacityBlockTypes) {
		t.Errorf("types asked %v, want %v", types, DefaultCapacityBlockTypes)
	}
	if len(find(sink.Rows, "p5.48xlarge", schemas.OnDemand)) != 1 || len(find(sink.Rows, "p5.48xlarge", schemas.Spot)) != 3 {
		t.Errorf("rows = %d", len(sink.Rows))
	}
	// No offering in the region: one region-level zero per type.
	if len(sink.Signals) != len(DefaultCapacityBlockTypes) {
		t.Fatalf("signals = %+v", sink.Signals)
	}
	for _, sig := range sink.Signals {
		if sig.Value != 0 || sig.Zone != "" || sig.Region != "us-east-1" || !strings.HasSuffix(sig.SKU, ":capacity-block") ||
			sig.Attrs["offerings"] != "0" || sig.Attrs["gpu_name"] == "" {
			t.Errorf("signal %+v", sig)
		}
	}
}

// TestCollectCapacityBlocksFailures: a refused permission stops the part after one
// call; a parameter error skips only its type; a page that fails drops the whole
// answer of its type (no partial zones) and the rest of the region; an answer that is
// not XML is a warning. The run never fails for this part and the prices stand.
func TestCollectCapacityBlocksFailures(t *testing.T) {
	type check func(t *testing.T, f *fakeAWS, sink *rejectSink, logs string)
	for name, c := range map[string]struct {
		cb    func(n int, region string, form url.Values) (int, string)
		check check
	}{
		"unauthorized": {
			cb: func(int, string, url.Values) (int, string) {
				return http.StatusForbidden, file(t, "testdata/capacity_blocks/unauthorized.xml")
			},
			check: func(t *testing.T, f *fakeAWS, sink *rejectSink, logs string) {
				if len(f.cbReq) != 1 || len(sink.Signals) != 0 || !strings.Contains(logs, "UnauthorizedOperation") {
					t.Errorf("%d requests, %d signals; log:\n%s", len(f.cbReq), len(sink.Signals), logs)
				}
			},
		},
		"invalid type": {
			cb: func(_ int, region string, form url.Values) (int, string) {
				if form.Get("InstanceType") == "p4d.24xlarge" {
					return http.StatusBadRequest, file(t, "testdata/capacity_blocks/invalid_type.xml")
				}
				return cbPages(t)(0, region, form)
			},
			check: func(t *testing.T, f *fakeAWS, sink *rejectSink, logs string) {
				// Each region: p4d refused (not retried), p5 still asked (us-east-1: 2 pages).
				if len(f.cbReq) != 5 || strings.Count(logs, "InvalidParameterValue") != 2 {
					t.Errorf("%d requests; log:\n%s", len(f.cbReq), logs)
				}
				for _, sig := range sink.Signals {
					if sig.SKU == "p4d.24xlarge:capacity-block" {
						t.Errorf("signal of a type not answered: %+v", sig)
					}
				}
				if n := len(sink.Signals); n != 3 { // p5: us-east-1a, us-east-1d, eu-west-1 region-level
					t.Errorf("%d signals: %+v", n, sink.Signals)
				}
			},
		},
		"second page fails": {
			cb: func(_ int, region string, form url.Values) (int, string) {
				if form.Get("NextToken") != "" {
					return http.StatusInternalServerError, `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>InternalError</Code><Message>An internal error has occurred</Message></Error></Errors><RequestID>0a1b2c3d-EXAMPLE</RequestID></Response>`
				}
				return cbPages(t)(0, region, form)
			},
			check: func(t *testing.T, f *fakeAWS, sink *rejectSink, logs string) {
				// us-east-1: page 1, page 2 × 3 attempts, then the region stops; eu-west-1 read.
				if want := []string{"us-east-1", "us-east-1", "us-east-1", "us-east-1", "eu-west-1", "eu-west-1"}; !slices.Equal(f.cbReg, want) {
					t.Errorf("regions asked %v, want %v", f.cbReg, want)
				}
				for _, sig := range sink.Signals {
					if sig.Region != "eu-west-1" {
						t.Errorf("signal from a failed answer: %+v", sig)
					}
				}
				if len(sink.Signals) != 2 || !strings.Contains(logs, "page 2") || !strings.Contains(logs, "types=p5.48xlarge,p4d.24xlarge") {
					t.Errorf("%d signals; log:\n%s", len(sink.Signals), logs)
				}
			},
		},
		"not XML": {
			cb: func(int, string, url.Values) (int, string) { return http.StatusOK, "<html>maintenance" },
			check: func(t *testing.T, f *fakeAWS, sink *rejectSink, logs string) {
				// One call per region (the rest of each region skipped), no signal.
				if len(f.cbReq) != 2 || len(sink.Signals) != 0 || strings.Count(logs, "capacity block offerings not read") != 2 {
					t.Errorf("%d requests, %d signals; log:\n%s", len(f.cbReq), len(sink.Signals), logs)
				}
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeAWS(t)
			f.ec2 = spotPages(t)
			f.cb = c.cb
			s := newAPISource(t, f, map[string]any{"mode": "api", "collect": []any{"spot", "capacity_blocks"},
				"regions": []any{"us-east-1", "eu-west-1"}, "capacity_block_types": []any{"p5.48xlarge", "p4d.24xlarge"}})
			if name == "invalid type" {
				s.opts.CapacityBlockTypes = []string{"p4d.24xlarge", "p5.48xlarge"}
			}
			var logs bytes.Buffer
			logTo(s, &logs)
			var sink rejectSink
			if err := s.Collect(context.Background(), &sink); err != nil {
				t.Fatalf("the run failed: %v", err)
			}
			if len(find(sink.Rows, "p5.48xlarge", schemas.Spot)) != 3 {
				t.Errorf("spot rows = %+v", sink.Rows)
			}
			c.check(t, f, &sink, logs.String())
		})
	}
}

// TestCapacityBlocksNotInPublicMode: public mode never calls
// DescribeCapacityBlockOfferings (nor leaves the part in its defaults), and refuses
// the part when it is asked for.
func TestCapacityBlocksNotInPublicMode(t *testing.T) {
	f := newFakeAWS(t)
	publicFiles(f)
	s := newAPISource(t, f, map[string]any{"mode": "public", "regions": []any{"us-east-2"}})
	if s.part(PartCapacityBlocks) {
		t.Error("capacity_blocks in public mode's default parts")
	}
	var sink rejectSink
	if err := s.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(f.cbReq) != 0 || len(sink.Signals) != 0 || len(sink.Rows) == 0 {
		t.Errorf("%d capacity block requests, %d signals, %d rows", len(f.cbReq), len(sink.Signals), len(sink.Rows))
	}
	if _, err := New(scrapertest.Config(t, Name, "", map[string]any{"mode": "public", "collect": []any{"capacity_blocks"}})); err == nil {
		t.Error("mode public with collect capacity_blocks accepted")
	}
	// auto: the part is in the defaults and runs only when credentials are found
	// (TestCollectAutoWithoutCredentials fails on any call).
	src, _ := New(scrapertest.Config(t, Name, "", nil))
	if !src.(*Source).part(PartCapacityBlocks) {
		t.Error("capacity_blocks not in auto mode's default parts")
	}
}

func TestCapacityBlockOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		ok   bool
	}{
		{map[string]any{"capacity_block_hours": 24}, true},
		{map[string]any{"capacity_block_hours": 336}, true},  // 14 days
		{map[string]any{"capacity_block_hours": 504}, true},  // 21 days
		{map[string]any{"capacity_block_hours": 4368}, true}, // 182 days
		{map[string]any{"capacity_block_hours": 0}, true},    // the default
		{map[string]any{"capacity_block_hours": 25}, false},
		{map[string]any{"capacity_block_hours": 12}, false},
		{map[string]any{"capacity_block_hours": 360}, false},  // 15 days
		{map[string]any{"capacity_block_hours": 4536}, false}, // 189 days
		{map[string]any{"capacity_block_hours": -24}, false},
		{map[string]any{"capacity_block_hours": "24h"}, false},
		{map[string]any{"capacity_block_types": []any{"p5.48xlarge", "p6-b300.48xlarge"}}, true},
		{map[string]any{"capacity_block_types": []any{"m5.large"}}, false},
		{map[string]any{"capacity_block_types": []any{"trn1.32xlarge"}}, false}, // no GPU in the family table
		{map[string]any{"capacity_block_types": []any{"p5.48xlarge", "p5.48xlarge"}}, false},
		{map[string]any{"capacity_block_types": []any{}}, false},
		{map[string]any{"capacity_block_window": "720h"}, true},
		{map[string]any{"capacity_block_window": "1344h"}, true},
		{map[string]any{"capacity_block_window": "1345h"}, false},
		{map[string]any{"capacity_block_window": "0s"}, false},
		{map[string]any{"capacity_block_window": "two weeks"}, false},
		{map[string]any{"capacity_block_regions": []any{"us-east-2"}}, true},
		{map[string]any{"capacity_block_regions": []any{"Ohio"}}, false},
		{map[string]any{"collect": []any{"capacity_blocks"}, "mode": "api"}, true},
	} {
		_, err := New(scrapertest.Config(t, Name, "", c.opts))
		if (err == nil) != c.ok {
			t.Errorf("New(%v) error = %v, want ok=%v", c.opts, err, c.ok)
		}
	}
	src, _ := New(scrapertest.Config(t, Name, "", map[string]any{"capacity_block_hours": 48, "capacity_block_window": "72h",
		"regions": []any{"us-east-1", "us-west-2"}, "collect": []any{"capacity_blocks"}}))
	s := src.(*Source)
	if s.cbHours != 48 || s.cbWindow != 72*time.Hour || !slices.Equal(s.opts.CapacityBlockRegions, []string{"us-east-1", "us-west-2"}) ||
		!slices.Equal(s.opts.CapacityBlockTypes, DefaultCapacityBlockTypes) {
		t.Errorf("source = %+v", s)
	}
	// capacity_blocks alone yields signals, no rows: no row count to expect.
	if exp := s.Expect(); exp.MinRows != 0 || len(exp.SKUs) != 0 {
		t.Errorf("expectation = %+v", exp)
	}
	// The defaults are GPU types of the family table that EC2 knows.
	known := gpuInstanceTypes()
	for _, it := range DefaultCapacityBlockTypes {
		if !slices.Contains(known, it) || specOf(it).GPUCount == 0 {
			t.Errorf("default type %s is not a GPU type of the table", it)
		}
	}
}

// TestCapacityBlockSignalsRules: the pure conversion's odd cases.
func TestCapacityBlockSignalsRules(t *testing.T) {
	at := scrapertest.ObservedAt
	day := func(d int) *time.Time { v := time.Date(2026, 11, d, 11, 30, 0, 0, time.UTC); return &v }
	res := capacityBlockSignals("us-west-2", []capacityBlockAnswer{
		{InstanceType: "p4d.24xlarge", Offerings: []ec2types.CapacityBlockOffering{
			// No duration fields: the dates give 48 h; no instance count: the one asked.
			{CapacityBlockOfferingId: awssdk.String("cb-1"), AvailabilityZone: awssdk.String("us-west-2b"),
				StartDate: day(3), EndDate: day(5), UpfrontFee: awssdk.String("1179.84"), CurrencyCode: awssdk.String("USD")},
			// A later block of two instances, cheaper per GPU-hour.
			{CapacityBlockOfferingId: awssdk.String("cb-2"), AvailabilityZone: awssdk.String("us-west-2b"),
				InstanceType: awssdk.String("p4d.24xlarge"), InstanceCount: awssdk.Int32(2), StartDate: day(6), EndDate: day(7),
				CapacityBlockDurationHours: awssdk.Int32(24), UpfrontFee: awssdk.String("1000"), CurrencyCode: awssdk.String("USD")},
			// A fee that is not a number, in a zone of another region.
			{CapacityBlockOfferingId: awssdk.String("cb-3"), AvailabilityZone: awssdk.String("us-east-2a"),
				StartDate: day(4), EndDate: day(5), CapacityBlockDurationHours: awssdk.Int32(24),
				UpfrontFee: awssdk.String("n/a"), CurrencyCode: awssdk.String("USD")},
			// Another instance type: rejected.
			{CapacityBlockOfferingId: awssdk.String("cb-4"), AvailabilityZone: awssdk.String("us-west-2b"),
				InstanceType: awssdk.String("p5.48xlarge"), StartDate: day(3)},
		}},
		{InstanceType: "p5en.48xlarge", Offerings: []ec2types.CapacityBlockOffering{
			{CapacityBlockOfferingId: awssdk.String("cb-5"), AvailabilityZone: awssdk.String("us-west-2c"),
				StartDate: day(3), EndDate: day(4), CapacityBlockDurationHours: awssdk.Int32(24),
				UpfrontFee: awssdk.String("900"), CurrencyCode: awssdk.String("EUR"), Tenancy: "dedicated"},
		}},
	}, 24, at, "https://ec2.us-west-2.amazonaws.com")
	if len(res.Rejects) != 1 || !strings.Contains(res.Rejects[0].Reason, "of p5.48xlarge in the answer for p4d.24xlarge") {
		t.Errorf("rejects = %+v", res.Rejects)
	}
	got := map[string]schemas.Signal{}
	for _, s := range res.Signals {
		got[s.SKU+" "+s.Zone] = s
	}
	// Three zones named: each type gets a signal in each.
	if len(res.Signals) != 6 {
		t.Fatalf("signals = %+v", res.Signals)
	}
	b := got["p4d.24xlarge:capacity-block us-west-2b"]
	if b.Value != 2 || b.Attrs["offering_id"] != "cb-1" || b.Attrs["duration_hours"] != "48" ||
		b.Attrs["usd_gpu_hour"] != schemas.FormatNum(1179.84/(48*8)) || b.Attrs["min_usd_gpu_hour"] != schemas.FormatNum(1000.0/(24*2*8)) ||
		b.Attrs["end_date"] != "2026-11-05T11:30:00Z" || b.Attrs["offerings"] != "2" || b.Attrs["gpu_memory_gb"] != "40" {
		t.Errorf("us-west-2b = %+v", b)
	}
	odd := got["p4d.24xlarge:capacity-block us-east-2a"]
	if odd.Value != 1 || odd.Attrs["upfront_fee_text"] != "n/a" || odd.Attrs["usd_gpu_hour"] != "" ||
		odd.Attrs["zone_region_mismatch"] != "true" {
		t.Errorf("us-east-2a = %+v", odd)
	}
	eur := got["p5en.48xlarge:capacity-block us-west-2c"]
	if eur.Attrs["currency"] != "EUR" || eur.Attrs["upfront_fee"] != "900" || eur.Attrs["price_gpu_hour"] != schemas.FormatNum(900.0/(24*8)) ||
		eur.Attrs["usd_gpu_hour"] != "" || eur.Attrs["upfront_fee_usd"] != "" || eur.Attrs["tenancy"] != "dedicated" ||
		eur.Attrs["gpu_name"] != "NVIDIA H200 SXM" {
		t.Errorf("EUR offering = %+v", eur)
	}
	if z := got["p5en.48xlarge:capacity-block us-west-2b"]; z.Value != 0 || z.Attrs["offerings"] != "0" || z.Attrs["usd_gpu_hour"] != "" {
		t.Errorf("zero signal = %+v", z)
	}
	for _, s := range res.Signals {
		if err := s.Validate(); err != nil || s.Region != "us-west-2" || s.SourceURL != "https://ec2.us-west-2.amazonaws.com" {
			t.Errorf("signal %+v: %v", s, err)
		}
	}
	// An answer for nothing: nil offerings give region-level zeros, no rejects.
	if res := capacityBlockSignals("eu-west-1", []capacityBlockAnswer{{InstanceType: "p5.48xlarge"}}, 24, at, ""); len(res.Signals) != 1 ||
		res.Signals[0].Zone != "" || res.Signals[0].Value != 0 || len(res.Rejects) != 0 {
		t.Errorf("empty answer = %+v", res)
	}
	if res := capacityBlockSignals("eu-west-1", nil, 24, at, ""); len(res.Signals) != 0 {
		t.Errorf("no answer = %+v", res)
	}
}

func TestValidCapacityBlockHours(t *testing.T) {
	var ok []int
	for h := 0; h <= MaxCapacityBlockHours+24*7; h++ {
		if validCapacityBlockHours(h) {
			ok = append(ok, h/24)
		}
	}
	want := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	for d := 21; d <= 182; d += 7 {
		want = append(want, d)
	}
	if !slices.Equal(ok, want) {
		t.Errorf("valid days %v, want %v", ok, want)
	}
}

// TestSampleOptionsAccepted is scrapers/all's TestSampleOptions for this source: every
// commented option of sample.yaml, turned on, is accepted, the capacity block ones
// included.
func TestSampleOptionsAccepted(t *testing.T) {
	var lines []string
	for _, l := range strings.Split(sampleOptions, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "# "))
	}
	var opts map[string]any
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &opts); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"capacity_block_types", "capacity_block_hours", "capacity_block_window", "capacity_block_regions"} {
		if _, ok := opts[k]; !ok {
			t.Errorf("sample.yaml does not document %s", k)
		}
	}
	if _, err := New(scrapertest.Config(t, Name, "", opts)); err != nil {
		t.Errorf("sample options %v refused: %v", opts, err)
	}
}

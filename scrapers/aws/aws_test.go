package aws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// getProducts is the GetProducts response envelope.
type getProducts struct {
	FormatVersion string   `json:"FormatVersion"`
	NextToken     string   `json:"NextToken"`
	PriceList     []string `json:"PriceList"`
}

func readPriceList(t testing.TB, path string) getProducts {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g getProducts
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestParsePriceList(t *testing.T) {
	n := scrapertest.GoldenCases(t, "testdata/pricelist_*/input.json", func(_ string, data []byte) (priceListResult, error) {
		var g getProducts
		if err := json.Unmarshal(data, &g); err != nil {
			return priceListResult{}, err
		}
		return parsePriceList(g.PriceList, scrapertest.ObservedAt), nil
	})
	if n < 5 {
		t.Fatalf("cases = %d", n)
	}
}

func find(rows []schemas.Observation, sku, pricing string) []schemas.Observation {
	var out []schemas.Observation
	for _, o := range rows {
		if o.SKU == sku && o.Pricing == pricing {
			out = append(out, o)
		}
	}
	return out
}

func TestPriceListRules(t *testing.T) {
	res := parsePriceList(readPriceList(t, "testdata/pricelist_page1/input.json").PriceList, scrapertest.ObservedAt)
	od := find(res.Rows, "p5.48xlarge", schemas.OnDemand)
	if len(od) != 1 || od[0].PriceNative != 55.04 || od[0].Unit != schemas.UnitHour || od[0].Region != "us-east-1" ||
		od[0].GPUCount != 8 || od[0].GPUMemoryGB != 80 || od[0].GPUName != "NVIDIA H100 SXM" ||
		od[0].Interconnect != schemas.InterconnectEFA || od[0].Currency != "USD" ||
		!od[0].EffectiveAt.Equal(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("p5.48xlarge on-demand = %+v", od)
	}
	nu := find(res.Rows, "p5.48xlarge", schemas.Reserved1Y)
	if len(nu) != 1 || nu[0].Unit != schemas.UnitHour || nu[0].Attrs["purchase_option"] != noUpfront {
		t.Errorf("no upfront 1y = %+v", nu)
	}
	au := find(res.Rows, "p5.48xlarge:all-upfront", schemas.Reserved3Y)
	if len(au) != 1 || au[0].Unit != schemas.UnitTerm || au[0].PriceNative < 100000 || au[0].Attrs["hourly_fee"] != "0" {
		t.Errorf("all upfront 3y = %+v", au)
	}
	pu := find(res.Rows, "p5.48xlarge:partial-upfront", schemas.Reserved1Y)
	if len(pu) != 1 || pu[0].Unit != schemas.UnitTerm {
		t.Fatalf("partial upfront 1y = %+v", pu)
	}
	var fee, hourly float64
	fmt.Sscan(pu[0].Attrs["upfront_fee"], &fee)
	fmt.Sscan(pu[0].Attrs["hourly_fee"], &hourly)
	if want := fee + hourly*8760; fee == 0 || hourly == 0 || pu[0].PriceNative != want {
		t.Errorf("partial upfront price %v, want fee %v + hourly %v × 8760", pu[0].PriceNative, fee, hourly)
	}
	if res.Skipped[skipConvertible] != 1 {
		t.Errorf("skipped = %v, want one convertible term", res.Skipped)
	}
	for _, o := range res.Rows {
		if o.Attrs["offering_class"] == "convertible" {
			t.Errorf("convertible row emitted: %+v", o)
		}
		// Every reservation says AWS's cancellation terms (the EC2 user guide); on-demand no.
		reserved := o.Pricing == schemas.Reserved1Y || o.Pricing == schemas.Reserved3Y
		if (o.Attrs["cancellation"] == Cancellation) != reserved {
			t.Errorf("%s %s: cancellation %q", o.SKU, o.Pricing, o.Attrs["cancellation"])
		}
	}

	odd := parsePriceList(readPriceList(t, "testdata/pricelist_odd/input.json").PriceList, scrapertest.ObservedAt)
	for _, r := range []string{skipNotLinux, skipNotShared, skipCapacity} {
		if odd.Skipped[r] != 1 {
			t.Errorf("skipped[%s] = %d, want 1 (%v)", r, odd.Skipped[r], odd.Skipped)
		}
	}
	var zero, text, cny, nogpu, fiveYear bool
	for _, o := range odd.Rows {
		switch {
		case o.SKU == "g6e.xlarge" && o.PriceNative == 0 && o.Attrs["price_text"] == "":
			zero = true
		case o.SKU == "p5.4xlarge" && o.Pricing == schemas.OnDemand:
			text = o.PriceNative == 0 && o.Attrs["price_text"] == "contact us"
		case o.Currency == "CNY":
			cny = o.Region == "cn-north-1" && o.PriceNative == 3.893
		case o.SKU == "g5.2xlarge":
			nogpu = o.GPUCount == 1 && o.GPUMemoryGB == 24 && o.GPUName == "NVIDIA A10G"
		case o.Pricing == "reserved:5yr":
			fiveYear = o.Unit == schemas.UnitHour
		}
	}
	if !zero || !text || !cny || !nogpu || !fiveYear {
		t.Errorf("zero %v, price text %v, CNY %v, gpu from table %v, 5-year lease %v: want all true", zero, text, cny, nogpu, fiveYear)
	}

	bad := parsePriceList(readPriceList(t, "testdata/pricelist_malformed/input.json").PriceList, scrapertest.ObservedAt)
	if len(bad.Rejects) != 2 || len(find(bad.Rows, "p5.4xlarge", schemas.OnDemand)) != 1 {
		t.Errorf("malformed page: %d rejects, rows %+v; want 2 rejects and the good item's rows", len(bad.Rejects), bad.Rows)
	}
}

type offerGolden struct {
	Stats offerStats            `json:"stats"`
	Rows  []schemas.Observation `json:"rows"`
	Error string                `json:"error,omitempty"`
}

func TestStreamOffer(t *testing.T) {
	// The offer file is streamed: a case records what was emitted before an error too.
	n := scrapertest.GoldenCases(t, "testdata/offer_*/input.json", func(_ string, data []byte) (offerGolden, error) {
		g := offerGolden{Rows: []schemas.Observation{}}
		var err error
		g.Stats, err = streamOffer(bytes.NewReader(data), "us-east-2", scrapertest.ObservedAt, func(o schemas.Observation) { g.Rows = append(g.Rows, o) })
		if err != nil {
			g.Error = err.Error()
		}
		return g, nil
	})
	if n < 3 {
		t.Fatalf("cases = %d", n)
	}
}

func TestStreamOfferRules(t *testing.T) {
	f, err := os.Open("testdata/offer_us-east-2/input.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []schemas.Observation
	st, err := streamOffer(f, "us-east-2", scrapertest.ObservedAt, func(o schemas.Observation) { rows = append(rows, o) })
	if err != nil {
		t.Fatal(err)
	}
	// The excerpt's m5.large, Windows p3.8xlarge and gp3 storage are left out.
	if st.Products != 7 || st.GPUProducts != 4 || st.Skipped[skipNotCompute] != 1 || st.Skipped[skipNotLinux] != 1 || st.Skipped[skipNotGPU] != 1 {
		t.Errorf("stats = %+v", st)
	}
	for _, o := range rows {
		if o.Region != "us-east-2" || o.Attrs["aws_sku"] == "9ZEEN7WWWQKAG292" {
			t.Errorf("row %+v", o)
		}
	}
	if p3 := find(rows, "p3.8xlarge", schemas.OnDemand); len(p3) != 1 || p3[0].PriceNative != 12.24 || p3[0].GPUCount != 4 || p3[0].GPUMemoryGB != 16 {
		t.Errorf("p3.8xlarge = %+v", p3)
	}
	if au := find(rows, "p3.8xlarge:all-upfront", schemas.Reserved3Y); len(au) != 1 || au[0].Unit != schemas.UnitTerm {
		t.Errorf("p3.8xlarge all upfront = %+v", au)
	}
}

func defaultRegionSet() map[string]bool {
	m := map[string]bool{}
	for _, r := range DefaultRegions {
		m[r] = true
	}
	return m
}

func TestParseSpotFeed(t *testing.T) {
	n := scrapertest.GoldenCases(t, "testdata/spotfeed*/input.js", func(_ string, data []byte) (spotFeedResult, error) {
		return parseSpotFeed(data, defaultRegionSet(), scrapertest.ObservedAt)
	})
	if n < 3 {
		t.Fatalf("cases = %d", n)
	}
}

func TestParseSpotFeedRules(t *testing.T) {
	data, _ := os.ReadFile("testdata/spotfeed/input.js")
	res, err := parseSpotFeed(data, defaultRegionSet(), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped[skipNotOffer] != 1 || res.Skipped[skipRegion] != 1 {
		t.Errorf("skipped = %v, want one N/A and one unconfigured region", res.Skipped)
	}
	for _, o := range res.Rows {
		if o.SKU == "m5.large" || o.Zone != "" || o.Pricing != schemas.Spot || !o.EffectiveAt.Equal(scrapertest.ObservedAt) {
			t.Errorf("row %+v", o)
		}
		if o.SKU == "p5en.48xlarge" && (o.PriceNative != 0 || o.Attrs["price_text"] != "—") {
			t.Errorf("odd price row %+v", o)
		}
	}
	data, _ = os.ReadFile("testdata/spotfeed_legacy/input.js")
	res, err = parseSpotFeed(data, nil, scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	var regions []string
	for _, o := range res.Rows {
		regions = append(regions, o.Region)
	}
	slices.Sort(regions)
	if want := []string{"ap-northeast-1", "eu-west-1", "us-east-1", "us-east-1"}; !slices.Equal(regions, want) {
		t.Errorf("legacy regions = %v, want %v", regions, want)
	}
}

func TestParseSpotHistory(t *testing.T) {
	ts := time.Date(2026, 11, 1, 11, 42, 17, 0, time.UTC)
	rows, rejects := parseSpotHistory([]ec2types.SpotPrice{
		{AvailabilityZone: awssdk.String("us-east-1a"), InstanceType: "p5.48xlarge", ProductDescription: "Linux/UNIX", SpotPrice: awssdk.String("32.712800"), Timestamp: &ts},
		{AvailabilityZone: awssdk.String("us-east-1b"), InstanceType: "g5.12xlarge", ProductDescription: "Linux/UNIX", SpotPrice: awssdk.String("n/a"), Timestamp: &ts},
		{AvailabilityZone: awssdk.String("us-east-1c"), ProductDescription: "Linux/UNIX", SpotPrice: awssdk.String("1.0")},
	}, "us-east-1", scrapertest.ObservedAt)
	if len(rejects) != 1 || !strings.Contains(rejects[0].Raw, "us-east-1c") {
		t.Errorf("rejects = %+v", rejects)
	}
	if len(rows) != 2 {
		t.Fatalf("rows = %+v", rows)
	}
	p5 := rows[0]
	if p5.Zone != "us-east-1a" || p5.Region != "us-east-1" || p5.PriceNative != 32.7128 || !p5.EffectiveAt.Equal(ts) ||
		p5.Pricing != schemas.Spot || p5.GPUCount != 8 || p5.Unit != schemas.UnitHour {
		t.Errorf("p5 row %+v", p5)
	}
	if g5 := rows[1]; g5.PriceNative != 0 || g5.Attrs["price_text"] != "n/a" || g5.GPUCount != 4 {
		t.Errorf("g5 row %+v", g5)
	}
}

func TestGPUTable(t *testing.T) {
	types := gpuInstanceTypes()
	n := 0
	for _, f := range families {
		n += len(f.sizes)
	}
	// Every size of the table is an instance type EC2 knows (a typo would be sent to
	// DescribeSpotPriceHistory, which rejects unknown types).
	if len(types) != n {
		var missing []string
		for fam, f := range families {
			for size := range f.sizes {
				if !slices.Contains(types, fam+"."+size) {
					missing = append(missing, fam+"."+size)
				}
			}
		}
		t.Errorf("sizes not in the EC2 InstanceType enum: %v", missing)
	}
	for _, c := range []struct {
		it    string
		count float64
		mem   float64
		efa   bool
	}{
		{"p5.48xlarge", 8, 80, true}, {"p5.4xlarge", 1, 80, false}, {"p4d.24xlarge", 8, 40, true},
		{"g5.12xlarge", 4, 24, false}, {"g6e.48xlarge", 8, 48, false}, {"g4dn.metal", 8, 16, false},
	} {
		s := specOf(c.it)
		if !s.Known || s.GPUCount != c.count || s.MemoryGB != c.mem || (s.Interconnect == schemas.InterconnectEFA) != c.efa {
			t.Errorf("specOf(%s) = %+v", c.it, s)
		}
	}
	if specOf("m5.large").Known || specOf("p5").Known {
		t.Error("non-GPU types known")
	}
}

func TestRegistered(t *testing.T) {
	info, f, ok := scrapers.Lookup(Name)
	if !ok || f == nil {
		t.Fatal("aws is not registered")
	}
	if info.Provider != "aws" || info.Schedule == "" || info.Credentials == "" {
		t.Errorf("info = %+v", info)
	}
	for _, p := range info.Pricing {
		if !schemas.ValidPricing(p) {
			t.Errorf("pricing %q is not valid", p)
		}
	}
	src, err := f(scrapertest.Config(t, Name, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	exp := src.(scrapers.Expecter).Expect()
	if exp.MinRows < 20 || !slices.Contains(exp.SKUs, "p5.48xlarge") {
		t.Errorf("expectation = %+v", exp)
	}
	src, _ = f(scrapertest.Config(t, Name, "", map[string]any{"regions": []any{"us-east-1"}}))
	if exp := src.(scrapers.Expecter).Expect(); exp.MinRows != 1 || len(exp.SKUs) != 0 {
		t.Errorf("expectation with regions = %+v", exp)
	}
}

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		ok   bool
	}{
		{nil, true},
		{map[string]any{"mode": "api", "regions": []string{"us-east-1", "us-gov-west-1"}, "since": "24h", "collect": []string{"spot"}}, true},
		{map[string]any{"mode": "public", "spot_feed": "http://mirror/spot.js", "bulk_timeout": "1h", "pricing_endpoint": "https://api.pricing.eu-central-1.amazonaws.com", "ec2_endpoint": "http://localhost:4566"}, true},
		{map[string]any{"since": "2160h"}, true},
		{map[string]any{"since": "2161h"}, false},
		{map[string]any{"since": "0s"}, false},
		{map[string]any{"since": "an hour"}, false},
		{map[string]any{"mode": "magic"}, false},
		{map[string]any{"regions": []string{"US East"}}, false},
		{map[string]any{"collect": []string{"savings"}}, false},
		{map[string]any{"collect": []string{"spot", "spot"}}, false},
		{map[string]any{"collect": []string{}}, false},
		{map[string]any{"spot_feed": "website.spot.ec2.aws.a2z.com/spot.js"}, false},
		{map[string]any{"bulk_timeout": "-1m"}, false},
		{map[string]any{"region": "us-east-1"}, false},
	} {
		_, err := New(scrapertest.Config(t, Name, "", c.opts))
		if (err == nil) != c.ok {
			t.Errorf("New(%v) error = %v, want ok=%v", c.opts, err, c.ok)
		}
	}
	if _, err := New(scrapertest.Config(t, Name, "not a url", nil)); err == nil {
		t.Error("relative endpoint accepted")
	}
}

// --- a fake AWS: the Price List Query API (JSON 1.1), EC2 (query protocol, XML), and
// the public files, on one local server.

type fakeAWS struct {
	*httptest.Server
	mu sync.Mutex
	// pricing answers GetProducts call n (0-based) with a status and body.
	pricing func(n int, in map[string]any) (int, string)
	// ec2 answers DescribeSpotPriceHistory call n for a region.
	ec2 func(n int, region string, form url.Values) (int, string)
	// cb answers DescribeCapacityBlockOfferings call n for a region (nil: no offering).
	cb      func(n int, region string, form url.Values) (int, string)
	cbReq   []url.Values
	cbReg   []string
	files   map[string][]scrapertest.Route
	pricReq []map[string]any
	ec2Req  []url.Values
	ec2Reg  []string
	fileReq []*http.Request
	hits    map[string]int
	// DescribeRegions: how often asked, and a status to refuse it with (0: answer)
	regionsAsked  int
	regionsStatus int
}

var credentialScope = regexp.MustCompile(`Credential=[^/]+/[0-9]+/([a-z0-9-]+)/([a-z0-9]+)/aws4_request`)

func newFakeAWS(t *testing.T) *fakeAWS {
	f := &fakeAWS{files: map[string][]scrapertest.Route{}, hits: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		defer f.mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.Header.Get("X-Amz-Target") == "AWSPriceListService.GetProducts":
			var in map[string]any
			if err := json.Unmarshal(body, &in); err != nil {
				t.Errorf("GetProducts body: %v", err)
			}
			n := len(f.pricReq)
			f.pricReq = append(f.pricReq, in)
			status, out := f.pricing(n, in)
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			if status != http.StatusOK {
				var e struct {
					Type string `json:"__type"`
				}
				_ = json.Unmarshal([]byte(out), &e)
				w.Header().Set("X-Amzn-Errortype", e.Type)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, out)
		case r.Method == http.MethodPost:
			form, err := url.ParseQuery(string(body))
			if err == nil && form.Get("Action") == "DescribeRegions" {
				f.regionsAsked++
				w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
				if f.regionsStatus != 0 {
					w.WriteHeader(f.regionsStatus)
					_, _ = io.WriteString(w, file(t, "testdata/spot_history/unauthorized.xml"))
					return
				}
				_, _ = io.WriteString(w, file(t, "testdata/describe_regions/response.xml"))
				return
			}
			region := ""
			if m := credentialScope.FindStringSubmatch(r.Header.Get("Authorization")); m != nil && m[2] == "ec2" {
				region = m[1]
			}
			if err == nil && form.Get("Action") == "DescribeCapacityBlockOfferings" {
				n := len(f.cbReq)
				f.cbReq = append(f.cbReq, form)
				f.cbReg = append(f.cbReg, region)
				status, out := http.StatusOK, file(t, "testdata/capacity_blocks/empty.xml")
				if f.cb != nil {
					status, out = f.cb(n, region, form)
				}
				w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
				w.WriteHeader(status)
				_, _ = io.WriteString(w, out)
				return
			}
			if err != nil || form.Get("Action") != "DescribeSpotPriceHistory" {
				t.Errorf("unexpected POST %s: %s", r.URL, body)
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			n := len(f.ec2Req)
			f.ec2Req = append(f.ec2Req, form)
			f.ec2Reg = append(f.ec2Reg, region)
			status, out := f.ec2(n, region, form)
			w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, out)
		default:
			f.fileReq = append(f.fileReq, r.Clone(r.Context()))
			rs, ok := f.files[r.URL.Path]
			n := f.hits[r.URL.Path]
			f.hits[r.URL.Path]++
			if !ok {
				http.NotFound(w, r)
				return
			}
			rt := rs[min(n, len(rs)-1)]
			data := []byte(rt.Body)
			if rt.File != "" {
				data, _ = os.ReadFile(rt.File)
			}
			for k, v := range rt.Header {
				w.Header().Set(k, v)
			}
			if rt.Status != 0 {
				w.WriteHeader(rt.Status)
			}
			_, _ = w.Write(data)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func file(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// filterValue returns a GetProducts request's filter value for field.
func filterValue(in map[string]any, field string) string {
	fs, _ := in["Filters"].([]any)
	for _, f := range fs {
		m, _ := f.(map[string]any)
		if m["Field"] == field {
			s, _ := m["Value"].(string)
			return s
		}
	}
	return ""
}

// pricingPages serves page1 → page2 for us-east-1 and an empty page elsewhere.
func pricingPages(t *testing.T) func(int, map[string]any) (int, string) {
	return func(_ int, in map[string]any) (int, string) {
		if filterValue(in, "regionCode") != "us-east-1" {
			return 200, file(t, "testdata/pricelist_empty/input.json")
		}
		if tok, _ := in["NextToken"].(string); tok != "" {
			if tok != readPriceList(t, "testdata/pricelist_page1/input.json").NextToken {
				t.Errorf("NextToken = %q", tok)
			}
			return 200, file(t, "testdata/pricelist_page2/input.json")
		}
		return 200, file(t, "testdata/pricelist_page1/input.json")
	}
}

// spotPages serves page1 → page2 for us-east-1 and one page elsewhere.
func spotPages(t *testing.T) func(int, string, url.Values) (int, string) {
	return func(_ int, region string, form url.Values) (int, string) {
		if region != "us-east-1" {
			return 200, file(t, "testdata/spot_history/other_region.xml")
		}
		if tok := form.Get("NextToken"); tok != "" {
			if tok != "eyJ2IjoiMiIsImMiOiJ1cy1lYXN0LTEiLCJzIjoxMDAwfQ==" {
				t.Errorf("NextToken = %q", tok)
			}
			return 200, file(t, "testdata/spot_history/page2.xml")
		}
		return 200, file(t, "testdata/spot_history/page1.xml")
	}
}

// testAWS is an SDK configuration with static fake credentials and a retryer of 3
// attempts without backoff waits.
func testAWS(hc *http.Client) func(context.Context) (awssdk.Config, error) {
	return func(context.Context) (awssdk.Config, error) {
		return awssdk.Config{
			Region:      PricingRegion,
			Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""),
			HTTPClient:  hc,
			Retryer: func() awssdk.Retryer {
				return retry.NewStandard(func(o *retry.StandardOptions) {
					o.MaxAttempts = 3
					o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
				})
			},
		}, nil
	}
}

// rejectSink is a sink that also takes rejects.
type rejectSink struct {
	scrapertest.Sink
	mu      sync.Mutex
	rejects []reject
}

func (s *rejectSink) Reject(raw, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejects = append(s.rejects, reject{Raw: raw, Reason: reason})
}

func newAPISource(t *testing.T, f *fakeAWS, opts map[string]any) *Source {
	t.Helper()
	o := map[string]any{"pricing_endpoint": f.URL, "ec2_endpoint": f.URL, "spot_feed": f.URL + "/spot.js",
		"spot_advisor": "off"}
	for k, v := range opts {
		o[k] = v
	}
	src, err := New(scrapertest.Config(t, Name, f.URL+"/offers/v1.0/aws/AmazonEC2/current/region_index.json", o))
	if err != nil {
		t.Fatal(err)
	}
	s := src.(*Source)
	s.awsConfig = testAWS(f.Client())
	return s
}

func mirrored(rows []schemas.Observation, base string) []schemas.Observation {
	for i := range rows {
		rows[i].SourceURL = strings.Replace(rows[i].SourceURL, base, "http://mirror", 1)
	}
	return rows
}

func TestCollectAPI(t *testing.T) {
	f := newFakeAWS(t)
	f.pricing = pricingPages(t)
	f.ec2 = spotPages(t)
	s := newAPISource(t, f, map[string]any{"mode": "api", "regions": []any{"us-east-1", "eu-west-1"}, "since": "3h"})
	var sink rejectSink
	if err := s.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(f.pricReq) != 3 || len(f.ec2Req) != 3 || len(f.fileReq) != 0 {
		t.Fatalf("requests: %d GetProducts, %d DescribeSpotPriceHistory, %d files; want 3, 3, 0", len(f.pricReq), len(f.ec2Req), len(f.fileReq))
	}
	in := f.pricReq[0]
	if in["ServiceCode"] != "AmazonEC2" || in["FormatVersion"] != "aws_v1" || filterValue(in, "instanceFamily") != "GPU instance" ||
		filterValue(in, "operatingSystem") != "Linux" || filterValue(in, "tenancy") != "Shared" ||
		filterValue(in, "preInstalledSw") != "NA" || filterValue(in, "capacitystatus") != "Used" || filterValue(in, "regionCode") != "us-east-1" {
		t.Errorf("GetProducts request = %v", in)
	}
	if filterValue(f.pricReq[2], "regionCode") != "eu-west-1" {
		t.Errorf("third GetProducts = %v", f.pricReq[2])
	}
	form := f.ec2Req[0]
	if form.Get("ProductDescription.1") != "Linux/UNIX" || form.Get("StartTime") != "2026-11-01T09:00:00Z" || form.Get("MaxResults") != "1000" {
		t.Errorf("DescribeSpotPriceHistory form = %v", form)
	}
	var typesSent []string
	for k, v := range form {
		if strings.HasPrefix(k, "InstanceType.") {
			typesSent = append(typesSent, v[0])
		}
	}
	if len(typesSent) != len(gpuInstanceTypes()) || !slices.Contains(typesSent, "p5.48xlarge") || !slices.Contains(typesSent, "g6e.xlarge") {
		t.Errorf("instance types sent = %v", typesSent)
	}
	if want := []string{"us-east-1", "us-east-1", "eu-west-1"}; !slices.Equal(f.ec2Reg, want) {
		t.Errorf("EC2 regions = %v, want %v", f.ec2Reg, want)
	}
	if len(sink.rejects) != 1 || !strings.Contains(sink.rejects[0].Reason, "without instance type") {
		t.Errorf("rejects = %+v", sink.rejects)
	}
	rows := mirrored(sink.Sorted(), f.URL)
	scrapertest.Golden(t, "testdata/collect_api_expected.json", rows)
	kinds := map[string]int{}
	for _, o := range rows {
		kinds[o.Pricing]++
	}
	if kinds[schemas.OnDemand] != 10 || kinds[schemas.Spot] != 7 || kinds[schemas.Reserved1Y] == 0 || kinds[schemas.Reserved3Y] == 0 {
		t.Errorf("rows per pricing kind = %v", kinds)
	}
}

func TestCollectAPISpotInEveryEnabledRegion(t *testing.T) {
	f := newFakeAWS(t)
	f.ec2 = func(int, string, url.Values) (int, string) {
		return 200, file(t, "testdata/spot_history/other_region.xml")
	}
	s := newAPISource(t, f, map[string]any{"mode": "api", "collect": []any{"spot"}})
	var sink rejectSink
	_ = s.Collect(context.Background(), &sink)
	if want := []string{"ap-east-1", "us-east-1", "us-west-2"}; f.regionsAsked != 1 || !slices.Equal(f.ec2Reg, want) {
		t.Errorf("spot history asked in %v (DescribeRegions %d×), want the enabled regions %v", f.ec2Reg, f.regionsAsked, want)
	}
	// DescribeRegions refused: the default GPU regions.
	f2 := newFakeAWS(t)
	f2.regionsStatus = http.StatusForbidden
	f2.ec2 = f.ec2
	s2 := newAPISource(t, f2, map[string]any{"mode": "api", "collect": []any{"spot"}})
	_ = s2.Collect(context.Background(), &sink)
	if len(f2.ec2Reg) != len(DefaultRegions) {
		t.Errorf("with DescribeRegions refused: spot history in %d regions, want the %d defaults", len(f2.ec2Reg), len(DefaultRegions))
	}
}

func TestCollectAPIRejectsMalformedItems(t *testing.T) {
	f := newFakeAWS(t)
	f.pricing = func(int, map[string]any) (int, string) {
		return 200, file(t, "testdata/pricelist_malformed/input.json")
	}
	s := newAPISource(t, f, map[string]any{"mode": "api", "regions": []any{"us-east-1"}, "collect": []any{"on_demand"}})
	var sink rejectSink
	if err := s.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.rejects) != 2 || len(sink.Rows) != 1 || sink.Rows[0].SKU != "p5.4xlarge" || len(f.ec2Req) != 0 {
		t.Errorf("rejects %d, rows %+v, spot requests %d; want 2, the good item's on-demand row, 0", len(sink.rejects), sink.Rows, len(f.ec2Req))
	}
}

func TestCollectAPIRetriesThenSucceeds(t *testing.T) {
	f := newFakeAWS(t)
	pages := pricingPages(t)
	f.pricing = func(n int, in map[string]any) (int, string) {
		if n == 0 {
			return http.StatusTooManyRequests, `{"__type":"ThrottlingException","message":"Rate exceeded"}`
		}
		return pages(n, in)
	}
	spot := spotPages(t)
	f.ec2 = func(n int, region string, form url.Values) (int, string) {
		if n == 0 {
			return http.StatusServiceUnavailable, file(t, "testdata/spot_history/throttled.xml")
		}
		return spot(n, region, form)
	}
	s := newAPISource(t, f, map[string]any{"mode": "api", "regions": []any{"us-east-1"}})
	var sink rejectSink
	if err := s.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	// Each API: its first page refused, asked again, then its second page. On a busy
	// machine the SDK may also lose a 200 answer's body on a reused connection ("use
	// of closed network connection") and ask that page once more: a retry too, so a
	// page may be asked again right after, up to the 3 attempts the retryer allows.
	var spotKeys []string
	for _, form := range f.ec2Req {
		spotKeys = append(spotKeys, form.Get("NextToken"))
	}
	for _, c := range []struct {
		api  string
		keys []string
	}{{"GetProducts", tokens(f.pricReq)}, {"DescribeSpotPriceHistory", spotKeys}} {
		distinct, asked := askedPages(c.keys)
		if len(distinct) != 2 || asked[0] < 2 || asked[0] > 3 || asked[1] > 3 {
			t.Errorf("%s requests %q: want the first page refused and asked again (at most 3 times), then the second",
				c.api, c.keys)
		}
	}
	if len(find(sink.Rows, "p5.48xlarge", schemas.OnDemand)) != 1 || len(find(sink.Rows, "p5.48xlarge", schemas.Spot)) != 3 {
		t.Errorf("rows = %d", len(sink.Rows))
	}
}

// askedPages collapses consecutive requests for the same page: the pages in order,
// and how often each was asked in a row.
func askedPages(keys []string) (pages []string, asked []int) {
	for i, k := range keys {
		if i > 0 && k == keys[i-1] {
			asked[len(asked)-1]++
			continue
		}
		pages, asked = append(pages, k), append(asked, 1)
	}
	return pages, asked
}

// tokens are the region and NextToken (cut short; none for a first page) of each
// GetProducts request.
func tokens(reqs []map[string]any) []string {
	out := make([]string, len(reqs))
	for i, in := range reqs {
		tok, _ := in["NextToken"].(string)
		out[i] = filterValue(in, "regionCode") + ":" + tok[:min(len(tok), 12)]
	}
	return out
}

func TestCollectAPIFailures(t *testing.T) {
	f := newFakeAWS(t)
	f.pricing = func(int, map[string]any) (int, string) {
		return http.StatusInternalServerError, `{"__type":"InternalErrorException","message":"An internal error occurred"}`
	}
	spot := spotPages(t)
	f.ec2 = func(n int, region string, form url.Values) (int, string) {
		if region == "us-east-1" {
			return http.StatusBadRequest, `<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>InvalidParameterValue</Code><Message>Invalid value for InstanceType</Message></Error></Errors><RequestID>ea966190-f9aa-478e-9ede-cb5432EXAMPLE</RequestID></Response>`
		}
		return spot(n, region, form)
	}
	s := newAPISource(t, f, map[string]any{"mode": "api", "regions": []any{"us-east-1", "eu-west-1"}})
	var sink rejectSink
	err := s.Collect(context.Background(), &sink)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"aws: GetProducts us-east-1 page 1", "aws: GetProducts eu-west-1 page 1", "InternalErrorException",
		"aws: DescribeSpotPriceHistory us-east-1 page 1", "InvalidParameterValue"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	// 500 is retried up to the attempts (3 per region); the 400 is not retried; the
	// other region's spot history is still read.
	if len(f.pricReq) != 6 || len(f.ec2Req) != 2 {
		t.Errorf("requests %d/%d, want 6/2", len(f.pricReq), len(f.ec2Req))
	}
	if len(sink.Rows) != 1 || sink.Rows[0].Region != "eu-west-1" || sink.Rows[0].Zone != "eu-west-1b" {
		t.Errorf("rows = %+v", sink.Rows)
	}
}

func publicFiles(f *fakeAWS) {
	f.files["/offers/v1.0/aws/AmazonEC2/current/region_index.json"] = []scrapertest.Route{{File: "testdata/region_index/region_index.json"}}
	f.files["/offers/v1.0/aws/AmazonEC2/20251101000000/us-east-2/index.json"] = []scrapertest.Route{{File: "testdata/offer_us-east-2/input.json"}}
	f.files["/spot.js"] = []scrapertest.Route{{File: "testdata/spotfeed/input.js"}}
}

func TestCollectAutoFallsBackOnAuthError(t *testing.T) {
	f := newFakeAWS(t)
	publicFiles(f)
	f.pricing = pricingPages(t)
	f.ec2 = func(int, string, url.Values) (int, string) {
		return http.StatusForbidden, file(t, "testdata/spot_history/unauthorized.xml")
	}
	s := newAPISource(t, f, map[string]any{"regions": []any{"us-east-1"}})
	var sink rejectSink
	if err := s.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(f.ec2Req) != 1 || f.hits["/spot.js"] != 1 || f.hits["/offers/v1.0/aws/AmazonEC2/current/region_index.json"] != 0 {
		t.Errorf("ec2 %d, spot feed %d, region index %d; want 1, 1, 0", len(f.ec2Req), f.hits["/spot.js"], f.hits["/offers/v1.0/aws/AmazonEC2/current/region_index.json"])
	}
	var feed, api int
	for _, o := range sink.Rows {
		switch {
		case o.Pricing == schemas.Spot && o.Zone == "" && o.SourceURL == f.URL+"/spot.js":
			feed++
		case o.Pricing != schemas.Spot && o.SourceURL == f.URL:
			api++
		}
	}
	if feed == 0 || api == 0 || feed+api != len(sink.Rows) {
		t.Errorf("feed rows %d, API rows %d of %d", feed, api, len(sink.Rows))
	}
	// In api mode the refusal is an error.
	s = newAPISource(t, f, map[string]any{"mode": "api", "regions": []any{"us-east-1"}, "collect": []any{"spot"}})
	if err := s.Collect(context.Background(), &rejectSink{}); err == nil || !strings.Contains(err.Error(), "UnauthorizedOperation") {
		t.Errorf("err = %v", err)
	}
}

func TestCollectPublic(t *testing.T) {
	f := newFakeAWS(t)
	publicFiles(f)
	f.pricing = func(int, map[string]any) (int, string) {
		t.Error("price list API called in public mode")
		return 500, ""
	}
	f.ec2 = func(int, string, url.Values) (int, string) { t.Error("EC2 called in public mode"); return 500, "" }
	f.cb = func(int, string, url.Values) (int, string) {
		t.Error("DescribeCapacityBlockOfferings called in public mode")
		return 500, ""
	}
	s := newAPISource(t, f, map[string]any{"mode": "public", "regions": []any{"us-east-2", "us-east-1"}})
	var sink rejectSink
	err := s.Collect(context.Background(), &sink)
	// us-east-1's offer file is in the index but not on the server: that region fails,
	// us-east-2 and the spot feed are read.
	if err == nil || !strings.Contains(err.Error(), "aws: region us-east-1") || !errors.Is(err, fetch.ErrStatus) {
		t.Errorf("err = %v", err)
	}
	for _, r := range f.fileReq {
		if r.Header.Get("User-Agent") != fetch.DefaultUserAgent {
			t.Errorf("User-Agent of %s = %q", r.URL, r.Header.Get("User-Agent"))
		}
	}
	rows := mirrored(sink.Sorted(), f.URL)
	scrapertest.Golden(t, "testdata/collect_public_expected.json", rows)
	var spot, ondemand int
	for _, o := range rows {
		switch o.Pricing {
		case schemas.Spot:
			spot++
			if o.Region != "us-east-1" && o.Region != "us-east-2" {
				t.Errorf("spot row of an unconfigured region: %+v", o)
			}
		case schemas.OnDemand:
			ondemand++
		}
	}
	if spot != 5 || ondemand != 4 {
		t.Errorf("spot %d, on-demand %d; want 5, 4", spot, ondemand)
	}
}

func TestCollectPublicRetries(t *testing.T) {
	f := newFakeAWS(t)
	publicFiles(f)
	offer := "/offers/v1.0/aws/AmazonEC2/20251101000000/us-east-2/index.json"
	f.files[offer] = []scrapertest.Route{
		{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}},
		{File: "testdata/offer_us-east-2/input.json"},
	}
	s := newAPISource(t, f, map[string]any{"mode": "public", "regions": []any{"us-east-2"}, "collect": []any{"on_demand", "reserved"}})
	var sink rejectSink
	if err := s.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if f.hits[offer] != 2 || f.hits["/spot.js"] != 0 || len(sink.Rows) == 0 {
		t.Errorf("offer hits %d, spot feed hits %d, rows %d", f.hits[offer], f.hits["/spot.js"], len(sink.Rows))
	}

	f.files[offer] = []scrapertest.Route{{Status: http.StatusInternalServerError}}
	f.hits[offer] = 0
	err := s.Collect(context.Background(), &rejectSink{})
	if err == nil || !errors.Is(err, fetch.ErrStatus) || f.hits[offer] != 3 {
		t.Errorf("500 forever: err %v after %d tries, want ErrStatus after 3", err, f.hits[offer])
	}

	for name, route := range map[string]scrapertest.Route{
		"malformed":     {File: "testdata/offer_malformed/input.json"},
		"terms first":   {File: "testdata/offer_terms_first/input.json"},
		"changed index": {Body: `{"formatVersion":"v1.0","offers":{}}`},
	} {
		if name == "changed index" {
			f.files["/offers/v1.0/aws/AmazonEC2/current/region_index.json"] = []scrapertest.Route{route}
		} else {
			f.files[offer] = []scrapertest.Route{route}
		}
		if err := s.Collect(context.Background(), &rejectSink{}); err == nil || !strings.HasPrefix(err.Error(), "aws: ") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestCollectPublicSpotFeedFailures(t *testing.T) {
	for name, route := range map[string]scrapertest.Route{
		"changed layout": {File: "testdata/spotfeed_changed/input.js"},
		"not JSONP":      {Body: "<html>moved</html>"},
		"500":            {Status: http.StatusInternalServerError},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeAWS(t)
			f.files["/spot.js"] = []scrapertest.Route{route}
			s := newAPISource(t, f, map[string]any{"mode": "public", "collect": []any{"spot"}})
			err := s.Collect(context.Background(), &rejectSink{})
			if err == nil || !strings.HasPrefix(err.Error(), "aws: ") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// clearAWSEnv leaves the default credential chain nothing to find.
func clearAWSEnv(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_DEFAULT_PROFILE": "", "AWS_CONFIG_FILE": filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"), "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_ROLE_ARN": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
	} {
		t.Setenv(k, v)
	}
}

func TestCollectAutoWithoutCredentials(t *testing.T) {
	clearAWSEnv(t)
	f := newFakeAWS(t)
	publicFiles(f)
	f.pricing = func(int, map[string]any) (int, string) {
		t.Error("price list API called without credentials")
		return 500, ""
	}
	f.ec2 = func(int, string, url.Values) (int, string) { t.Error("EC2 called without credentials"); return 500, "" }
	f.cb = func(int, string, url.Values) (int, string) {
		t.Error("DescribeCapacityBlockOfferings called without credentials")
		return 500, ""
	}
	src, err := New(scrapertest.Config(t, Name, f.URL+"/offers/v1.0/aws/AmazonEC2/current/region_index.json",
		map[string]any{"regions": []any{"us-east-2"}, "spot_feed": f.URL + "/spot.js", "pricing_endpoint": f.URL, "ec2_endpoint": f.URL}))
	if err != nil {
		t.Fatal(err)
	}
	var sink rejectSink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Rows) == 0 || f.hits["/spot.js"] != 1 {
		t.Errorf("rows %d, spot feed hits %d", len(sink.Rows), f.hits["/spot.js"])
	}

	src, _ = New(scrapertest.Config(t, Name, f.URL+"/x", map[string]any{"mode": "api"}))
	if err := src.Collect(context.Background(), &sink); err == nil || !strings.Contains(err.Error(), "no usable AWS credentials") {
		t.Errorf("api mode without credentials: err = %v", err)
	}
}

func TestCollectAutoWithEnvCredentials(t *testing.T) {
	clearAWSEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
	f := newFakeAWS(t)
	f.pricing = pricingPages(t)
	f.ec2 = spotPages(t)
	src, err := New(scrapertest.Config(t, Name, f.URL+"/x", map[string]any{"regions": []any{"us-east-1"},
		"pricing_endpoint": f.URL, "ec2_endpoint": f.URL}))
	if err != nil {
		t.Fatal(err)
	}
	var sink rejectSink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(f.pricReq) != 2 || len(f.ec2Req) != 2 || len(f.fileReq) != 0 {
		t.Errorf("requests %d/%d/%d, want the APIs only", len(f.pricReq), len(f.ec2Req), len(f.fileReq))
	}
}

func FuzzParsePriceList(f *testing.F) {
	files, _ := filepath.Glob("testdata/pricelist_*/input.json")
	for _, p := range files {
		for _, it := range readPriceList(f, p).PriceList {
			f.Add(it)
		}
	}
	f.Fuzz(func(t *testing.T, item string) {
		res := parsePriceList([]string{item}, scrapertest.ObservedAt)
		if res.Rows == nil || len(res.Rejects) > 1 {
			t.Errorf("result %+v", res)
		}
	})
}

func FuzzStreamOffer(f *testing.F) {
	files, _ := filepath.Glob("testdata/offer_*/input.json")
	for _, p := range files {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = streamOffer(bytes.NewReader(data), "us-east-2", scrapertest.ObservedAt, func(schemas.Observation) {})
		_, _ = parseRegionIndex(bytes.NewReader(data))
	})
}

func FuzzParseSpotFeed(f *testing.F) {
	files, _ := filepath.Glob("testdata/spotfeed*/input.js")
	for _, p := range files {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parseSpotFeed(data, nil, scrapertest.ObservedAt)
		if err == nil && res.Rows == nil {
			t.Error("nil rows without an error")
		}
	})
}

// TestCollectSpotAdvisorSignals: with the spot part, a run that takes signals also
// reads the Spot Advisor file (here the real copy of 2025-06-28, served by a test
// server) and sends the bands of the collected regions as interruption signals at
// the run's time; the prices are those of TestCollectPublic. A file that cannot be
// fetched is a warning and the prices stand; "off" fetches none.
func TestCollectSpotAdvisorSignals(t *testing.T) {
	gz, err := os.ReadFile("testdata/spot_advisor/input.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	body, err := fetch.Gunzip(gz, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	advisor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if r.URL.Path != "/spot-advisor-data.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer advisor.Close()
	collect := func(spotAdvisor string) (*rejectSink, error) {
		f := newFakeAWS(t)
		publicFiles(f)
		s := newAPISource(t, f, map[string]any{"mode": "public", "regions": []any{"us-east-2"},
			"spot_advisor": spotAdvisor})
		var sink rejectSink
		return &sink, s.Collect(context.Background(), &sink)
	}
	sink, err := collect(advisor.URL + "/spot-advisor-data.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(sink.Rows) == 0 || len(sink.Signals) == 0 {
		t.Fatalf("rows %d, signals %d", len(sink.Rows), len(sink.Signals))
	}
	bands := map[string]string{}
	for _, s := range sink.Signals {
		if s.Region != "us-east-2" || s.Kind != schemas.SignalInterruption || !s.EffectiveAt.Equal(scrapertest.ObservedAt) ||
			s.SourceURL != advisor.URL+"/spot-advisor-data.json" {
			t.Fatalf("signal %+v", s)
		}
		bands[s.SKU] = s.Label
	}
	// The 2025-06-28 copy's bands in us-east-2 (read from the file by hand).
	want, err := ParseSpotAdvisor(bytes.NewReader(body), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range want.Signals {
		if s.Region == "us-east-2" {
			n++
			if bands[s.SKU] != s.Label {
				t.Errorf("%s: band %q, want %q", s.SKU, bands[s.SKU], s.Label)
			}
		}
	}
	if n != len(sink.Signals) {
		t.Errorf("%d signals, the file has %d GPU bands in us-east-2", len(sink.Signals), n)
	}
	if hits != 1 {
		t.Errorf("spot advisor fetched %d times", hits)
	}
	// Unreachable: prices stand, no signal.
	sink, err = collect(advisor.URL + "/missing.json")
	if err != nil || len(sink.Rows) == 0 || len(sink.Signals) != 0 {
		t.Errorf("unreachable file: err %v, rows %d, signals %d", err, len(sink.Rows), len(sink.Signals))
	}
	hits = 0
	if sink, _ = collect("off"); len(sink.Signals) != 0 || hits != 0 {
		t.Errorf("off: %d signals, %d fetches", len(sink.Signals), hits)
	}
	if err := (Options{SpotAdvisor: "ftp://x"}).Validate(); err == nil {
		t.Error("spot_advisor ftp:// accepted")
	}
}

package azure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

const apiPath = "/api/retail/prices"

func TestParsePage(t *testing.T) {
	scrapertest.GoldenCases(t, "testdata/*/input.json", func(_ string, data []byte) (page, error) {
		return parsePage(bytes.NewReader(data), scrapertest.ObservedAt)
	})
}

func TestParsePageRules(t *testing.T) {
	p := parseFile(t, "testdata/odd_meters/input.json")
	if p.Skipped[skipWindows] != 3 || p.Skipped[skipDevTest] != 1 {
		t.Errorf("skipped = %v, want 3 windows and 1 devtest", p.Skipped)
	}
	var zero, month, fiveYear, unknownType bool
	for _, o := range p.Rows {
		if strings.Contains(o.Attrs["productName"], "Windows") {
			t.Errorf("windows row emitted: %+v", o)
		}
		switch {
		case o.SKU == "Standard_NC40ads_H100_v5" && o.PriceNative == 0:
			zero = o.Pricing == schemas.OnDemand
		case o.Unit == "1/Month":
			month = o.SKU == "Standard_NC24ads_A100_v4 Low Priority" && o.Pricing == schemas.LowPriority
		case o.Attrs["term"] == "5 Years":
			fiveYear = o.Pricing == schemas.CommitmentPricing(60) && o.Unit == schemas.UnitTerm
		case o.Pricing == "SavingsPlanConsumption":
			unknownType = true
		}
	}
	if !zero || !month || !fiveYear || !unknownType {
		t.Errorf("zero price %v, verbatim unit %v, 5-year reservation %v, unknown type %v: want all true", zero, month, fiveYear, unknownType)
	}

	p = parseFile(t, "testdata/page1/input.json")
	kinds := map[string]int{}
	for _, o := range p.Rows {
		kinds[o.Attrs["azure_priority"]+"/"+o.Pricing]++
		if strings.HasSuffix(o.SKU, lowPrioritySuffix) != (o.Attrs["azure_priority"] == priorityLow) {
			t.Errorf("low priority SKU rule broken: %s %v", o.SKU, o.Attrs)
		}
	}
	// Low Priority is its own pricing kind, never mixed into spot.
	if kinds["low/low_priority"] == 0 || kinds["low/spot"] != 0 || kinds["spot/spot"] == 0 || kinds["regular/on_demand"] == 0 {
		t.Errorf("pricing kinds on page 1 = %v, want low priority, spot and on-demand", kinds)
	}

	both := append(p.Rows, parseFile(t, "testdata/page2/input.json").Rows...)
	var r1, r3, sp1, sp3 int
	for _, o := range both {
		switch {
		case o.Pricing == schemas.Reserved1Y && o.Unit == schemas.UnitTerm:
			r1++
		case o.Pricing == schemas.Reserved3Y && o.Unit == schemas.UnitTerm:
			r3++
		case o.Pricing == schemas.CommitmentPricing(12) && o.Unit == schemas.UnitHour:
			sp1++
		case o.Pricing == schemas.CommitmentPricing(36) && o.Unit == schemas.UnitHour:
			sp3++
		}
	}
	if r1 != 2 || r3 != 2 || sp1 != 2 || sp3 != 2 {
		t.Errorf("reserved 1y/3y = %d/%d, savings plan 1y/3y = %d/%d; want 2 each", r1, r3, sp1, sp3)
	}
}

func parseFile(t *testing.T, path string) page {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := parsePage(bytes.NewReader(data), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseArmSku(t *testing.T) {
	for _, c := range []struct {
		arm   string
		gpu   string
		count float64
		mem   float64
		ic    string
	}{
		{"Standard_ND96isr_H100_v5", "NVIDIA H100 SXM", 8, 80, schemas.InterconnectInfiniband},
		{"Standard_ND96isr_H200_v5", "NVIDIA H200 SXM", 8, 141, schemas.InterconnectInfiniband},
		{"Standard_NC40ads_H100_v5", "NVIDIA H100 NVL", 1, 94, ""},
		{"Standard_NC80adis_H100_v5", "NVIDIA H100 NVL", 2, 94, ""},
		{"Standard_NCC40ads_H100_v5", "NVIDIA H100 NVL", 1, 94, ""},
		{"Standard_NC24ads_A100_v4", "NVIDIA A100 PCIe", 1, 80, ""},
		{"Standard_NC48ads_A100_v4", "NVIDIA A100 PCIe", 2, 80, ""},
		{"Standard_NC96ads_A100_v4", "NVIDIA A100 PCIe", 4, 80, ""},
		{"Standard_ND96asr_v4", "NVIDIA A100 SXM", 8, 40, schemas.InterconnectInfiniband},
		{"Standard_ND96amsr_A100_v4", "NVIDIA A100 SXM", 8, 80, schemas.InterconnectInfiniband},
		{"Standard_ND96isr_MI300X_v5", "AMD Instinct MI300X", 8, 192, schemas.InterconnectInfiniband},
		{"Standard_NV6ads_A10_v5", "NVIDIA A10", 1.0 / 6, 24, ""},
		{"Standard_NV12ads_A10_v5", "NVIDIA A10", 1.0 / 3, 24, ""},
		{"Standard_NV18ads_A10_v5", "NVIDIA A10", 0.5, 24, ""},
		{"Standard_NV36ads_A10_v5", "NVIDIA A10", 1, 24, ""},
		{"Standard_NV72ads_A10_v5", "NVIDIA A10", 2, 24, ""},
		{"Standard_NC4as_T4_v3", "NVIDIA Tesla T4", 1, 16, ""},
		{"Standard_NC16as_T4_v3", "NVIDIA Tesla T4", 1, 16, ""},
		{"Standard_NC64as_T4_v3", "NVIDIA Tesla T4", 4, 16, ""},
		{"Standard_NC24rs_v3", "NVIDIA Tesla V100", 4, 16, schemas.InterconnectInfiniband},
		{"Standard_ND40rs_v2", "NVIDIA Tesla V100", 8, 32, schemas.InterconnectInfiniband},
		{"Standard_NC6", "NVIDIA Tesla K80", 1, 12, ""},
		{"Standard_ND128isr_NDR_GB200_v6", "NVIDIA GB200", 4, 0, schemas.InterconnectInfiniband},
		{"Standard_NC128ds_xl_RTXPRO6000BSE_v6", "", 0, 0, ""},
		{"Standard_NC40ads_H100_v5x", "", 0, 0, ""},
		{"Standard_D4s_v5", "", 0, 0, ""},
		{"", "", 0, 0, ""},
	} {
		got := parseArmSku(c.arm)
		want := skuSpec{c.gpu, c.count, c.mem, c.ic}
		if got != want {
			t.Errorf("parseArmSku(%q) = %+v, want %+v", c.arm, got, want)
		}
	}
}

func TestRegistered(t *testing.T) {
	info, f, ok := scrapers.Lookup(Name)
	if !ok || f == nil {
		t.Fatal("azure is not registered")
	}
	if info.Provider != "azure" || !strings.Contains(info.Credentials, EnvClientSecret) || info.Schedule == "" {
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
	exp, ok := src.(scrapers.Expecter)
	if !ok || exp.Expect().MinRows == 0 || len(exp.Expect().SKUs) == 0 {
		t.Errorf("source does not declare a useful expectation")
	}
}

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		opts map[string]any
		ok   bool
	}{
		{nil, true},
		{map[string]any{"regions": []string{"eastus", "westeurope"}, "currency": "EUR"}, true},
		{map[string]any{"region": "eastus"}, false},
		{map[string]any{"regions": []string{"East US"}}, false},
		{map[string]any{"currency": "eur"}, false},
		{map[string]any{"regions": "eastus"}, false},
	} {
		_, err := New(scrapertest.Config(t, Name, "", c.opts))
		if (err == nil) != c.ok {
			t.Errorf("New(%v) error = %v, want ok=%v", c.opts, err, c.ok)
		}
	}
}

// nextRoute is the replay-server key of a page's NextPageLink.
func nextRoute(t *testing.T, file string) string {
	t.Helper()
	var env envelope
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(*env.NextPageLink)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path + "?" + u.RawQuery
}

func TestCollectPaging(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath: {{File: "testdata/page1/input.json"}},
		nextRoute(t, "testdata/page1/input.json"): {{File: "testdata/page2/input.json"}},
	})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(srv.Reqs) != 2 {
		t.Fatalf("requests = %d, want 2", len(srv.Reqs))
	}
	q := srv.Reqs[0].URL.Query()
	if q.Get("api-version") != APIVersion || q.Get("$filter") != gpuFilter {
		t.Errorf("first query = %v", q)
	}
	if srv.Reqs[1].URL.Query().Get("$skip") != "100" {
		t.Errorf("second request %s did not follow NextPageLink", srv.Reqs[1].URL)
	}
	rows := sink.Sorted()
	for i := range rows {
		rows[i].SourceURL = strings.Replace(rows[i].SourceURL, srv.URL, "http://mirror", 1)
		if !strings.HasPrefix(rows[i].SourceURL, "http://mirror"+apiPath+"?") {
			t.Errorf("row source URL %q", rows[i].SourceURL)
		}
	}
	scrapertest.Golden(t, "testdata/collect_expected.json", rows)
}

func TestCollectOptionsInQuery(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath: {{File: "testdata/eur/input.json"}},
	})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, map[string]any{
		"regions": []any{"westeurope", "swedencentral"}, "currency": "EUR",
	}))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	q := srv.Reqs[0].URL.Query()
	if q.Get("currencyCode") != "'EUR'" {
		t.Errorf("currencyCode = %q", q.Get("currencyCode"))
	}
	if f := q.Get("$filter"); !strings.HasSuffix(f, " and (armRegionName eq 'westeurope' or armRegionName eq 'swedencentral')") {
		t.Errorf("$filter = %q", f)
	}
	if len(sink.Rows) != 3 {
		t.Fatalf("rows = %d, want 3 (the Windows docs item skipped)", len(sink.Rows))
	}
	for _, o := range sink.Rows {
		if o.Currency != "EUR" {
			t.Errorf("currency %q, want EUR", o.Currency)
		}
	}
	if e := src.(scrapers.Expecter).Expect(); e.MinRows != 2 || len(e.SKUs) != 0 {
		t.Errorf("expectation with regions = %+v", e)
	}
}

func TestCollectRetriesThenSucceeds(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath: {
			{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}, Body: `{"Message":"Too many requests"}`},
			{File: "testdata/page2/input.json"},
		},
	})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	if err := src.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if srv.Hits[apiPath] != 2 || len(sink.Rows) == 0 {
		t.Errorf("hits = %d, rows = %d; want 2 hits and rows", srv.Hits[apiPath], len(sink.Rows))
	}
}

func TestCollectFailures(t *testing.T) {
	for _, c := range []struct {
		name  string
		route scrapertest.Route
		is    error
		msg   string
	}{
		{"500 forever", scrapertest.Route{Status: http.StatusInternalServerError, Body: "oops"}, fetch.ErrStatus, "HTTP 500"},
		{"404", scrapertest.Route{Status: http.StatusNotFound}, fetch.ErrStatus, "HTTP 404"},
		{"malformed JSON", scrapertest.Route{File: "testdata/malformed/input.json"}, nil, "decoding response"},
		{"no Items", scrapertest.Route{Body: `{"BillingCurrency":"USD","NextPageLink":null}`}, nil, "no Items"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {c.route}})
			src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
			if err != nil {
				t.Fatal(err)
			}
			var sink scrapertest.Sink
			err = src.Collect(context.Background(), &sink)
			if err == nil || !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "azure: ") {
				t.Fatalf("err = %v, want one containing %q", err, c.msg)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("err = %v, want errors.Is %v", err, c.is)
			}
		})
	}
}

func TestCollectFailsMidway(t *testing.T) {
	// Page 1 is read and emitted; page 2 fails: the rows stay emitted and the error names the page.
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		apiPath: {{File: "testdata/page1/input.json"}},
		nextRoute(t, "testdata/page1/input.json"): {{Status: http.StatusServiceUnavailable}},
	})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	var sink scrapertest.Sink
	err = src.Collect(context.Background(), &sink)
	if err == nil || !strings.Contains(err.Error(), "page 2") {
		t.Fatalf("err = %v, want a page 2 error", err)
	}
	if len(sink.Rows) == 0 {
		t.Error("page 1 rows were not emitted")
	}
}

func TestCollectRepeatedLink(t *testing.T) {
	loop := `{"BillingCurrency":"USD","Items":[],"NextPageLink":"https://prices.azure.com:443/api/retail/prices?$skip=100","Count":0}`
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{apiPath: {{Body: loop}}})
	src, err := New(scrapertest.Config(t, Name, srv.URL+apiPath, nil))
	if err != nil {
		t.Fatal(err)
	}
	err = src.Collect(context.Background(), &scrapertest.Sink{})
	if err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Fatalf("err = %v, want a repeated-link error", err)
	}
}

func FuzzParsePage(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/input.json")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePage(bytes.NewReader(data), scrapertest.ObservedAt)
		if err == nil && p.Rows == nil {
			t.Error("nil rows without an error")
		}
		_ = parseArmSku(string(data))
	})
}

func TestMeterWithNonNumericPriceRejectedAlone(t *testing.T) {
	p, err := parsePage(strings.NewReader(`{"BillingCurrency":"USD","Items":[
		{"currencyCode":"USD","retailPrice":"N/A","unitPrice":"N/A","armRegionName":"eastus","meterName":"NC40ads H100 v5","productName":"Virtual Machines NCads H100 v5 Series","skuName":"NC40ads H100 v5","serviceName":"Virtual Machines","unitOfMeasure":"1 Hour","type":"Consumption","armSkuName":"Standard_NC40ads_H100_v5"},
		{"currencyCode":"USD","retailPrice":6.98,"unitPrice":6.98,"armRegionName":"westus3","meterName":"NC40ads H100 v5","productName":"Virtual Machines NCads H100 v5 Series","skuName":"NC40ads H100 v5","serviceName":"Virtual Machines","unitOfMeasure":"1 Hour","type":"Consumption","armSkuName":"Standard_NC40ads_H100_v5"}]}`),
		scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rows) == 0 || p.Rows[0].Region != "westus3" || len(p.Rejects) != 1 ||
		!strings.Contains(p.Rejects[0].Reason, "meter not readable") || !strings.Contains(p.Rejects[0].Raw, `"N/A"`) {
		t.Errorf("rows %+v rejects %+v", p.Rows, p.Rejects)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// TestCollectStoresSignalsDuckDB: one `gpuprice collect` of the sources that read
// risk and availability, each answered from recorded or documented responses (the
// recorded example's price fixtures, plus RunPod's gpuTypes answer, the Spot
// Advisor's real 2025-06-28 copy, Lambda's instance types, Crusoe's capacities and
// Azure's eviction rates, each from its source's testdata), stores every kind of
// signal beside the prices, hand-checked per source; `availability` and `risk`
// read them back.
func TestCollectStoresSignalsDuckDB(t *testing.T) {
	testCollectStoresSignals(t, "duckdb://"+filepath.Join(t.TempDir(), "signals.duckdb"))
}

// TestIntegrationClickHouseCollectStoresSignals is the same on ClickHouse.
func TestIntegrationClickHouseCollectStoresSignals(t *testing.T) {
	testCollectStoresSignals(t, chtest.FreshDSN(t, "signals"))
}

func testCollectStoresSignals(t *testing.T, dsn string) {
	if recordedErr != nil {
		t.Fatal(recordedErr)
	}
	fixtures := loadRecordedFixtures(t)
	byPath := map[string]string{} // "/path" → "host/path": a next page's link, made on the server's host
	for key := range fixtures {
		_, p, _ := strings.Cut(key, "/")
		byPath["/"+p] = key
	}
	read := func(parts ...string) []byte {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "scrapers"}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	advisor, err := fetch.Gunzip(read("aws", "testdata", "spot_advisor", "input.json.gz"), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	var page1 struct {
		SkipToken string `json:"$skipToken"`
	}
	if err := json.Unmarshal(read("azure", "testdata", "eviction_rates", "page1.json"), &page1); err != nil {
		t.Fatal(err)
	}
	extra := map[string][]byte{
		"/runpod-api/graphql": read("runpod", "testdata", "api_full", "input.json"),
		"/spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json": advisor,
		"/lambda-api/api/v1/instance-types":                         read("lambda", "testdata", "instance_types.json"),
		"/crusoe-api/v1alpha5/capacities":                           read("crusoe", "testdata", "capacities.json"),
		"/azure-login/tenant-1/oauth2/v2.0/token":                   read("azure", "testdata", "eviction_rates", "token.json"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if b, ok := extra[r.URL.Path]; ok {
			_, _ = w.Write(b)
			return
		}
		if r.URL.Path == "/azure-graph/providers/Microsoft.ResourceGraph/resources" {
			var body struct {
				Options struct {
					SkipToken string `json:"$skipToken"`
				} `json:"options"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			page := "page1.json"
			if body.Options.SkipToken == page1.SkipToken {
				page = "page2.json"
			}
			_, _ = w.Write(read("azure", "testdata", "eviction_rates", page))
			return
		}
		// The recorded example's price fixtures at "/host/path" of each real URL.
		key := strings.TrimPrefix(r.URL.Path, "/")
		if _, ok := fixtures[key]; !ok {
			key = byPath[r.URL.Path]
		}
		for _, f := range fixtures[key] {
			if f.when != nil && !f.when(r.URL.RawQuery) {
				continue
			}
			w.Header().Set("Content-Type", f.contentType)
			_, _ = w.Write(f.body)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	for k, v := range map[string]string{"RUNPOD_API_KEY": "rp-test-key", "LAMBDA_API_KEY": "lambda-test-key",
		"CRUSOE_ACCESS_KEY_ID": "crusoe-id", "CRUSOE_SECRET_KEY": "Y3J1c29lLXNlY3JldA", "AZURE_TENANT_ID": "tenant-1",
		"AZURE_CLIENT_ID": "client-1", "AZURE_CLIENT_SECRET": "azure-test-secret"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	b := srv.URL
	cfg := fmt.Sprintf(`data_dir: %s
http: {timeout: 10s, retries: 1, min_interval: 1ms}
sources:
  runpod: {endpoint: %s/runpod-api/graphql, options: {mode: api}, schedule: '%s'}
  vast: {endpoint: %s/console.vast.ai/api/v0/bundles/, expect_rows: 20, schedule: '%s'}
  lambda: {endpoint: %s/lambda.ai/service/gpu-cloud, options: {capacity_endpoint: %s/lambda-api/api/v1/instance-types}, schedule: '%s'}
  crusoe: {endpoint: %s/crusoe.ai/cloud/pricing, options: {capacity_endpoint: %s/crusoe-api/v1alpha5/capacities}, schedule: '%s'}
  azure: {endpoint: %s/prices.azure.com/api/retail/prices, options: {login_endpoint: %s/azure-login, management_endpoint: %s/azure-graph}, expect_rows: 30, schedule: '%s'}
  aws: {endpoint: %s/pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/region_index.json, options: {mode: public, regions: [us-east-2], spot_feed: %s/website.spot.ec2.aws.a2z.com/spot.js, spot_advisor: %s/spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json}, schedule: '%s'}
`, dir, b, neverSchedule, b, neverSchedule, b, b, neverSchedule, b, b, neverSchedule, b, b, b, neverSchedule, b, b, b,
		neverSchedule)
	on := map[string]bool{"runpod": true, "vast": true, "lambda": true, "crusoe": true, "azure": true, "aws": true}
	for _, other := range append(disabledOthers(), "azure", "vast", "lambda") {
		if !on[other] {
			cfg += "  " + other + ": {enabled: false}\n"
		}
	}
	cfgPath := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "--config", cfgPath, "--store", dsn, "collect"); code != 0 {
		t.Fatalf("collect exit %d:\n%s", code, out)
	}

	sigs := storedSignals(t, dsn)
	kinds := map[string]int{}
	got := map[string]schemas.Signal{}
	for _, s := range sigs {
		kinds[s.Provider+" "+s.Kind]++
		got[s.Provider+" "+s.Kind+" "+s.SKU+" "+s.Region] = s
		if s.RunID == "" || s.Source == "" || s.ObservedAt.IsZero() || strings.Contains(s.SourceURL, "test-key") ||
			strings.Contains(s.SourceURL, "secret") {
			t.Errorf("signal without provenance, or with a secret: %+v", s)
		}
	}
	for _, k := range []string{"runpod stock", "vast stock", "vast reliability", "vast depth", "lambda stock",
		"crusoe stock", "azure interruption", "aws interruption"} {
		if kinds[k] == 0 {
			t.Errorf("no %s signal stored (%v)", k, kinds)
		}
	}
	check := func(key, want string) {
		t.Helper()
		s, ok := got[key]
		if !ok {
			t.Errorf("no signal %s", key)
			return
		}
		if g := fmt.Sprintf("%g %s %s", s.Value, s.Label, s.GPU); g != want {
			t.Errorf("%s: %q, want %q", key, g, want)
		}
	}
	// RunPod api_full: H100 SXM secure High, 8 GPUs (TestRunPodAPINotOfferedIsRoutine's runPodStock).
	check("runpod stock NVIDIA H100 80GB HBM3:secure ", "8 High H100-SXM-80GB")
	// Crusoe capacities.json: h100-80gb-sxm-ib.8x in us-east1-a, 3 instances; out in us-southcentral1-a.
	check("crusoe stock crusoe:h100-80gb-sxm-ib.8x us-east1-a", "3  H100-SXM-80GB")
	check("crusoe stock crusoe:h100-80gb-sxm-ib.8x us-southcentral1-a", "0  H100-SXM-80GB")
	// The Spot Advisor's 2025-06-28 copy: p5.48xlarge in us-east-2.
	var doc struct {
		SpotAdvisor map[string]map[string]map[string]struct {
			R int `json:"r"`
		} `json:"spot_advisor"`
		Ranges []struct {
			Index int    `json:"index"`
			Label string `json:"label"`
		} `json:"ranges"`
	}
	if err := json.Unmarshal(advisor, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.SpotAdvisor["us-east-2"]["Linux"]["p5.48xlarge"].R
	check("aws interruption p5.48xlarge us-east-2", fmt.Sprintf("%d %s H100-SXM-80GB", r, doc.Ranges[r].Label))
	for k := range kinds {
		if strings.HasPrefix(k, "aws ") && kinds[k] > 0 {
			for _, s := range sigs {
				if s.Provider == "aws" && s.Region != "us-east-2" {
					t.Fatalf("an AWS band of a region not collected: %+v", s)
				}
			}
		}
	}

	// Read back: every provider with stock in the window, and the bands.
	var a availabilityJSON
	runJSON(t, &a, "--store", dsn, "availability", "--by", "gpu", "--format", "json")
	providers := map[string]bool{}
	for _, r := range a.Rows {
		providers[r.Provider] = true
	}
	for _, p := range []string{"runpod", "vast", "lambda", "crusoe"} {
		if !providers[p] {
			t.Errorf("availability has no %s rows: %+v", p, a.Rows)
		}
	}
	out, code := run(t, "--store", dsn, "risk", "--provider", "azure")
	if code != 0 || !strings.Contains(out, "azure") {
		t.Errorf("risk --provider azure: exit %d\n%s", code, out)
	}
}

// TestCollectStoresAPISignalsDuckDB: the signals of the sources' credentialed APIs,
// through `gpuprice collect`: AWS's Capacity Blocks (API mode with static test
// credentials against a fake of EC2 answering the documented XML: p5.48xlarge
// offerings in us-east-1) and GCP's daily preemption shares (API mode with a key,
// an access token and a project against a fake of the Cloud Billing Catalog and of
// Compute's capacity history, answering the documented shapes from scrapers/gcp's
// testdata), stored beside the prices.
func TestCollectStoresAPISignalsDuckDB(t *testing.T) {
	testCollectStoresAPISignals(t, "duckdb://"+filepath.Join(t.TempDir(), "api-signals.duckdb"))
}

// TestIntegrationClickHouseCollectStoresAPISignals is the same on ClickHouse.
func TestIntegrationClickHouseCollectStoresAPISignals(t *testing.T) {
	testCollectStoresAPISignals(t, chtest.FreshDSN(t, "apisignals"))
}

func testCollectStoresAPISignals(t *testing.T, dsn string) {
	aws, _ := archiveFakeAWS(t)
	archiveAWSEnv(t)
	read := func(parts ...string) []byte {
		b, err := os.ReadFile(filepath.Join(append([]string{"..", "..", "scrapers", "gcp", "testdata"}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	token := func(file string) string {
		var p struct {
			Next string `json:"nextPageToken"`
		}
		if err := json.Unmarshal(read(file, "input.json"), &p); err != nil || p.Next == "" {
			t.Fatalf("%s: no nextPageToken (%v)", file, err)
		}
		return p.Next
	}
	tok1, tok2 := token("page1"), token("page2")
	var region map[string]any
	if err := json.Unmarshal(read("capacity_history", "region.json"), &region); err != nil {
		t.Fatal(err)
	}
	capacityRE := regexp.MustCompile(`^/compute/v1/projects/gpuprice-test/regions/([a-z0-9-]+)/advice/capacityHistory$`)
	gcp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if m := capacityRE.FindStringSubmatch(r.URL.Path); m != nil {
			if r.Header.Get("Authorization") != "Bearer gcp-test-token" {
				http.Error(w, `{"error":{"code":401}}`, http.StatusUnauthorized)
				return
			}
			var body struct {
				InstanceProperties struct {
					MachineType string `json:"machineType"`
				} `json:"instanceProperties"`
				LocationPolicy struct {
					Location string `json:"location"`
				} `json:"locationPolicy"`
			}
			_ = json.NewDecoder(r.Body).Decode(&body)
			a := map[string]any{}
			for k, v := range region {
				a[k] = v
			}
			a["machineType"] = body.InstanceProperties.MachineType
			a["location"] = "https://www.googleapis.com/compute/v1/projects/gpuprice-test/" + body.LocationPolicy.Location
			_ = json.NewEncoder(w).Encode(a)
			return
		}
		switch r.URL.Query().Get("pageToken") {
		case "":
			_, _ = w.Write(read("page1", "input.json"))
		case tok1:
			_, _ = w.Write(read("page2", "input.json"))
		case tok2:
			_, _ = w.Write(read("empty", "input.json"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer gcp.Close()
	t.Setenv("GPUPRICE_GCP_API_KEY", "gcp-test-key")
	t.Setenv("GPUPRICE_GCP_ACCESS_TOKEN", "gcp-test-token")
	dir := t.TempDir()
	cfg := fmt.Sprintf(`data_dir: %s
http: {timeout: 10s, retries: 1, min_interval: 1ms}
sources:
  aws: {endpoint: %s/offers/v1.0/aws/AmazonEC2/current/region_index.json, schedule: '%s',
    options: {mode: api, regions: [us-east-1], since: 3h, pricing_endpoint: %s, ec2_endpoint: %s, spot_advisor: "off",
      capacity_block_types: [p5.48xlarge, p4d.24xlarge]}}
  gcp: {endpoint: %s/v1/services/6F81-5844-456A/skus, schedule: '%s', expect_rows: 10,
    options: {mode: api, project: gpuprice-test, compute_endpoint: %s/compute/v1}}
`, dir, aws.URL, neverSchedule, aws.URL, aws.URL, gcp.URL, neverSchedule, gcp.URL)
	for _, other := range append(disabledOthers(), "azure", "vast", "lambda") {
		if other != "aws" && other != "gcp" {
			cfg += "  " + other + ": {enabled: false}\n"
		}
	}
	cfgPath := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "--config", cfgPath, "--store", dsn, "collect"); !collected(code) {
		t.Fatalf("collect exit %d:\n%s", code, out)
	}
	sigs := storedSignals(t, dsn)
	var blocks, preempt int
	for _, s := range sigs {
		switch {
		case s.Provider == "aws" && s.Kind == schemas.SignalStock:
			blocks++
			if s.SKU == "p5.48xlarge:capacity-block" && s.Value > 0 && (s.Attrs["usd_gpu_hour"] == "" ||
				s.Attrs["upfront_fee_usd"] == "" || s.GPU != "H100-SXM-80GB" || s.Zone == "") {
				t.Errorf("capacity block signal %+v", s)
			}
		case s.Provider == "gcp" && s.Kind == schemas.SignalPreemption:
			preempt++
			if s.Value < 0 || s.Value > 1 || s.GPU == "" || strings.Contains(s.SourceURL, "gcp-test") {
				t.Errorf("preemption signal %+v", s)
			}
		}
		if strings.Contains(s.SourceURL, "test-key") || strings.Contains(s.SourceURL, "test-token") {
			t.Errorf("a secret in %+v", s)
		}
	}
	if blocks == 0 || preempt == 0 {
		t.Fatalf("capacity block signals %d, preemption signals %d: want both (%d signals)", blocks, preempt, len(sigs))
	}
	var a availabilityJSON
	runJSON(t, &a, "--store", dsn, "availability", "--provider", "aws", "--format", "json")
	if len(a.Rows) == 0 {
		t.Errorf("availability --provider aws: no capacity block rows")
	}
}

// storedSignals are every signal the store of dsn keeps.
func storedSignals(t *testing.T, dsn string) []schemas.Signal {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sg, err := store.SignalsOf(st)
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := sg.Signals(context.Background(), store.SignalQuery{})
	if err != nil {
		t.Fatal(err)
	}
	return sigs
}

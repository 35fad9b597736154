package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gpuprice/gpuprice/ingest/archive"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/store"
)

const (
	archiveAWSKeyID  = "AKIDGPUPRICETESTKEY"
	archiveAWSSecret = "gpuPriceTest/Secret+AccessKey0123456789xyz"
)

// archiveFakeAWS answers as AWS does, from the aws source's recorded responses: the Price
// List Query API (JSON 1.1, two pages for us-east-1), EC2 DescribeSpotPriceHistory
// (query protocol, two pages) and DescribeCapacityBlockOfferings (p5.48xlarge, two
// pages), the public region index, one region's offer file and
// the spot feed. It counts what it answered.
func archiveFakeAWS(t *testing.T) (*httptest.Server, map[string]int) {
	t.Helper()
	read := func(p string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "..", "scrapers", "aws", "testdata", p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var page1 struct{ NextToken string }
	if err := json.Unmarshal(read("pricelist_page1/input.json"), &page1); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.Method == http.MethodPost && r.Header.Get("X-Amz-Target") == "AWSPriceListService.GetProducts":
			if !strings.Contains(r.Header.Get("Authorization"), "Credential="+archiveAWSKeyID+"/") {
				t.Errorf("GetProducts not signed with the test key: %q", r.Header.Get("Authorization"))
			}
			hits["GetProducts"]++
			var in struct{ NextToken string }
			_ = json.Unmarshal(body, &in)
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.Header().Set("X-Amzn-Requestid", "0e9a0f5e-7d5a-4c8f-9d1f-3c1b2a4d5e6f")
			if in.NextToken == page1.NextToken {
				w.Write(read("pricelist_page2/input.json"))
			} else {
				w.Write(read("pricelist_page1/input.json"))
			}
		case r.Method == http.MethodPost:
			form, _ := url.ParseQuery(string(body))
			if form.Get("Action") == "DescribeCapacityBlockOfferings" {
				// p5.48xlarge's two pages of offerings; every other type none.
				hits["DescribeCapacityBlockOfferings"]++
				w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
				switch {
				case form.Get("InstanceType") != "p5.48xlarge":
					w.Write(read("capacity_blocks/empty.xml"))
				case form.Get("NextToken") != "":
					w.Write(read("capacity_blocks/p5_page2.xml"))
				default:
					w.Write(read("capacity_blocks/p5_page1.xml"))
				}
				return
			}
			if form.Get("Action") != "DescribeSpotPriceHistory" {
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			hits["DescribeSpotPriceHistory"]++
			w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
			if form.Get("NextToken") != "" {
				w.Write(read("spot_history/page2.xml"))
			} else {
				w.Write(read("spot_history/page1.xml"))
			}
		case r.URL.Path == "/offers/v1.0/aws/AmazonEC2/current/region_index.json":
			hits["region_index"]++
			w.Write(read("region_index/region_index.json"))
		case r.URL.Path == "/offers/v1.0/aws/AmazonEC2/20251101000000/us-east-2/index.json":
			hits["offer"]++
			w.Header().Set("Content-Type", "application/json")
			w.Write(read("offer_us-east-2/input.json"))
		case r.URL.Path == "/spot.js":
			hits["spot.js"]++
			w.Write(read("spotfeed/input.js"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

// archiveAWSEnv gives the SDK's default chain the static test credentials and nothing else.
func archiveAWSEnv(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": archiveAWSKeyID, "AWS_SECRET_ACCESS_KEY": archiveAWSSecret, "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "", "AWS_CA_BUNDLE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_ROLE_ARN": "",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "",
		"AWS_ENDPOINT_URL": "", "AWS_MAX_ATTEMPTS": "", "AWS_RETRY_MODE": "",
	} {
		t.Setenv(k, v)
	}
}

// archiveAWSConfig writes a config running the aws source alone against base, in mode.
func archiveAWSConfig(t *testing.T, base, mode, region string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`data_dir: %s
http: {timeout: 5s, retries: 2, min_interval: 1ms}
sources:
  aws:
    endpoint: %s/offers/v1.0/aws/AmazonEC2/current/region_index.json
    options: {mode: %s, regions: [%s], since: 3h, pricing_endpoint: %s, ec2_endpoint: %s, spot_feed: %s/spot.js, spot_advisor: "off",
      collect: [on_demand, reserved, spot]}
`, dir, base, mode, region, base, base, base)
	seen := map[string]bool{"aws": true}
	for _, n := range append(disabledOthers(), "azure", "vast", "lambda", "fx") {
		if !seen[n] {
			seen[n] = true
			cfg += "  " + n + ": {enabled: false}\n"
		}
	}
	p := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// archiveStoredRows are a store's observations as JSON lines, sorted, without the run id
// (a reparse is a run of its own).
func archiveStoredRows(t *testing.T, dsn string) []string {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obs, err := st.Observations(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(obs))
	for _, o := range obs {
		o.RunID = ""
		b, _ := json.Marshal(o)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

// archiveNoSecret walks the archive, bodies decompressed, for the AWS secret and key.
func archiveNoSecret(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".gz") {
			if data, err = fetch.Gunzip(data, 1<<30); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		for _, s := range []string{archiveAWSSecret, url.QueryEscape(archiveAWSSecret), archiveAWSKeyID, "AWS4-HMAC-SHA256"} {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %q", p, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// archiveRecordAndReparse collects with --record, stops the fake, reparses into a fresh
// store and checks the same rows come back; it returns the archive.
func archiveRecordAndReparse(t *testing.T, cfg string, srv *httptest.Server) *archive.Archive {
	t.Helper()
	arc := filepath.Join(t.TempDir(), "archive")
	live := "duckdb://" + filepath.Join(t.TempDir(), "live.duckdb")
	out, code := run(t, "--config", cfg, "--store", live, "collect", "--record", arc)
	if !collected(code) || !regexp.MustCompile(`(?m)^aws\s+(ok|degraded)\s+[1-9]`).MatchString(out) {
		t.Fatalf("collect --record: exit %d\n%s", code, out)
	}
	livePrices, _ := run(t, "--config", cfg, "--store", live, "prices", "--all-series", "--format", "csv")
	liveRows := archiveStoredRows(t, live)
	srv.Close() // from here on, nothing answers but the archive

	fresh := "duckdb://" + filepath.Join(t.TempDir(), "fresh.duckdb")
	out, code = run(t, "--config", cfg, "--store", fresh, "reparse", arc)
	if !collected(code) || strings.Contains(out, "not in the archive") || !regexp.MustCompile(`(?m)^aws\s+(ok|degraded)\s+[1-9]`).MatchString(out) {
		t.Fatalf("reparse: exit %d\n%s", code, out)
	}
	rebuiltPrices, _ := run(t, "--config", cfg, "--store", fresh, "prices", "--all-series", "--format", "csv")
	if rebuiltPrices != livePrices || len(parseCSV(t, livePrices)) < 5 {
		t.Errorf("reparsed prices differ from the recorded run's\n--- live ---\n%s\n--- reparsed ---\n%s", livePrices, rebuiltPrices)
	}
	if rebuilt := archiveStoredRows(t, fresh); strings.Join(rebuilt, "\n") != strings.Join(liveRows, "\n") {
		t.Errorf("reparsed observations differ: %d rows, recorded run %d", len(rebuilt), len(liveRows))
	}
	archiveNoSecret(t, arc)
	a, err := archive.Open(arc)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The aws source's SDK calls are archived (request bodies included, credentials not)
// and replayed to the SDK, so reparse rebuilds the API rows with no network.
func TestRecordAndReparseAWSAPI(t *testing.T) {
	archiveAWSEnv(t)
	srv, hits := archiveFakeAWS(t)
	a := archiveRecordAndReparse(t, archiveAWSConfig(t, srv.URL, "api", "us-east-1"), srv)
	if hits["GetProducts"] != 2 || hits["DescribeSpotPriceHistory"] != 2 || hits["offer"]+hits["spot.js"] != 0 {
		t.Errorf("fake answered %v, want two pages of each API", hits)
	}
	var calls []string
	for _, e := range a.Manifest.Entries {
		if e.Source != "aws" || e.Method != http.MethodPost || e.Status != 200 || len(e.RequestBody) == 0 || e.Bytes == 0 {
			t.Errorf("entry %+v", e)
			continue
		}
		switch {
		case bytes.Contains(e.RequestBody, []byte(`"ServiceCode":"AmazonEC2"`)):
			calls = append(calls, "GetProducts")
		case bytes.Contains(e.RequestBody, []byte("Action=DescribeSpotPriceHistory")):
			calls = append(calls, "DescribeSpotPriceHistory")
		}
		for k := range e.Header {
			if strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "X-Amz-Security-Token") {
				t.Errorf("entry %d keeps header %s", e.Seq, k)
			}
		}
	}
	if strings.Join(calls, " ") != "GetProducts GetProducts DescribeSpotPriceHistory DescribeSpotPriceHistory" {
		t.Errorf("archived calls %v", calls)
	}
}

// The public offer file, streamed, is archived whole as it is parsed and served back
// streaming by reparse.
func TestRecordAndReparseAWSPublic(t *testing.T) {
	archiveAWSEnv(t)
	srv, hits := archiveFakeAWS(t)
	a := archiveRecordAndReparse(t, archiveAWSConfig(t, srv.URL, "public", "us-east-2"), srv)
	if hits["region_index"] != 1 || hits["offer"] != 1 || hits["spot.js"] != 1 || hits["GetProducts"]+hits["DescribeSpotPriceHistory"] != 0 {
		t.Errorf("fake answered %v", hits)
	}
	offer, err := os.ReadFile(filepath.Join("..", "..", "scrapers", "aws", "testdata", "offer_us-east-2", "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range a.Manifest.Entries {
		if strings.HasSuffix(e.URL, "/us-east-2/index.json") {
			body, err := a.Body(e)
			if err != nil || !bytes.Equal(body, offer) || e.Header.Get("Content-Type") != "application/json" {
				t.Errorf("archived offer file: %d bytes (%v), want %d", len(body), err, len(offer))
			}
			found = true
		}
	}
	if !found || len(a.Manifest.Entries) != 3 {
		t.Errorf("entries %+v, want the index, the offer file and the spot feed", a.Manifest.Entries)
	}
}

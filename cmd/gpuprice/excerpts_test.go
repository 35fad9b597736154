package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// excerptSubstitutes says which recorded response (its file under the source's
// testdata/) a complete provider answer replaces, for the sources that make more than
// one request; a source with a single recorded response has its answer replaced.
var excerptSubstitutes = map[string]string{
	"aws/spotfeed_legacy/input.js":       "spotfeed/input.js",
	"vast/mixed_gpus/input.json":         "recorded_mixed_gpus.json",
	"vast/reference_h100_sxm/input.json": "recorded_mixed_gpus.json",
	// RunPod's recorded response is its API's (api mode); its pages answer page mode.
	"runpod/page_legacy/input.html": "api_recorded/input.json",
	"runpod/page_table/input.html":  "api_recorded/input.json",
}

// excerptConfig is the source's configuration (BASE: the server) for a file that
// answers other options than its recorded responses'.
var excerptConfig = map[string]string{
	"ovhcloud/catalog_us/input.json": "{endpoint: BASE/api.ovh.com/1.0/order/catalog/public/cloud, " +
		"options: {subsidiary: US}}",
	"runpod/page_legacy/input.html": runPodPageConfig,
	"runpod/page_table/input.html":  runPodPageConfig,
}

// runPodPageConfig reads RunPod's pricing page (page mode) where its recorded API
// answer is served, as HTML (excerptContentType).
const runPodPageConfig = "{options: {mode: page, page_url: BASE/api.runpod.io/graphql}}"

// excerptContentType is the Content-Type of a file that answers in place of a
// recorded response of another type.
var excerptContentType = map[string]string{
	"runpod/page_legacy/input.html": "text/html; charset=utf-8",
	"runpod/page_table/input.html":  "text/html; charset=utf-8",
}

// excerptExpectRows are the excerpts smaller than a production answer, each with
// the rows it holds: collected with sources.<name>.expect_rows set to that (the
// setting of a deployment that sees part of a catalog), so that they collect ok
// while the source's own minimum still guards a production answer (asserted: with
// the source's minimum they are degraded for coverage).
var excerptExpectRows = map[string]int{
	"azure/page1/input.json":              36, // page 1 of the recorded answer, alone
	"ovhcloud/catalog_us/input.json":      2,  // the US subsidiary's catalog: two GPU plans
	"vast/mixed_gpus/input.json":          25,
	"vast/reference_h100_sxm/input.json":  4,
	"crusoe/reference_excerpt/input.html": 4,
	"gcp/pricing_page/input.html":         30,
	"runpod/page_legacy/input.html":       13,
}

// excerptNotOffered is how many rows of an answer the provider itself says are not
// offered (RunPod's empty price attributes, the pages' "Contact sales", "Contact us",
// "Pre order"): counted in the run's rows_not_offered, neither stored nor
// quarantined (issue 23).
var excerptNotOffered = map[string]int{
	"coreweave/full_page/input.html":        2,
	"crusoe/full_page/input.html":           10,
	"gmi/full_page/input.html":              2,
	"gmi/reference_excerpt/input.html":      1,
	"runpod/page_table/input.html":          4,
	"together/full_page/input.html":         8,
	"together/recorded_page/input.html":     16,
	"together/reference_excerpt/input.html": 2,
	"vast/mixed_gpus/input.json":            2, // the offer at dph_base 0: on demand and its min_bid 0
}

// excerptExcluded are the files under scrapers/<source>/testdata/ that are not a
// complete provider answer, each with the reason; every other input file is collected
// by TestEveryRealExcerptCollectsOK.
var excerptExcluded = map[string]string{
	// Constructed or partial by design: what the source must refuse.
	"gmi/reserved_no_term/input.html": "reserved cards under a heading that states no term (constructed): " +
		"quarantined by design, the run degraded",
	"together/reference_excerpt/input.html": "an excerpt without the page's caption \"All prices are per GPU " +
		"per hour\": its GPU Clusters rows state no unit and are quarantined (recorded_page and full_page have it)",
	// AWS: the Price List API mode is signed (credentials), and the rest are pieces.
	"aws/offer_terms_first/input.json":   "terms before products: cannot be streamed, an error by design",
	"aws/offer_malformed/input.json":     "the offer file's first 3000 bytes: truncated",
	"aws/pricelist_botocore/input.json":  "a GetProducts page (signed API mode) with only an EBS product",
	"aws/pricelist_empty/input.json":     "a GetProducts page with no items",
	"aws/pricelist_malformed/input.json": "a GetProducts page with a truncated item",
	"aws/pricelist_odd/input.json":       "a GetProducts page of odd items (zero, text, CNY prices)",
	"aws/pricelist_page1/input.json":     "page 1 of 2 of the signed GetProducts API: not an answer alone",
	"aws/pricelist_page2/input.json":     "page 2 of 2 of the signed GetProducts API: not an answer alone",
	"aws/describe_regions/response.xml":  "backfill's DescribeRegions (signed EC2 API), not a price answer",
	"aws/spot_advisor/input.json.gz":     "interruption rates joined to spot prices, not a price answer",
	"aws/spot_advisor/spotinfo_2021-02-10.json.gz": "a 2021 copy of the interruption rates (the Spot Advisor " +
		"backfill's), not a price answer",
	"aws/spot_history/page1.xml":        "page 1 of the signed spot price history (backfill)",
	"aws/spot_history/page2.xml":        "page 2 of the signed spot price history (backfill)",
	"aws/spot_history/other_region.xml": "a spot price history page of another region (backfill)",
	"aws/spot_history/throttled.xml":    "an EC2 error response",
	"aws/spot_history/unauthorized.xml": "an EC2 error response",
	"aws/spotfeed_changed/input.js":     "spot.js in a layout without config: drift by design",
	// AWS Capacity Blocks (signed EC2 API): stock signals, not prices.
	"aws/capacity_blocks/empty.xml":        "a DescribeCapacityBlockOfferings answer with no offering",
	"aws/capacity_blocks/invalid_type.xml": "an EC2 error response (InvalidParameterValue)",
	"aws/capacity_blocks/p5_page1.xml":     "page 1 of the signed DescribeCapacityBlockOfferings: signals, not prices",
	"aws/capacity_blocks/p5_page2.xml":     "page 2 of the signed DescribeCapacityBlockOfferings",
	"aws/capacity_blocks/unauthorized.xml": "an EC2 error response (UnauthorizedOperation)",
	// Azure: the pages of one answer, and constructed oddities.
	"azure/page2/input.json":      "page 2 of the recorded answer (recorded.json collects both pages)",
	"azure/empty/input.json":      "no items: the empty answer the source must flag",
	"azure/malformed/input.json":  "truncated JSON",
	"azure/odd_meters/input.json": "odd meters only (constructed), no GPU coverage",
	"azure/eur/input.json":        "a EUR-priced page (constructed) of a few meters",
	// Azure's eviction rates (Resource Graph, needs credentials): signals, not prices.
	"azure/eviction_rates/token.json": "the token endpoint's answer (constructed from the documented shape)",
	"azure/eviction_rates/page1.json": "page 1 of the Resource Graph eviction rates (constructed): signals, " +
		"not a price answer",
	"azure/eviction_rates/page2.json":            "page 2 of the Resource Graph eviction rates (constructed)",
	"azure/eviction_rates/odd_rows.json":         "eviction rate records the source must refuse (constructed)",
	"azure/eviction_rates/signals_expected.json": "the signals expected of page1 and page2 (a golden)",
	// GCP's capacity history (needs an OAuth token): signals, not prices.
	"gcp/capacity_history/response.json": "a capacity history answer (constructed from the documented shape): " +
		"signals, not a price answer",
	"gcp/capacity_history/odd_records.json":      "capacity history records the parser must refuse (constructed)",
	"gcp/capacity_history/region.json":           "a region's capacity history answer (constructed)",
	"gcp/capacity_history/collect_odd.json":      "odd records of a collection (constructed)",
	"gcp/capacity_history/signals_expected.json": "the signals expected of a collection (a golden)",
	// GCP: the Cloud Billing API mode (needs a key) and the page mode's drift.
	"gcp/page1/input.json":               "page 1 of the Cloud Billing API (api mode, needs a key)",
	"gcp/page2/input.json":               "page 2 of the Cloud Billing API (api mode, needs a key)",
	"gcp/empty/input.json":               "an API page with no SKUs",
	"gcp/malformed/input.json":           "truncated JSON",
	"gcp/odd_skus/input.json":            "odd SKUs only (constructed)",
	"gcp/changed_layout/input.json":      "drift by design",
	"gcp/page_empty/input.html":          "a pricing page with no tables",
	"gcp/page_layout_changed/input.html": "drift by design",
	"oci/page1/input.json":               "page 1 of 2 of a paginated answer, not an answer alone",
	"oci/page2/input.json":               "page 2 of 2 of a paginated answer, not an answer alone",
	"oci/empty/input.json":               "no items",
	"oci/malformed/input.json":           "truncated JSON",
	"oci/odd_items/input.json":           "odd items only (constructed)",
	"oci/changed_layout/input.json":      "drift by design",
	"ovhcloud/changed_layout/input.json": "drift by design",
	"ovhcloud/malformed/input.json":      "truncated JSON",
	"ovhcloud/no_gpu/input.json":         "a catalog without GPU plans",
	"ovhcloud/no_locale/input.json":      "a catalog without its locale (currency unknown)",
	"ovhcloud/odd_plans/input.json":      "odd plans only (constructed)",
	// RunPod: the api_* answers are collected by TestRunPodAPINotOfferedIsRoutine.
	"runpod/api_recorded/input.json":       "collected by TestRunPodAPINotOfferedIsRoutine (api mode)",
	"runpod/api_reference/input.json":      "collected by TestRunPodAPINotOfferedIsRoutine (api mode)",
	"runpod/api_full/input.json":           "collected by TestRunPodAPINotOfferedIsRoutine (api mode)",
	"runpod/api_changed_layout/input.json": "drift by design",
	"runpod/api_empty/input.json":          "no GPU types",
	"runpod/api_graphql_errors/input.json": "a GraphQL error answer",
	"runpod/api_malformed/input.json":      "truncated JSON",
	"runpod/page_no_cards/input.html":      "a page without price cards: drift by design",
	"fx/changed_layout/input.xml":          "drift by design",
	"fx/empty/input.xml":                   "no rates",
	"fx/malformed/input.xml":               "truncated XML",
	"fx/no_usd/input.xml":                  "rates without USD: unusable by design",
	"coreweave/contact_sales/input.html":   "contact-sales rows only: no price to collect",
	"coreweave/empty/input.html":           "no table",
	"coreweave/layout_changed/input.html":  "drift by design",
	"coreweave/partial/input.html":         "a truncated table",
	"crusoe/empty/input.html":              "no cards",
	"crusoe/layout_changed/input.html":     "drift by design",
	"crusoe/partial/input.html":            "a truncated page",
	"gmi/empty/input.html":                 "no cards",
	"gmi/layout_changed/input.html":        "drift by design",
	"gmi/partial/input.html":               "a truncated page",
	"lambda/bad_tab/input.html":            "a tab of broken rows (constructed)",
	"lambda/contact_sales/input.html":      "contact-sales rows only: no price to collect",
	"lambda/empty/input.html":              "no table",
	"lambda/layout_changed/input.html":     "drift by design",
	"together/empty/input.html":            "no tables",
	"together/layout_changed/input.html":   "drift by design",
	"together/partial/input.html":          "a truncated page",
	"vast/empty/input.json":                "no offers",
	"vast/error_body/input.json":           "an API error answer",
	"vast/hostile/input.json":              "hostile values by design",
	"vast/malformed/input.json":            "truncated JSON",
	"vast/no_machine_id/input.json":        "offers without a machine id: quarantined by design",
}

// TestEveryRealExcerptCollectsOK collects every complete provider answer under each
// source's testdata/ (its recorded responses with one of them replaced by the file,
// answered at "/host/path" as BenchmarkCollectMemory answers them) through `gpuprice
// collect`: exit 0 and every run ok. A file neither collected nor in excerptExcluded
// fails the test.
func TestEveryRealExcerptCollectsOK(t *testing.T) {
	if recordedErr != nil {
		t.Fatal(recordedErr)
	}
	base := loadRecordedFixtures(t)
	ecb := "www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml"
	base[ecb][0].body = recentECB(t, base[ecb][0].body, time.Now())
	for _, n := range append(scrapers.Names(), "fx") {
		dir := filepath.Join("..", "..", "scrapers", n, "testdata")
		files, err := filepath.Glob(filepath.Join(dir, "*", "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			rel, _ := filepath.Rel(dir, path)
			id := n + "/" + filepath.ToSlash(rel)
			if filepath.Base(path) == "expected.json" || strings.Contains(id, "/fuzz/") {
				continue
			}
			if _, ok := excerptExcluded[id]; ok {
				continue
			}
			t.Run(id, func(t *testing.T) { collectExcerpt(t, base, n, id, path, true) })
			if _, ok := excerptExpectRows[id]; ok { // the source's own minimum still guards it
				t.Run(id+"/own-minimum", func(t *testing.T) { collectExcerpt(t, base, n, id, path, false) })
			}
		}
	}
}

// collectExcerpt collects source n with its recorded response of the same file name
// (or excerptSubstitutes[id]) answered by the file at path; with expectRows, an
// excerpt of excerptExpectRows is collected with its expect_rows.
func collectExcerpt(t *testing.T, base map[string][]loadedFixture, n, id, path string, expectRows bool) {
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n == "fx" {
		body = recentECB(t, body, time.Now())
	}
	target, ok := excerptSubstitutes[id]
	fixtures := map[string][]loadedFixture{}
	replaced := 0
	for key, fs := range recordedFixtures {
		for i, f := range fs {
			lf := base[key][i]
			own := strings.TrimPrefix(f.file, n+"/testdata/")
			rel := strings.TrimPrefix(id, n+"/")
			if own != f.file && (own == rel || (ok && own == target) ||
				(!ok && len(fs) == 1 && len(recordedFixtures) > 0 && filepath.Base(own) == filepath.Base(path))) {
				lf.body = body
				if ct, ok := excerptContentType[id]; ok {
					lf.contentType = ct
				}
				replaced++
			}
			fixtures[key] = append(fixtures[key], lf)
		}
	}
	if replaced != 1 {
		t.Fatalf("%s replaces %d recorded responses of %s, want 1: add it to excerptSubstitutes", id, replaced, n)
	}
	byPath := map[string]string{} // "/path" → "host/path": a next page's link, made on the server's host
	for key := range fixtures {
		_, p, _ := strings.Cut(key, "/")
		byPath["/"+p] = key
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/")
		if _, ok := fixtures[key]; !ok {
			key = byPath[r.URL.Path]
		}
		for _, f := range fixtures[key] {
			if f.when == nil || f.when(r.URL.RawQuery) {
				w.Header().Set("Content-Type", f.contentType)
				_, _ = w.Write(f.body)
				return
			}
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	tmp := t.TempDir()
	cfg := fmt.Sprintf("data_dir: %s\nhttp: {timeout: 10s, retries: 1, min_interval: 1ms}\nsources:\n", tmp)
	for _, other := range append(scrapers.Names(), "fx") {
		// The ECB rates are read with a source priced in EUR (OVHcloud).
		if other == n || other == "fx" || (n == "fx" && other == "ovhcloud") {
			c := benchSources[other]
			if x, ok := excerptConfig[id]; ok && other == n {
				c = x
			}
			if rows, ok := excerptExpectRows[id]; ok && other == n && expectRows {
				c = strings.TrimSuffix(c, "}") + fmt.Sprintf(", expect_rows: %d}", rows)
			}
			cfg += "  " + other + ": " + strings.ReplaceAll(c, "BASE", srv.URL) + "\n"
		} else {
			cfg += "  " + other + ": {enabled: false}\n"
		}
	}
	cfgPath := filepath.Join(tmp, "gpuprice.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dsn := "duckdb://" + filepath.Join(tmp, "prices.duckdb")
	wantStatus, wantExit, degraded := schemas.RunOK, 0, ""
	if rows, ok := excerptExpectRows[id]; ok && !expectRows {
		wantStatus, wantExit, degraded = schemas.RunDegraded, 3, fmt.Sprintf("coverage: %d rows, expected at least", rows)
	}
	out, code := run(t, "--config", cfgPath, "--store", dsn, "collect")
	if code != wantExit {
		t.Errorf("%s: collect exit %d, want %d:\n%s", id, code, wantExit, out)
	}
	js, code := run(t, "--config", cfgPath, "--store", dsn, "runs", "--format", "json")
	if code != 0 {
		t.Fatalf("%s: runs exit %d:\n%s", id, code, js)
	}
	var runs []schemas.Run
	if err := json.Unmarshal([]byte(js), &runs); err != nil {
		t.Fatalf("%s: runs JSON: %v\n%s", id, err, js)
	}
	for _, r := range runs {
		if want, ok := excerptNotOffered[id]; ok && r.Source == n && r.RowsNotOffered != want {
			t.Errorf("%s: %s run counts %d rows not offered, want %d", id, r.Source, r.RowsNotOffered, want)
		}
		want := schemas.RunOK
		if r.Source == n {
			want = wantStatus
		}
		if r.Status != want || (want == schemas.RunDegraded && !strings.Contains(r.Error, degraded)) {
			t.Errorf("%s: %s run %s (%s), want %s %s", id, r.Source, r.Status, r.Error, want, degraded)
		}
	}
	if len(runs) == 0 {
		t.Errorf("%s: no run recorded", id)
	}
}

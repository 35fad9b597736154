package together

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil/pagetest"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

const pagePath = "/pricing"

func TestParsePage(t *testing.T) { pagetest.Golden(t, parsePage) }

func TestParsePageRules(t *testing.T) {
	res, err := pagetest.ParseFile(t, parsePage, "testdata/full_page/input.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rejects) != 0 {
		t.Errorf("rejects on the full page: %+v", res.Rejects)
	}
	rows := pagetest.Index(t, res.Rows)
	// Dedicated inference: 5 × (on demand, monthly reserved); clusters on demand: 3 of 6
	// priced ("—" is not offered); clusters reserved: 4 × 3 terms.
	if len(res.Rows) != 25 {
		t.Errorf("rows = %d, want 25", len(res.Rows))
	}
	d := rows["together:dedicated-inference:hgx-h100|on_demand"]
	if d.GPUName != "NVIDIA HGX H100" || d.PriceNative != 5.49 || d.Unit != schemas.UnitGPUHour || d.GPUCount != 1 ||
		d.Attrs["section"] != "Dedicated Inference" || d.Attrs["column"] != "On-demand" {
		t.Errorf("dedicated H100 = %+v", d)
	}
	if r := rows["together:dedicated-inference:hgx-h100|commitment_1m"]; r.PriceNative != 0 || r.Attrs["price_text"] != `not offered (the page shows "Contact sales")` {
		t.Errorf("dedicated H100 reserved = %+v", r)
	}
	c := rows["together:gpu-clusters:hgx-h100|on_demand"]
	if c.PriceNative != 3.99 || c.Attrs["subsection"] != "On-demand" || c.Attrs["column"] != "Hourly" {
		t.Errorf("cluster H100 = %+v", c)
	}
	if _, ok := rows["together:gpu-clusters:gb200-nvl72|on_demand"]; ok {
		t.Error("a row for a price shown as —")
	}
	for kind, want := range map[string]float64{"commitment_1m": 3.39, "commitment_6m": 2.99, "reserved_1y": 2.69} {
		if r, ok := rows["together:gpu-clusters:hgx-h100|"+kind]; !ok || r.PriceNative != want || r.Attrs["subsection"] != "Reserved" {
			t.Errorf("cluster H100 %s = %+v, want %v", kind, r, want)
		}
	}
	if g := rows["together:gpu-clusters:gb200-nvl72|reserved_1y"]; g.GPUName != "NVIDIA GB200 NVL72" || g.Attrs["price_text"] != `not offered (the page shows "Contact sales")` {
		t.Errorf("GB200 reserved = %+v", g)
	}
	if a := rows["together:dedicated-inference:a100-sxm-80gb|on_demand"]; a.GPUMemoryGB != 80 || a.PriceNative != 2.99 {
		t.Errorf("A100 = %+v", a)
	}
	for _, o := range res.Rows {
		if o.Provider != "together" || o.SourceKind != schemas.SourceScrape || o.Currency != "USD" || !o.ObservedAt.Equal(scrapertest.ObservedAt) || !schemas.ValidPricing(o.Pricing) {
			t.Errorf("row %s: %+v", o.SKU, o)
		}
	}
	src := page
	for _, want := range src.Expect().SKUs {
		if _, ok := rows[want+"|on_demand"]; !ok {
			t.Errorf("expected SKU %s not on the page", want)
		}
	}
	// The recorded excerpt cut the GPU Clusters "Hourly" table out of the hidden block
	// it lives in on the real page, without the caption that would state its unit: its
	// three prices are quarantined, not assumed per GPU (the full recorded page below
	// states the unit and gives them).
	ref, err := pagetest.ParseFile(t, parsePage, "testdata/reference_excerpt/input.html")
	if err != nil || len(ref.Rows) != 4 || len(ref.Rejects) != 3 {
		t.Errorf("the recorded excerpt: %d rows, %d rejects, %v; want 4 and 3", len(ref.Rows), len(ref.Rejects), err)
	}
	for _, r := range ref.Rejects {
		if !strings.Contains(r.Reason, "states no price unit") || !strings.Contains(r.Reason, "GPU Clusters") {
			t.Errorf("reject reason %q", r.Reason)
		}
	}
}

// TestRecordedPage reads the real page's structure: the GPU Clusters table under
// "All prices are per GPU per hour." with a two-row header (ON-Demand | Reserved over
// 7-30, 31-90, 91-180, 181+ days), and the older "Hourly" table the page hides.
func TestRecordedPage(t *testing.T) {
	res, err := pagetest.ParseFile(t, parsePage, "testdata/recorded_page/input.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rejects) != 0 {
		t.Errorf("rejects on the recorded page: %+v", res.Rejects)
	}
	rows := pagetest.Index(t, res.Rows)
	if len(res.Rows) < page.Expect().MinRows {
		t.Errorf("%d rows, the coverage guard asks %d", len(res.Rows), page.Expect().MinRows)
	}
	for _, want := range page.Expect().SKUs {
		if _, ok := rows[want+"|on_demand"]; !ok {
			t.Errorf("expected SKU %s not on the recorded page", want)
		}
	}
	for kind, want := range map[string]float64{"on_demand": 3.99, "commitment_1m": 3.69, "commitment_3m": 3.45, "commitment_6m": 3.19} {
		r, ok := rows["together:gpu-clusters:hgx-h100|"+kind]
		if !ok || r.PriceNative != want || r.Unit != schemas.UnitGPUHour || r.Attrs["subsection"] != "On-demand hourly rates and reserved capacity" {
			t.Errorf("cluster H100 %s = %+v, want %v per GPU-hour", kind, r, want)
		}
	}
	if r := rows["together:gpu-clusters:hgx-h100|commitment_1m"]; r.Attrs["column"] != "Reserved 7-30 days" {
		t.Errorf("column = %q", r.Attrs["column"])
	}
	if r := rows["together:gpu-clusters:hgx-b200|commitment_7m"]; r.PriceNative != 0 || r.Attrs["price_text"] != `not offered (the page shows "Contact us")` {
		t.Errorf("B200 181+ days = %+v", r)
	}
	if _, ok := rows["together:gpu-clusters:gb200-nvl72|on_demand"]; ok {
		t.Error("a row for a price shown as —")
	}
	for _, o := range res.Rows {
		if o.Attrs["column"] == "Hourly" {
			t.Errorf("a row from the hidden table: %+v", o)
		}
	}
}

func TestTableUnit(t *testing.T) {
	for _, c := range []struct {
		header, notes, unit string
		stated              bool
	}{
		{"Hardware All prices per gpu per hour", "", schemas.UnitGPUHour, true},
		{"Hardware Hourly", "All prices are per GPU per hour.", schemas.UnitGPUHour, true},
		{"Hardware Price /GPU-hr", "", schemas.UnitGPUHour, true},
		{"Hardware Hourly", "Prices per node per hour", schemas.UnitHour, true},
		{"Hardware Hourly", "Pay as you go GPU capacity on an hourly basis.", "", false},
		{"Hardware Hourly", "", "", false},
	} {
		if u, ok := tableUnit(c.header, c.notes); u != c.unit || ok != c.stated {
			t.Errorf("tableUnit(%q, %q) = %q %v, want %q %v", c.header, c.notes, u, ok, c.unit, c.stated)
		}
	}
	// A price that states its own unit needs no caption; one that does not is quarantined.
	html := `<h2>GPU Clusters</h2><table class="pricing_table"><thead><tr><th><p>Hardware</p></th><th><p>Hourly</p></th></tr></thead><tbody>` +
		`<tr><td>NVIDIA HGX H100</td><td><p data-batch="">$2.50/GPU-hr</p></td></tr><tr><td>NVIDIA HGX H200</td><td><p data-batch="">$3.50</p></td></tr></tbody></table>`
	res, err := parsePage(strings.NewReader(html), scrapertest.ObservedAt)
	if err != nil || len(res.Rows) != 1 || res.Rows[0].Unit != schemas.UnitGPUHour || len(res.Rejects) != 1 || !strings.Contains(res.Rejects[0].Reason, "HGX H200") {
		t.Errorf("err %v, result %+v", err, res)
	}
}

func TestKindAndUnit(t *testing.T) {
	if u, ok := tableUnit("Hardware All prices per node per hour", ""); u != schemas.UnitHour || !ok {
		t.Errorf("per node: %s", u)
	}
	html := `<table class="pricing_table"><thead><tr><th><p>Hardware</p></th><th><p>Reserved</p></th></tr></thead><tbody>` +
		`<tr><td>NVIDIA HGX H100</td><td><p data-batch="">$2.50</p></td></tr></tbody></table>`
	res, err := parsePage(strings.NewReader("<h2>GPU Clusters</h2>"+html), scrapertest.ObservedAt)
	if err == nil || len(res.Rejects) != 1 || !strings.Contains(res.Rejects[0].Reason, "no pricing kind or term") {
		t.Errorf("a reserved price without a term: err %v, result %+v", err, res)
	}
}

func TestPartialPage(t *testing.T) {
	res, err := pagetest.ParseFile(t, parsePage, "testdata/partial/input.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 6 || len(res.Rejects) != 3 {
		t.Fatalf("rows %d rejects %+v; want 6 and 3 (a bad price, a nameless row, a bad reserved price)", len(res.Rows), res.Rejects)
	}
	for _, want := range []string{"$6.9.9", "without hardware name", "$1.8o"} {
		found := false
		for _, r := range res.Rejects {
			found = found || strings.Contains(r.Reason, want)
		}
		if !found {
			t.Errorf("no reject mentions %s", want)
		}
	}
}

func TestLayoutErrors(t *testing.T) {
	for _, c := range []string{"layout_changed", "empty"} {
		if _, err := pagetest.ParseFile(t, parsePage, "testdata/"+c+"/input.html"); !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "layout changed") {
			t.Errorf("%s: err = %v, want ErrLayout", c, err)
		}
	}
}

func TestRegistered(t *testing.T) {
	info, f, ok := scrapers.Lookup(Name)
	if !ok || f == nil {
		t.Fatal("together is not registered")
	}
	if info.Provider != "together" || info.Method != schemas.SourceScrape {
		t.Errorf("info = %+v", info)
	}
	for _, p := range info.Pricing {
		if !schemas.ValidPricing(p) {
			t.Errorf("pricing %q", p)
		}
	}
	if _, err := f(scrapertest.Config(t, Name, "", map[string]any{"regions": []string{"us-east"}})); err == nil {
		t.Error("an option was accepted by a source that has none")
	}
	if _, err := f(scrapertest.Config(t, Name, "ftp://example.com/pricing", nil)); err == nil {
		t.Error("a non-http endpoint was accepted")
	}
	if _, err := f(scrapertest.Config(t, Name, "", nil)); err != nil {
		t.Errorf("default config: %v", err)
	}
}

func TestCollect(t *testing.T) {
	pagetest.Run(t, pagetest.Case{Name: Name, New: New, PagePath: pagePath, FullRows: 25, PartialRows: 6, PartialRejects: 3, ErrLayout: ErrLayout})
}

func FuzzParsePage(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/input.html")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := parsePage(bytes.NewReader(data), scrapertest.ObservedAt)
		if err == nil && len(res.Rows) == 0 {
			t.Error("no rows and no error")
		}
		for _, o := range res.Rows {
			if o.SKU == "together:" || o.GPUName == "" || !schemas.ValidPricing(o.Pricing) {
				t.Errorf("bad row %+v", o)
			}
		}
	})
}

// TestNotSoldIsNotOffered (issue 23): the cells Together's page shows "Contact
// sales" or "Contact us" in instead of a price are its own "not available" marker:
// counted as not offered, none left for the quarantine.
func TestNotSoldIsNotOffered(t *testing.T) {
	pagetest.NotOffered(t, parsePage, map[string]int{
		"testdata/full_page/input.html":         8,
		"testdata/recorded_page/input.html":     16,
		"testdata/reference_excerpt/input.html": 2,
	})
}

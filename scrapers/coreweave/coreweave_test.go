package coreweave

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
	// 10 instances on demand (B300 as Contact sales), 4 spot prices, 5 inference prices
	// (B300's as Contact sales).
	if len(res.Rows) != 10+3+6 {
		t.Errorf("rows = %d, want 19", len(res.Rows))
	}
	gb := rows["coreweave:gb200-nvl72|on_demand"]
	if gb.GPUName != "NVIDIA GB200 NVL72" || gb.GPUCount != 4 || gb.GPUMemoryGB != 186 || gb.PriceNative != 42 ||
		gb.Unit != schemas.UnitHour || gb.Region != "NORTH AMERICA" || gb.Attrs["gpu_count_text"] != "4^1" ||
		gb.Attrs["footnote"] != "1" || gb.Attrs["system_ram_gb"] != "960" || gb.Attrs["local_storage_tb"] != "30.72" {
		t.Errorf("GB200 NVL72 = %+v", gb)
	}
	if _, ok := rows["coreweave:gb200-nvl72|spot"]; ok {
		t.Error("a spot row for an N/A spot price")
	}
	if inf := rows["coreweave:gb200-nvl72-inference-1gpu|on_demand"]; inf.PriceNative != 10.5 || inf.GPUCount != 1 || inf.Attrs["offering"] != "inference_single_gpu" {
		t.Errorf("GB200 inference = %+v", inf)
	}
	b3 := rows["coreweave:b300|on_demand"]
	if b3.PriceNative != 0 || b3.Attrs["price_text"] != `not offered (the page shows "Contact sales")` || b3.GPUName != "NVIDIA HGX B300" || b3.Attrs["system_ram_gb"] != "4,096" {
		t.Errorf("B300 on demand = %+v", b3)
	}
	if s := rows["coreweave:b300|spot"]; s.PriceNative != 35.84 || s.Pricing != schemas.Spot {
		t.Errorf("B300 spot = %+v", s)
	}
	h := rows["coreweave:hgx-h100|on_demand"]
	if h.PriceNative != 49.24 || h.GPUCount != 8 || h.GPUMemoryGB != 80 || rows["coreweave:hgx-h100|spot"].PriceNative != 19.71 {
		t.Errorf("HGX H100 = %+v", h)
	}
	if g := rows["coreweave:gh200|on_demand"]; g.GPUCount != 1 || g.GPUMemoryGB != 96 || g.PriceNative != 6.5 {
		t.Errorf("GH200 = %+v", g)
	}
	for _, o := range res.Rows {
		if o.Provider != "coreweave" || o.Currency != "USD" || o.SourceKind != schemas.SourceScrape || !o.ObservedAt.Equal(scrapertest.ObservedAt) {
			t.Errorf("row %s: %+v", o.SKU, o)
		}
	}
	src := page
	for _, want := range src.Expect().SKUs {
		if _, ok := rows[want+"|on_demand"]; !ok {
			t.Errorf("expected SKU %s not on the page", want)
		}
	}
	if len(res.Rows) < src.Expect().MinRows {
		t.Errorf("the full page has fewer rows than the coverage guard asks")
	}
}

func TestContactSales(t *testing.T) {
	res, err := pagetest.ParseFile(t, parsePage, "testdata/contact_sales/input.html")
	if err != nil {
		t.Fatal(err)
	}
	rows := pagetest.Index(t, res.Rows)
	if o := rows["coreweave:hgx-h200|on_demand"]; o.PriceNative != 0 || o.Attrs["price_text"] != `not offered (the page shows "Contact sales")` {
		t.Errorf("H200 = %+v", o)
	}
	if o := rows["coreweave:gh200|on_demand"]; o.PriceNative != 0 || o.Attrs["price_text"] != `not offered (the page shows "Contact us")` {
		t.Errorf("GH200 = %+v", o)
	}
}

// TestContactSalesIsNotOffered (issue 23): the rows CoreWeave's page lists with a
// "Contact sales" or "Contact us" link instead of a price are its own "not
// available" marker: counted as not offered, none left for the quarantine, so the
// full page's run is routine.
func TestContactSalesIsNotOffered(t *testing.T) {
	for file, want := range map[string][]string{
		"testdata/full_page/input.html": {"coreweave:b300-inference-1gpu|on_demand", "coreweave:b300|on_demand"},
		"testdata/contact_sales/input.html": {"coreweave:b300-inference-1gpu|on_demand", "coreweave:b300|on_demand",
			"coreweave:gh200-inference-1gpu|on_demand", "coreweave:gh200|on_demand",
			"coreweave:hgx-h200-inference-1gpu|on_demand", "coreweave:hgx-h200|on_demand"},
	} {
		res, err := pagetest.ParseFile(t, parsePage, file)
		if err != nil {
			t.Fatal(err)
		}
		notOffered, quarantined := pagetest.Unpriced(res.Rows)
		if strings.Join(notOffered, " ") != strings.Join(want, " ") || len(quarantined) != 0 {
			t.Errorf("%s: not offered %v, quarantined %v; want %v and none", file, notOffered, quarantined, want)
		}
	}
}

func TestPartialPage(t *testing.T) {
	res, err := pagetest.ParseFile(t, parsePage, "testdata/partial/input.html")
	if err != nil {
		t.Fatal(err)
	}
	rows := pagetest.Index(t, res.Rows)
	if len(res.Rejects) != 4 {
		t.Fatalf("rejects = %+v, want 4 (H200 price, GH200 count, a nameless row, L40 price)", res.Rejects)
	}
	for _, want := range []string{"$5O.44", `"one"`, "without a GPU model name", "$1,0.00"} {
		found := false
		for _, r := range res.Rejects {
			found = found || strings.Contains(r.Reason, want)
		}
		if !found {
			t.Errorf("no reject mentions %s", want)
		}
	}
	if _, ok := rows["coreweave:hgx-h100|on_demand"]; !ok || len(res.Rows) != 14 {
		t.Errorf("rows = %d, want the 14 readable ones", len(res.Rows))
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
		t.Fatal("coreweave is not registered")
	}
	if info.Provider != "coreweave" || info.Method != schemas.SourceScrape {
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
	pagetest.Run(t, pagetest.Case{Name: Name, New: New, PagePath: pagePath, FullRows: 19, PartialRows: 14, PartialRejects: 4, ErrLayout: ErrLayout})
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
			if o.SKU == "coreweave:" || o.GPUName == "" || !schemas.ValidPricing(o.Pricing) {
				t.Errorf("bad row %+v", o)
			}
		}
	})
}

// TestDesktopCellsOnly covers rows without the labelled mobile column: specs and prices
// come from the desktop cells under the table headers.
func TestDesktopCellsOnly(t *testing.T) {
	page := `<h5><strong class="eyebrow">REGION: EUROPE</strong></h5><div class="table-v2 gpu-pricing"><div class="table-v2-header"><div class="table-grid">` +
		`<div class="table-v2-cell"><div class="table-header-text">GPU Model</div></div><div class="table-v2-cell"><div class="table-header-text">GPU Count</div></div>` +
		`<div class="table-v2-cell"><div class="table-header-text">VRAM (GB)</div></div><div class="table-v2-cell"><div class="table-header-text">On-Demand Price (Per Hour)</div></div>` +
		`<div class="table-v2-cell"><div class="table-header-text">Spot Price (Per Hour)</div></div></div></div>` +
		`<div role="listitem" class="table-row-v2"><div class="table-grid"><div class="table-v2-cell table-v2-cell--name"><h3 data-product="hgx-h100" class="table-model-name">NVIDIA HGX H100</h3></div>` +
		`<div class="table-v2-cell"><div>8</div></div><div class="table-v2-cell"><div>80</div></div><div class="table-v2-cell"><div>$1,049.24</div></div>` +
		`<div class="table-v2-cell"><div>N/A</div></div></div></div></div>`
	res, err := parsePage(strings.NewReader(page), scrapertest.ObservedAt)
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("rows %+v, err %v", res.Rows, err)
	}
	o := res.Rows[0]
	if o.SKU != "coreweave:hgx-h100" || o.GPUCount != 8 || o.GPUMemoryGB != 80 || o.PriceNative != 1049.24 || o.Region != "EUROPE" || o.Pricing != schemas.OnDemand {
		t.Errorf("row = %+v", o)
	}
}

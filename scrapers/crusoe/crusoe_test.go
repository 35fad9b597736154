package crusoe

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

const pagePath = "/cloud/pricing"

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
	// 9 cards × (on demand, spot) + 3 reserved cards × 3 terms.
	if len(res.Rows) != 27 {
		t.Errorf("rows = %d, want 27", len(res.Rows))
	}
	h := rows["crusoe:h100-hgx-80gb|on_demand"]
	if h.GPUName != "NVIDIA H100" || h.GPUCount != 1 || h.GPUMemoryGB != 80 || h.PriceNative != 3.9 || h.Unit != schemas.UnitGPUHour ||
		h.Attrs["form_factor"] != "HGX" || h.Region != "" || h.Currency != "USD" {
		t.Errorf("H100 = %+v", h)
	}
	if s := rows["crusoe:h100-hgx-80gb|spot"]; s.PriceNative != 0 || s.Attrs["price_text"] != `not offered (the page shows "Contact sales")` {
		t.Errorf("H100 spot = %+v", s)
	}
	if a, p := rows["crusoe:a100-sxm-80gb|on_demand"], rows["crusoe:a100-pcie-80gb|on_demand"]; a.PriceNative != 2.3 || p.PriceNative != 2 {
		t.Errorf("A100 SXM %+v / PCIe %+v not kept apart", a, p)
	}
	if s := rows["crusoe:l40s-pcie-48gb|spot"]; s.PriceNative != 0.8 || s.Pricing != schemas.Spot {
		t.Errorf("L40S spot = %+v", s)
	}
	if m := rows["crusoe:mi300x-oam-192gb|on_demand"]; m.GPUName != "AMD MI300X" || m.Interconnect != schemas.InterconnectInfiniband || m.PriceNative != 3.45 {
		t.Errorf("MI300X = %+v", m)
	}
	if g := rows["crusoe:gb200-nvl72-186gb|on_demand"]; g.Attrs["price_text"] != `not offered (the page shows "Contact sales")` || g.GPUMemoryGB != 186 {
		t.Errorf("GB200 = %+v", g)
	}
	for kind, want := range map[string]float64{"commitment_6m": 3.4, "reserved_1y": 2.9, "reserved_3y": 0} {
		if r, ok := rows["crusoe:h100-hgx-80gb|"+kind]; !ok || r.PriceNative != want {
			t.Errorf("H100 %s = %+v, want %v", kind, r, want)
		}
	}
	if r := rows["crusoe:a100-sxm-80gb|reserved_3y"]; r.PriceNative != 1.45 || r.Attrs["column"] != "3-year reserved" {
		t.Errorf("A100 3y = %+v", r)
	}
	for _, o := range res.Rows {
		if o.Provider != "crusoe" || o.SourceKind != schemas.SourceScrape || !o.ObservedAt.Equal(scrapertest.ObservedAt) || !schemas.ValidPricing(o.Pricing) {
			t.Errorf("row %s: %+v", o.SKU, o)
		}
	}
	src := page
	for _, want := range src.Expect().SKUs {
		if _, ok := rows[want+"|on_demand"]; !ok {
			t.Errorf("expected SKU %s not on the page", want)
		}
	}
	ref, err := pagetest.ParseFile(t, parsePage, "testdata/reference_excerpt/input.html")
	if err != nil || len(ref.Rows) < src.Expect().MinRows {
		t.Errorf("the recorded excerpt: %d rows, %v; the coverage guard asks %d", len(ref.Rows), err, src.Expect().MinRows)
	}
}

func TestPartialPage(t *testing.T) {
	res, err := pagetest.ParseFile(t, parsePage, "testdata/partial/input.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 8 || len(res.Rejects) != 5 {
		t.Fatalf("rows %d rejects %+v; want 8 and 5 (a bad price, a nameless card, three duplicates)", len(res.Rows), res.Rejects)
	}
	for _, want := range []string{"$4.2.9", "without a GPU name", "crusoe:h100-hgx-80gb on_demand listed twice"} {
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
		t.Fatal("crusoe is not registered")
	}
	if info.Provider != "crusoe" || info.Method != schemas.SourceScrape {
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
	pagetest.Run(t, pagetest.Case{Name: Name, New: New, PagePath: pagePath, FullRows: 27, PartialRows: 8, PartialRejects: 5, ErrLayout: ErrLayout})
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
			if o.SKU == "crusoe:" || o.GPUName == "" || !schemas.ValidPricing(o.Pricing) {
				t.Errorf("bad row %+v", o)
			}
		}
	})
}

// TestNotSoldIsNotOffered (issue 23): the cells Crusoe's page shows "Contact sales"
// in instead of a price are its own "not available" marker: counted as not offered,
// none left for the quarantine.
func TestNotSoldIsNotOffered(t *testing.T) {
	pagetest.NotOffered(t, parsePage, map[string]int{
		"testdata/full_page/input.html":         10,
		"testdata/reference_excerpt/input.html": 4,
	})
}

package gmi

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
	if len(res.Rows) != 8 {
		t.Errorf("rows = %d, want 8 (5 on-demand cards, 3 reserved)", len(res.Rows))
	}
	h := rows["gmi:h100|on_demand"]
	if h.GPUName != "NVIDIA H100 GPU" || h.PriceNative != 2 || h.Unit != schemas.UnitGPUHour || h.GPUCount != 1 ||
		h.Attrs["price_qualifier"] != "from" || h.Attrs["availability"] != "AVAILABLE NOW" || h.Attrs["section"] != "GPU Instances" {
		t.Errorf("H100 = %+v", h)
	}
	if g := rows["gmi:gb200|on_demand"]; g.GPUName != "NVIDIA GB200" || g.PriceNative != 8 {
		t.Errorf("GB200 = %+v", g)
	}
	if g := rows["gmi:gb300|on_demand"]; g.PriceNative != 0 || g.Attrs["price_text"] != `not offered (the page shows "Pre order")` {
		t.Errorf("GB300 = %+v", g)
	}
	if b := rows["gmi:b200|on_demand"]; b.PriceNative != 4 || b.Attrs["availability"] != "Limited Availability" {
		t.Errorf("B200 = %+v", b)
	}
	if r := rows["gmi:h100|reserved_1y"]; r.PriceNative != 1.85 || r.Attrs["price_qualifier"] != "from" {
		t.Errorf("H100 reserved = %+v", r)
	}
	if r := rows["gmi:b200|reserved_1y"]; r.PriceNative != 0 || r.Attrs["price_text"] != `not offered (the page shows "Contact sales")` {
		t.Errorf("B200 reserved = %+v", r)
	}
	for _, o := range res.Rows {
		if o.Provider != "gmi" || o.SourceKind != schemas.SourceScrape || o.Currency != "USD" || !o.ObservedAt.Equal(scrapertest.ObservedAt) || !schemas.ValidPricing(o.Pricing) {
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
	if err != nil || len(ref.Rows) != 5 || len(ref.Rows) < src.Expect().MinRows {
		t.Errorf("the recorded excerpt: %d rows, %v; want 5, the coverage guard asks %d", len(ref.Rows), err, src.Expect().MinRows)
	}
}

// TestReservedWithoutTerm: the priced cards under a "Reserved capacity" heading that
// states no term are prices a person should look at (their kind is unknown): both
// quarantined. The "Contact sales" card there has no price to misfile: no row, not a
// reject (issue 23).
func TestReservedWithoutTerm(t *testing.T) {
	res, err := pagetest.ParseFile(t, parsePage, "testdata/reserved_no_term/input.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 5 || len(res.Rejects) != 2 || !strings.Contains(res.Rejects[0].Reason, "states no commitment term") {
		t.Errorf("rows %d rejects %+v; want 5 and 2", len(res.Rows), res.Rejects)
	}
	for _, r := range res.Rejects {
		if strings.Contains(r.Raw, "Contact sales") {
			t.Errorf("the Contact sales card is quarantined: %s", r.Reason)
		}
	}
}

// TestNotSoldIsNotOffered (issue 23): GMI's "Pre order" and "Contact sales" cards are
// its own "not available" markers: counted as not offered, none left for the
// quarantine, so a run on the page is routine.
func TestNotSoldIsNotOffered(t *testing.T) {
	for file, want := range map[string][]string{
		"testdata/full_page/input.html":         {"gmi:b200|reserved_1y", "gmi:gb300|on_demand"},
		"testdata/reference_excerpt/input.html": {"gmi:gb300|on_demand"},
	} {
		res, err := pagetest.ParseFile(t, parsePage, file)
		if err != nil {
			t.Fatal(err)
		}
		notOffered, quarantined := pagetest.Unpriced(res.Rows)
		if strings.Join(notOffered, " ") != strings.Join(want, " ") || len(quarantined) != 0 || len(res.Rejects) != 0 {
			t.Errorf("%s: not offered %v, quarantined %v %v; want %v and none", file, notOffered, quarantined, res.Rejects, want)
		}
	}
}

func TestPartialPage(t *testing.T) {
	res, err := pagetest.ParseFile(t, parsePage, "testdata/partial/input.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 5 || len(res.Rejects) != 3 {
		t.Fatalf("rows %d rejects %+v; want 5 and 3 (two bad prices, a nameless card)", len(res.Rows), res.Rejects)
	}
	for _, want := range []string{"$2.6.0", "without a GPU name", "$1.0O"} {
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
		t.Fatal("gmi is not registered")
	}
	if info.Provider != "gmi" || info.Method != schemas.SourceScrape {
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
	pagetest.Run(t, pagetest.Case{Name: Name, New: New, PagePath: pagePath, FullRows: 8, PartialRows: 5, PartialRejects: 3, ErrLayout: ErrLayout})
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
			if o.SKU == "gmi:" || o.GPUName == "" || !schemas.ValidPricing(o.Pricing) {
				t.Errorf("bad row %+v", o)
			}
		}
	})
}

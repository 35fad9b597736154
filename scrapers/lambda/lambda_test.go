package lambda

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

const pagePath = "/service/gpu-cloud"

func TestParsePage(t *testing.T) { pagetest.Golden(t, parsePage) }

func parseFile(t *testing.T, path string) ([]schemas.Observation, error) {
	t.Helper()
	res, err := pagetest.ParseFile(t, parsePage, path)
	return res.Rows, err
}

func TestParsePageRules(t *testing.T) {
	rows, err := parseFile(t, "testdata/full_page/input.html")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 22 {
		t.Fatalf("rows = %d, want 22 (5 + 4 + 4 + 9)", len(rows))
	}
	byTab := map[float64]int{}
	skus := map[string]schemas.Observation{}
	for _, o := range rows {
		byTab[o.GPUCount]++
		if _, dup := skus[o.SKU]; dup {
			t.Errorf("duplicate SKU %s", o.SKU)
		}
		skus[o.SKU] = o
		if o.Unit != schemas.UnitGPUHour || o.Pricing != schemas.OnDemand || o.Region != "" || o.PriceNative <= 0 {
			t.Errorf("row %+v", o)
		}
	}
	if byTab[8] != 5 || byTab[4] != 4 || byTab[2] != 4 || byTab[1] != 9 {
		t.Errorf("rows per tab = %v", byTab)
	}
	h := skus["gpu_8x_h100_sxm_80gb"]
	if h.GPUName != "NVIDIA H100 SXM" || h.GPUCount != 8 || h.GPUMemoryGB != 80 || h.PriceNative != 3.99 ||
		h.Attrs["vcpus"] != "208" || h.Attrs["ram"] != "1800 GiB" || h.Attrs["storage"] != "22 TiB SSD" {
		t.Errorf("8x H100 = %+v", h)
	}
	if a := skus["gpu_8x_a100_sxm_40gb"]; a.PriceNative != 1.99 || skus["gpu_8x_a100_sxm_80gb"].PriceNative != 2.79 {
		t.Error("the two 8x A100 SXM memory sizes are not kept apart")
	}
	if r := skus["gpu_1x_rtx_6000_24gb"]; r.GPUName != "NVIDIA Quadro RTX 6000" || r.PriceNative != 0.69 {
		t.Errorf("1x RTX 6000 = %+v", r)
	}
	for _, want := range page.Expect().SKUs {
		if _, ok := skus[want]; !ok {
			t.Errorf("expected SKU %s not on the page", want)
		}
	}

	rows, err = parseFile(t, "testdata/contact_sales/input.html")
	if err != nil {
		t.Fatal(err)
	}
	var contact int
	for _, o := range rows {
		if o.Attrs["price_text"] == `not offered (the page shows "Contact sales")` && o.PriceNative == 0 && strings.HasPrefix(o.SKU, "gpu_") {
			contact++
		}
	}
	if len(rows) != 22 || contact != 2 {
		t.Errorf("rows %d, contact-sales rows %d; want 22 and 2", len(rows), contact)
	}

	for _, c := range []string{"layout_changed", "empty"} {
		if _, err := parseFile(t, "testdata/"+c+"/input.html"); !errors.Is(err, ErrLayout) {
			t.Errorf("%s: err = %v, want ErrLayout", c, err)
		}
	}
	// A tab that names no GPU count ("Clusters") quarantines its own rows; the page's
	// other tabs are kept.
	bad, err := pagetest.ParseFile(t, parsePage, "testdata/bad_tab/input.html")
	if err != nil || len(bad.Rows) == 0 || len(bad.Rejects) == 0 {
		t.Fatalf("bad_tab: %d rows, %d rejects, %v; want the other tabs' rows and the Clusters rows rejected", len(bad.Rows), len(bad.Rejects), err)
	}
	for _, r := range bad.Rejects {
		if !strings.Contains(r.Reason, `tab "Clusters"`) || !strings.Contains(r.Reason, "names no GPU count") {
			t.Errorf("reject %+v", r)
		}
	}
}

// The shared number parser reads "$1,29" as 1.29 (a decimal comma), not 129; a
// renamed tab is matched by the GPU count it names; a row whose price cannot be
// read is quarantined and the other rows kept.
func TestFailSoft(t *testing.T) {
	row := func(plan, price string) string {
		return `<tr data-plan="` + plan + `"><td data-label="VRAM/GPU">80 GB</td><td data-label="PRICE/GPU/HR*">` + price + `</td></tr>`
	}
	page := `<div role="tablist"><button role="tab" aria-controls="p8">8 GPUs</button><button role="tab" aria-controls="p1">1× GPU</button></div>` +
		`<div role="tabpanel" id="p8"><table>` + row("NVIDIA H100 SXM", "$2,99") + row("NVIDIA A100 SXM", "$1.2.3") + `</table></div>` +
		`<div role="tabpanel" id="p1"><table>` + row("NVIDIA H100 PCIe", "$1,29 / GPU / hr") + `</table></div>`
	res, err := parsePage(strings.NewReader(page), scrapertest.ObservedAt)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]schemas.Observation{}
	for _, o := range res.Rows {
		got[o.SKU] = o
	}
	if o := got["gpu_8x_h100_sxm_80gb"]; o.PriceNative != 2.99 || o.GPUCount != 8 {
		t.Errorf("8 GPUs tab: %+v", o)
	}
	if o := got["gpu_1x_h100_pcie_80gb"]; o.PriceNative != 1.29 || o.GPUCount != 1 {
		t.Errorf("$1,29: %+v", o)
	}
	if len(res.Rows) != 2 || len(res.Rejects) != 1 || !strings.Contains(res.Rejects[0].Reason, "NVIDIA A100 SXM") {
		t.Errorf("rows %d, rejects %+v; want 2 rows and the unreadable price quarantined", len(res.Rows), res.Rejects)
	}
}

func TestModelSlugAndUnit(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA H100 SXM": "h100_sxm", "NVIDIA B200 SXM6": "b200_sxm6", "NVIDIA Tesla V100": "v100",
		"NVIDIA Quadro RTX 6000": "rtx_6000", "NVIDIA GH200": "gh200", "NVIDIA A100 PCIe": "a100_pcie",
		"AMD Instinct MI300X (192GB)": "instinct_mi300x_192gb",
	} {
		if got := modelSlug(in); got != want {
			t.Errorf("modelSlug(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"PRICE/GPU/HR*": schemas.UnitGPUHour, "PRICE/HR*": schemas.UnitHour, "PRICE/MO": "PRICE/MO"} {
		if got := priceUnit(in); got != want {
			t.Errorf("priceUnit(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRegistered(t *testing.T) {
	info, f, ok := scrapers.Lookup(Name)
	if !ok || f == nil {
		t.Fatal("lambda is not registered")
	}
	if info.Provider != "lambda" || info.Method != schemas.SourceScrape {
		t.Errorf("info = %+v", info)
	}
	if _, err := f(scrapertest.Config(t, Name, "", map[string]any{"regions": []string{"us-east-1"}})); err == nil {
		t.Error("an option was accepted by a source that has none")
	}
}

func TestCollect(t *testing.T) {
	pagetest.Run(t, pagetest.Case{Name: Name, New: New, PagePath: pagePath, FullRows: 22, ErrLayout: ErrLayout})
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
	})
}

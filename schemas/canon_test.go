package schemas_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

// canonCase is one row of testdata/canon/cases.json: a hint as a source would build
// it from a real provider response (source names where the name comes from) and the
// catalog id it must resolve to.
type canonCase struct {
	Provider string  `json:"provider"`
	Name     string  `json:"name"`
	SKU      string  `json:"sku"`
	MemoryGB float64 `json:"memory_gb,omitempty"`
	Want     string  `json:"want"`
	Source   string  `json:"source,omitempty"`
}

func loadCases(t testing.TB) []canonCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "canon", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []canonCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestCanonicalizeCases(t *testing.T) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	cases := loadCases(t)
	if len(cases) < 80 {
		t.Fatalf("only %d cases", len(cases))
	}
	covered := map[string]bool{}
	unknowns := 0
	for _, tc := range cases {
		if tc.Want != schemas.UnknownGPU {
			if _, ok := c.Lookup(tc.Want); !ok {
				t.Errorf("case %+v expects %q, which is not in the catalog", tc, tc.Want)
			}
		} else {
			unknowns++
		}
		h := schemas.Hint{Provider: tc.Provider, Name: tc.Name, SKU: tc.SKU, MemoryGB: tc.MemoryGB}
		got, why := c.Explain(h)
		if got != tc.Want {
			t.Errorf("Canonicalize(%+v) = %q (%s), want %q [%s]", h, got, why, tc.Want, tc.Source)
		}
		if c.Canonicalize(h) != got {
			t.Errorf("Canonicalize and Explain disagree on %+v", h)
		}
		covered[got] = true
	}
	if unknowns < 20 {
		t.Errorf("only %d negative cases", unknowns)
	}
	// Every catalog GPU must be reachable from some real name.
	for _, id := range c.IDs() {
		if !covered[id] {
			t.Errorf("no case resolves to %s", id)
		}
	}
}

// The form factor is never collapsed: the same name with a different form factor or
// memory never lands on the same id.
func TestCanonicalizeKeepsVariantsApart(t *testing.T) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, name := range []string{
		"H100 SXM", "H100 PCIe", "H100 NVL", "H200 SXM", "H200 NVL",
		"A100 SXM 80GB", "A100 SXM 40GB", "A100 PCIe 80GB", "A100 PCIe 40GB",
		"V100 SXM2 16GB", "V100 SXM2 32GB", "V100 PCIe 16GB", "P100 SXM2", "P100 PCIe",
		"GH200 96GB", "GH200 144GB", "L40", "L40S", "A10", "A10G",
	} {
		id := c.Canonicalize(schemas.Hint{Name: name})
		if id == schemas.UnknownGPU {
			t.Errorf("%q: unknown", name)
			continue
		}
		if other, dup := seen[id]; dup {
			t.Errorf("%q and %q both resolve to %s", name, other, id)
		}
		seen[id] = name
	}
}

// Provider assumptions apply only to their provider.
func TestCanonicalizeAssumptionsAreScoped(t *testing.T) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"NVIDIA H200", "Nvidia Tesla A100 GPU", "NVIDIA H100 GPU", "NVIDIA GH200"} {
		for _, p := range []string{"", "coreweave", "lambda-typo", "azure"} {
			if got := c.Canonicalize(schemas.Hint{Provider: p, Name: name}); got != schemas.UnknownGPU {
				t.Errorf("provider %q, name %q: %s, want unknown", p, name, got)
			}
		}
	}
}

func ExampleCatalog_Canonicalize() {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		panic(err)
	}
	for _, h := range []schemas.Hint{
		{Provider: "runpod", Name: "H100 SXM", SKU: "NVIDIA H100 80GB HBM3", MemoryGB: 80},
		{Provider: "vast", Name: "A100 SXM4", MemoryGB: 79.2},
		{Provider: "aws", Name: "NVIDIA H200", SKU: "p5en.48xlarge"},
		{Provider: "azure", Name: "NC40adsH100v5", SKU: "Standard_NC40ads_H100_v5"},
		{Provider: "gcp", Name: "Nvidia Tesla A100 GPU running in Americas"},
		{Provider: "lambda", Name: "NVIDIA Quadro RTX 6000"},
		{Name: "H100"},
		{Name: "V100 32GB"},
		{Provider: "ovhcloud", Name: "H100", SKU: "h100-380", MemoryGB: 80, MemoryType: "HBM3"},
	} {
		fmt.Println(c.Canonicalize(h))
	}
	// Output:
	// H100-SXM-80GB
	// A100-SXM-80GB
	// H200-SXM-141GB
	// H100-NVL-94GB
	// A100-SXM-40GB
	// QUADRORTX6000-PCIE-24GB
	// unknown
	// unknown
	// H100-SXM-80GB
}

func ExampleCatalog_Lookup() {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		panic(err)
	}
	g, _ := c.Lookup("H100-SXM-80GB")
	fmt.Println(g.Model, g.FormFactor, g.MemoryGB, g.MemoryType, g.PeakDenseTFLOPS())
	// Output: H100 SXM 80 HBM3 989.4
}

func BenchmarkCanonicalize(b *testing.B) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		b.Fatal(err)
	}
	cases := loadCases(b)
	hints := make([]schemas.Hint, len(cases))
	for i, tc := range cases {
		hints[i] = schemas.Hint{Provider: tc.Provider, Name: tc.Name, SKU: tc.SKU, MemoryGB: tc.MemoryGB}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Canonicalize(hints[i%len(hints)])
	}
}

// A catalog that lacks a GPU a SKU rule names answers unknown for that SKU instead
// of another GPU.
func TestCanonicalizeWithSmallerCatalog(t *testing.T) {
	raw, err := os.ReadFile("gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, g := range d["gpus"].([]any) {
		if g.(map[string]any)["id"] != "H100-SXM-80GB" {
			kept = append(kept, g)
		}
	}
	d["gpus"] = kept
	b, _ := json.Marshal(d)
	c, err := schemas.ParseCatalog(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckRules(); err == nil {
		t.Error("CheckRules accepted rules naming a missing GPU")
	}
	if got := c.Canonicalize(schemas.Hint{Provider: "aws", SKU: "p5.48xlarge"}); got != schemas.UnknownGPU {
		t.Errorf("p5.48xlarge on a catalog without H100 SXM: %s", got)
	}
	if got := c.Canonicalize(schemas.Hint{Name: "H100 SXM"}); got != schemas.UnknownGPU {
		t.Errorf("H100 SXM on a catalog without it: %s", got)
	}
	if got := c.Canonicalize(schemas.Hint{Name: "H100 PCIe"}); got != "H100-PCIE-80GB" {
		t.Errorf("H100 PCIe: %s", got)
	}
}

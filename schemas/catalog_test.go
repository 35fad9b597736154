package schemas_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

func TestLoadCatalogKeyFigures(t *testing.T) {
	c, err := schemas.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id              string
		bf16, fp8, fp16 float64
		mem             float64
		form            string
	}{
		{"H100-SXM-80GB", 989.4, 1979, 0, 80, schemas.FormSXM},
		{"H100-PCIE-80GB", 756, 1513, 0, 80, schemas.FormPCIe},
		{"H100-NVL-94GB", 835.5, 1670.5, 0, 94, schemas.FormNVL},
		{"B200-SXM-180GB", 2250, 4500, 0, 180, schemas.FormSXM},
		{"GB200-SUPERCHIP-186GB", 2500, 5000, 0, 186, schemas.FormSuperchip},
		{"A100-SXM-80GB", 312, 0, 0, 80, schemas.FormSXM},
		{"A100-PCIE-40GB", 312, 0, 0, 40, schemas.FormPCIe},
		{"MI300X-OAM-192GB", 1307.4, 2614.9, 0, 192, schemas.FormOAM},
		{"L4-PCIE-24GB", 121, 242.5, 0, 24, schemas.FormPCIe},
		{"V100-SXM-16GB", 0, 0, 125, 16, schemas.FormSXM},
		{"T4-PCIE-16GB", 0, 0, 65, 16, schemas.FormPCIe},
	} {
		g, ok := c.Lookup(tc.id)
		if !ok {
			t.Errorf("%s: not in catalog", tc.id)
			continue
		}
		if g.DenseBF16TFLOPS != tc.bf16 || g.DenseFP8TFLOPS != tc.fp8 || g.DenseFP16TFLOPS != tc.fp16 ||
			g.MemoryGB != tc.mem || g.FormFactor != tc.form {
			t.Errorf("%s: got bf16 %g fp8 %g fp16 %g mem %g form %s, want %g %g %g %g %s", tc.id,
				g.DenseBF16TFLOPS, g.DenseFP8TFLOPS, g.DenseFP16TFLOPS, g.MemoryGB, g.FormFactor,
				tc.bf16, tc.fp8, tc.fp16, tc.mem, tc.form)
		}
	}
}

func TestCatalogHasRequiredGPUs(t *testing.T) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	required := []string{
		"B200-SXM-180GB", "GB200-SUPERCHIP-186GB", "H200-SXM-141GB", "H200-NVL-141GB",
		"H100-SXM-80GB", "H100-PCIE-80GB", "H100-NVL-94GB", "GH200-SUPERCHIP-96GB", "GH200-SUPERCHIP-144GB",
		"A100-SXM-80GB", "A100-SXM-40GB", "A100-PCIE-80GB", "A100-PCIE-40GB",
		"L40S-PCIE-48GB", "L40-PCIE-48GB", "L4-PCIE-24GB", "A10-PCIE-24GB", "A10G-PCIE-24GB", "A40-PCIE-48GB",
		"RTXA6000-PCIE-48GB", "RTX6000ADA-PCIE-48GB", "RTX4090-PCIE-24GB", "RTX3090-PCIE-24GB",
		"V100-SXM-16GB", "V100-SXM-32GB", "V100-PCIE-16GB", "T4-PCIE-16GB", "P100-PCIE-16GB",
		"MI300X-OAM-192GB", "MI325X-OAM-256GB", "MI250X-OAM-128GB",
	}
	for _, id := range required {
		if _, ok := c.Lookup(id); !ok {
			t.Errorf("catalog lacks %s", id)
		}
	}
	if _, ok := c.Lookup(schemas.UnknownGPU); ok {
		t.Error("the unknown id must not be a catalog entry")
	}
	if got := len(c.All()); got != len(c.IDs()) || got < len(required) {
		t.Errorf("All() has %d entries, IDs() %d", got, len(c.IDs()))
	}
}

// Every figure must be dense, every entry sourced, and the figures GPU_SPECS.md left unverified
// sourced or dropped.
func TestCatalogEntriesAreSourcedAndDense(t *testing.T) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range c.All() {
		if len(g.Sources) == 0 {
			t.Errorf("%s: no sources", g.ID)
		}
		for _, s := range g.Sources {
			if cite, ok := c.Source(s); !ok || cite == "" {
				t.Errorf("%s: source %s has no citation", g.ID, s)
			}
		}
		if g.SparseBF16TFLOPS > 0 && g.DenseBF16TFLOPS > g.SparseBF16TFLOPS {
			t.Errorf("%s: dense BF16 above sparse", g.ID)
		}
		if g.SparseFP8TFLOPS > 0 && g.DenseFP8TFLOPS > g.SparseFP8TFLOPS {
			t.Errorf("%s: dense FP8 above sparse", g.ID)
		}
		if g.PeakDenseTFLOPS() <= 0 && g.NoDenseFigure == "" {
			t.Errorf("%s: no peak dense figure and no reason why", g.ID)
		}
	}
	// The figures GPU_SPECS.md marks as unverified or derived were sourced (RTX 6000 Ada, RTX 3090:
	// the whitepaper rows quoted in X25) or dropped (A10G: no source says whether 70 is dense).
	for _, id := range []string{"RTX6000ADA-PCIE-48GB", "RTX3090-PCIE-24GB"} {
		if g, _ := c.Lookup(id); !slices.Contains(g.Sources, "X25") || g.PeakDenseTFLOPS() <= 0 {
			t.Errorf("%s: the dense figure should be sourced in X25, got sources %v", id, g.Sources)
		}
	}
	if g, _ := c.Lookup("A10G-PCIE-24GB"); g.PeakDenseTFLOPS() != 0 || g.NoDenseFigure == "" {
		t.Errorf("A10G-PCIE-24GB: no source says whether the AWS sheet's 70 is dense; want no dense figure, got %g",
			g.PeakDenseTFLOPS())
	}
}

// ARCHITECTURE.md: H100 SXM at $2.49/GPU-h, 7B params, MFU 0.50, 989 dense BF16 TFLOPS
// → ≈ $58.8 per 1B training tokens.
func TestArchitectureTokenCostExample(t *testing.T) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	g, ok := c.Lookup("H100-SXM-80GB")
	if !ok {
		t.Fatal("no H100-SXM-80GB")
	}
	const price, params, mfu = 2.49, 7e9, 0.5
	perB := price * 1e9 * 6 * params / (g.PeakDenseTFLOPS() * 1e12 * mfu * 3600)
	if math.Abs(perB-58.8) > 0.1 {
		t.Errorf("$/1B tokens = %.3f, want ≈ 58.8", perB)
	}
}

func TestDefaultCatalogIsParsedOnce(t *testing.T) {
	a, err1 := schemas.DefaultCatalog()
	b, err2 := schemas.DefaultCatalog()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if a != b {
		t.Error("DefaultCatalog returned two different catalogs")
	}
}

func TestLookupReturnsACopy(t *testing.T) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	g, _ := c.Lookup("H100-SXM-80GB")
	g.Sources[0] = "mutated"
	all := c.All()
	all[0].Notes = nil
	g2, _ := c.Lookup("H100-SXM-80GB")
	if g2.Sources[0] == "mutated" {
		t.Error("Lookup exposes the catalog's slices")
	}
	if len(c.All()[0].Notes) == 0 {
		t.Error("All exposes the catalog's entries")
	}
}

func TestRulesNameCatalogIDs(t *testing.T) {
	c, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckRules(); err != nil {
		t.Error(err)
	}
}

// TestParseCatalogValidation breaks the embedded catalog one way at a time and
// expects ParseCatalog to refuse each.
func TestParseCatalogValidation(t *testing.T) {
	raw, err := os.ReadFile("gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schemas.ParseCatalog(raw); err != nil {
		t.Fatalf("the real file must parse: %v", err)
	}
	type doc = map[string]any
	gpu := func(d doc, i int) doc { return d["gpus"].([]any)[i].(doc) }
	cases := []struct {
		name   string
		mutate func(d doc)
		want   string
	}{
		{"duplicate id", func(d doc) { gpu(d, 1)["id"] = gpu(d, 0)["id"] }, "duplicate id"},
		{"zero memory", func(d doc) { gpu(d, 0)["memory_gb"] = 0.0 }, "memory_gb must be positive"},
		{"negative memory", func(d doc) { gpu(d, 0)["memory_gb"] = -80.0 }, "memory_gb must be positive"},
		{"id and memory disagree", func(d doc) { gpu(d, 0)["memory_gb"] = 192.0 }, "id says"},
		{"dense above sparse", func(d doc) { gpu(d, 0)["dense_bf16_tflops"] = 5000.0 }, "exceeds the sparse"},
		{"dense FP8 above sparse", func(d doc) { gpu(d, 0)["dense_fp8_tflops"] = 9001.0 }, "exceeds the sparse"},
		{"no sources", func(d doc) { gpu(d, 0)["sources"] = []any{} }, "no sources"},
		{"unknown source id", func(d doc) { gpu(d, 0)["sources"] = []any{"S99"} }, "not in the sources table"},
		{"no peak figure", func(d doc) { delete(gpu(d, 0), "dense_bf16_tflops"); delete(gpu(d, 0), "sparse_bf16_tflops") }, "needs dense_bf16_tflops"},
		{"fp16 beside bf16", func(d doc) { gpu(d, 0)["dense_fp16_tflops"] = 10.0 }, "only for GPUs without BF16"},
		{"bad form factor", func(d doc) { gpu(d, 0)["form_factor"] = "Mezzanine" }, "unknown form factor"},
		{"id not model-form", func(d doc) { gpu(d, 0)["id"] = "X200-SXM-180GB" }, "does not start with model"},
		{"bad id shape", func(d doc) { gpu(d, 0)["id"] = "b200 sxm" }, "MODEL-FORM"},
		{"reserved id", func(d doc) { gpu(d, 0)["id"] = "unknown" }, "reserved"},
		{"unknown field", func(d doc) { gpu(d, 0)["dense_tf32"] = 1.0 }, "unknown field"},
		{"alias owned twice", func(d doc) { gpu(d, 0)["aliases"] = []any{"H100"} }, "already belongs"},
		{"no gpus", func(d doc) { d["gpus"] = []any{} }, "no GPUs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			tc.mutate(d)
			b, err := json.Marshal(d)
			if err != nil {
				t.Fatal(err)
			}
			_, err = schemas.ParseCatalog(b)
			if err == nil {
				t.Fatalf("ParseCatalog accepted the broken catalog")
			}
			if !errors.Is(err, schemas.ErrCatalog) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want ErrCatalog mentioning %q", err, tc.want)
			}
		})
	}
}

// unverifiedMarks returns the lines of a catalog file that still call a figure unverified, in any
// case: issue 26 sourced or dropped every such figure, so a mark is a figure carried without a source.
func unverifiedMarks(raw []byte) []string {
	var marks []string
	for i, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(strings.ToUpper(line), "UNVERIFIED") {
			marks = append(marks, fmt.Sprintf("line %d: %s", i+1, strings.TrimSpace(line)))
		}
	}
	return marks
}

// No figure in the catalog (an entry's fields and notes, a source's citation, the file comment)
// may be marked unverified: each is read in a source or not carried.
func TestCatalogHasNoUnverifiedMarks(t *testing.T) {
	raw, err := os.ReadFile("gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range unverifiedMarks(raw) {
		t.Errorf("a figure marked unverified: source it or drop it (docs/gpu-catalog.md): %s", m)
	}
	// The check itself finds a mark wherever it is, in any case.
	probe := []byte("{\n  \"notes\": [\"fine\"],\n  \"notes\": [\"Unverified: 70 TFLOPS taken as dense\"]\n}")
	if got := unverifiedMarks(probe); len(got) != 1 || !strings.HasPrefix(got[0], "line 3:") {
		t.Errorf("unverifiedMarks(probe) = %q, want the one mark on line 3", got)
	}
}

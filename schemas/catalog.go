package schemas

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Form factors of the GPU catalog. The form factor is part of a GPU's identity:
// an H100 SXM, an H100 PCIe and an H100 NVL are three different GPUs.
const (
	FormSXM       = "SXM"       // NVIDIA SXM module on an HGX/DGX board
	FormPCIe      = "PCIe"      // PCIe add-in card
	FormNVL       = "NVL"       // NVIDIA's PCIe cards sold in NVLink-bridged pairs/quads (H100 NVL, H200 NVL)
	FormOAM       = "OAM"       // OCP Accelerator Module (AMD Instinct)
	FormSuperchip = "Superchip" // Grace + GPU on one module (GH200, GB200)
	// FormUnstated names a GPU whose provider states model and memory but not the form
	// factor, where every form factor of that model and memory has the same dense
	// figure (A100 80GB: SXM4 and PCIe both 312 BF16): the entry carries that figure
	// and no bandwidth or TDP, which differ. Only a provider rule places a row on it.
	FormUnstated = "Unstated"
)

// ErrCatalog prefixes every catalog validation error.
var ErrCatalog = errors.New("schemas: gpu catalog")

//go:embed gpus.json
var gpusJSON []byte

// GPU is one entry of the GPU catalog. Every TFLOPS figure is dense (without 2:4
// structured sparsity); the with-sparsity figure the source prints, if any, is kept
// apart in the Sparse fields so that nobody divides by it by mistake.
type GPU struct {
	ID               string   `json:"id"` // canonical, e.g. "H100-SXM-80GB"
	Vendor           string   `json:"vendor"`
	Model            string   `json:"model"`       // e.g. "H100", "RTX A6000", "MI300X"
	FormFactor       string   `json:"form_factor"` // FormSXM, FormPCIe, FormNVL, FormOAM, FormSuperchip, FormUnstated
	Aliases          []string `json:"aliases,omitempty"`
	MemoryGB         float64  `json:"memory_gb"`
	MemoryType       string   `json:"memory_type"`
	BandwidthTBs     float64  `json:"bandwidth_tbs"`
	DenseBF16TFLOPS  float64  `json:"dense_bf16_tflops"`            // 0 when the GPU has no BF16
	DenseFP8TFLOPS   float64  `json:"dense_fp8_tflops"`             // 0 when the GPU has no FP8
	DenseFP16TFLOPS  float64  `json:"dense_fp16_tflops,omitempty"`  // set only where BF16 does not exist
	SparseBF16TFLOPS float64  `json:"sparse_bf16_tflops,omitempty"` // the source's with-sparsity figure, 0 if none
	SparseFP8TFLOPS  float64  `json:"sparse_fp8_tflops,omitempty"`
	TDPWatts         float64  `json:"tdp_watts"`
	Interconnect     string   `json:"interconnect"` // form factor and NVLink/fabric note
	Sources          []string `json:"sources"`      // source ids, see Catalog.Source
	Notes            []string `json:"notes,omitempty"`
	// NoDenseFigure says why the GPU has no dense BF16/FP16 figure (the vendor
	// prints none, or only with-sparsity FP4/FP8 TOPS). Such a GPU is still named,
	// so that its prices join every filter, spread and index; `tokens` reports that
	// no figure is known instead of a cost.
	NoDenseFigure string `json:"no_dense_figure,omitempty"`
}

// PeakDenseTFLOPS is the figure MFU divides by: dense BF16, or dense FP16 tensor
// (non-tensor for P100) on GPUs without BF16.
func (g GPU) PeakDenseTFLOPS() float64 {
	if g.DenseBF16TFLOPS > 0 {
		return g.DenseBF16TFLOPS
	}
	return g.DenseFP16TFLOPS
}

func (g GPU) clone() GPU {
	g.Aliases = slices.Clone(g.Aliases)
	g.Sources = slices.Clone(g.Sources)
	g.Notes = slices.Clone(g.Notes)
	return g
}

// Catalog is the parsed, validated GPU catalog. It is read-only after parsing and safe
// for concurrent use.
type Catalog struct {
	gpus    []GPU
	byID    map[string]int
	byModel map[string][]int // model key (lower case, no spaces) and aliases → indices
	sources map[string]string
}

type catalogFile struct {
	Comment string            `json:"comment"`
	Sources map[string]string `json:"sources"`
	GPUs    []GPU             `json:"gpus"`
}

// LoadCatalog parses and validates the embedded catalog (gpus.json) and checks that
// every canonicaliser rule names a GPU it holds.
func LoadCatalog() (*Catalog, error) {
	c, err := ParseCatalog(gpusJSON)
	if err != nil {
		return nil, err
	}
	if err := c.CheckRules(); err != nil {
		return nil, err
	}
	return c, nil
}

// DefaultCatalog returns the embedded catalog, parsed once.
var DefaultCatalog = sync.OnceValues(LoadCatalog)

// ParseCatalog parses and validates a catalog file in the gpus.json layout. Unknown
// fields are errors.
func ParseCatalog(data []byte) (*Catalog, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f catalogFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: parse: %w", ErrCatalog, err)
	}
	c := &Catalog{
		gpus:    f.GPUs,
		byID:    make(map[string]int, len(f.GPUs)),
		byModel: make(map[string][]int),
		sources: f.Sources,
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

var idPattern = regexp.MustCompile(`^[A-Z0-9]+-[A-Z]+-([0-9]+)GB$`)

// ModelKey is the lookup key of a model name: lower case, letters and digits only
// ("RTX A6000" → "rtxa6000").
func ModelKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (c *Catalog) validate() error {
	if len(c.gpus) == 0 {
		return fmt.Errorf("%w: no GPUs", ErrCatalog)
	}
	if len(c.sources) == 0 {
		return fmt.Errorf("%w: no sources", ErrCatalog)
	}
	variant := map[string]string{} // model key|form|memory → id
	aliasOwner := map[string]string{}
	for i, g := range c.gpus {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: gpu %d (%q): %s", ErrCatalog, i, g.ID, fmt.Sprintf(format, a...))
		}
		if g.ID == "" || g.ID == UnknownGPU {
			return bad("missing or reserved id")
		}
		if _, dup := c.byID[g.ID]; dup {
			return bad("duplicate id")
		}
		c.byID[g.ID] = i
		m := idPattern.FindStringSubmatch(g.ID)
		if m == nil {
			return bad("id must look like MODEL-FORM-<n>GB")
		}
		if g.Vendor == "" || g.Model == "" || g.MemoryType == "" || g.Interconnect == "" {
			return bad("vendor, model, memory_type and interconnect are required")
		}
		switch g.FormFactor {
		case FormSXM, FormPCIe, FormNVL, FormOAM, FormSuperchip, FormUnstated:
		default:
			return bad("unknown form factor %q", g.FormFactor)
		}
		if !strings.HasPrefix(g.ID, strings.ToUpper(ModelKey(g.Model))+"-"+strings.ToUpper(g.FormFactor)+"-") {
			return bad("id does not start with model and form factor")
		}
		if !(g.MemoryGB > 0) {
			return bad("memory_gb must be positive")
		}
		if n, _ := strconv.Atoi(m[1]); float64(n) != math.Round(g.MemoryGB) {
			return bad("id says %s GB, memory_gb is %g", m[1], g.MemoryGB)
		}
		// A GPU named only so its prices join filters (no_dense_figure), or one whose form
		// factor is unstated, may leave at 0 the figures no source gives it as one value
		// ("not recorded"); every other entry has them.
		namedOnly := g.NoDenseFigure != "" || g.FormFactor == FormUnstated
		if (!(g.BandwidthTBs > 0) || !(g.TDPWatts > 0)) && !(namedOnly && g.BandwidthTBs == 0 && g.TDPWatts == 0) {
			return bad("bandwidth_tbs and tdp_watts must be positive")
		}
		for _, v := range []float64{g.DenseBF16TFLOPS, g.DenseFP8TFLOPS, g.DenseFP16TFLOPS, g.SparseBF16TFLOPS,
			g.SparseFP8TFLOPS} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return bad("TFLOPS figures must be finite and non-negative")
			}
		}
		if g.PeakDenseTFLOPS() <= 0 && g.NoDenseFigure == "" {
			return bad(
				"needs dense_bf16_tflops, or dense_fp16_tflops where BF16 does not exist, or no_dense_figure saying why there is " +
					"none",
			)
		}
		if g.PeakDenseTFLOPS() > 0 && g.NoDenseFigure != "" {
			return bad("has a dense figure and no_dense_figure")
		}
		if g.DenseBF16TFLOPS > 0 && g.DenseFP16TFLOPS > 0 {
			return bad("dense_fp16_tflops is only for GPUs without BF16")
		}
		if g.SparseBF16TFLOPS > 0 && g.DenseBF16TFLOPS > g.SparseBF16TFLOPS {
			return bad("dense BF16 %g exceeds the sparse figure %g", g.DenseBF16TFLOPS, g.SparseBF16TFLOPS)
		}
		if g.SparseBF16TFLOPS > 0 && g.DenseBF16TFLOPS == 0 {
			return bad("sparse BF16 without a dense figure")
		}
		if g.SparseFP8TFLOPS > 0 && g.DenseFP8TFLOPS > g.SparseFP8TFLOPS {
			return bad("dense FP8 %g exceeds the sparse figure %g", g.DenseFP8TFLOPS, g.SparseFP8TFLOPS)
		}
		if g.SparseFP8TFLOPS > 0 && g.DenseFP8TFLOPS == 0 {
			return bad("sparse FP8 without a dense figure")
		}
		if len(g.Sources) == 0 {
			return bad("no sources")
		}
		for _, s := range g.Sources {
			if _, ok := c.sources[s]; !ok {
				return bad("source %q is not in the sources table", s)
			}
		}
		key := ModelKey(g.Model)
		vk := fmt.Sprintf("%s|%s|%g", key, g.FormFactor, g.MemoryGB)
		if other, dup := variant[vk]; dup {
			return bad("same model, form factor and memory as %s: the canonicaliser could not tell them apart", other)
		}
		variant[vk] = g.ID
		keys := []string{key}
		for _, a := range g.Aliases {
			keys = append(keys, ModelKey(a))
		}
		for _, k := range keys {
			if k == "" {
				return bad("empty model key or alias")
			}
			if owner, ok := aliasOwner[k]; ok && owner != key {
				return bad("model key %q already belongs to model %q", k, owner)
			}
			aliasOwner[k] = key
			if !slices.Contains(c.byModel[k], i) {
				c.byModel[k] = append(c.byModel[k], i)
			}
		}
	}
	return nil
}

// Lookup returns the GPU with the canonical id.
func (c *Catalog) Lookup(id string) (GPU, bool) {
	i, ok := c.byID[id]
	if !ok {
		return GPU{}, false
	}
	return c.gpus[i].clone(), true
}

// All returns every GPU, in catalog order.
func (c *Catalog) All() []GPU {
	out := make([]GPU, len(c.gpus))
	for i, g := range c.gpus {
		out[i] = g.clone()
	}
	return out
}

// IDs returns every canonical id, in catalog order.
func (c *Catalog) IDs() []string {
	out := make([]string, len(c.gpus))
	for i, g := range c.gpus {
		out[i] = g.ID
	}
	return out
}

// Source returns the citation of a source id used in GPU.Sources.
func (c *Catalog) Source(id string) (string, bool) {
	s, ok := c.sources[id]
	return s, ok
}

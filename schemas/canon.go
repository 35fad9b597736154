package schemas

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// The canonicaliser turns what a provider publishes about a GPU (a name, a SKU, a
// memory size) into a catalog id, or UnknownGPU. It never guesses: a name it cannot
// place, or one that fits more than one catalog GPU, is UnknownGPU.
//
// Rules, in order:
//
//  1. Provider SKU rules. Instance types whose GPU the provider documents are mapped
//     directly: AWS instance families (p5 → H100 SXM, p5e/p5en → H200 SXM, p4d → A100
//     SXM 40GB, p4de → A100 SXM 80GB, p6-b200 → B200, p6e-gb200 → GB200, g4dn → T4,
//     g5 → A10G, g6/g6f/gr6/gr6f → L4, g6e → L40S, p3 → V100 SXM2 16GB, p3dn → V100
//     SXM2 32GB); Azure ARM SKU, meter and product names (ND…H100 v5 → H100 SXM,
//     NC…H100 v5 → H100 NVL, ND…H200 v5 → H200 SXM, NDasr v4 → A100 SXM 40GB,
//     NDamsr A100 v4 → A100 SXM 80GB, NCads A100 v4 → A100 PCIe 80GB, ND MI300X v5,
//     ND GB200 v6, NCasT4 v3 → T4, NC…s v3 → V100 PCIe 16GB, ND…rs v2 → V100 SXM2
//     32GB, NV…ads A10 v5 → A10, fractional); OCI shapes (BM.GPU.H100.8, BM.GPU.H200.8,
//     BM.GPU.B200.8, BM.GPU.GB200.4, BM.GPU.A100-v2.8 → A100 SXM 80GB, BM.GPU4.8 →
//     A100 SXM 40GB, BM.GPU.MI300X.8, BM/VM.GPU.A10.n, BM.GPU.L40S(-NC).4, BM/VM.GPU3.n
//     → V100 SXM2 16GB) and the price-list name "GPU - A100 - v2"; GCP machine types
//     (a2-highgpu/megagpu → A100 SXM 40GB, a2-ultragpu → A100 SXM 80GB,
//     a3-highgpu/megagpu/edgegpu → H100 SXM, a3-ultragpu → H200 SXM, a4-highgpu →
//     B200, a4x-highgpu → GB200, g2-standard → L4). Families known to carry a GPU the
//     catalog lacks, or whose GPU the provider does not pin down (AWS p2, g3, g4ad,
//     g5g, p6-b300, g7e; OCI GPU2 and the generation-coded "GPU Standard - X7", "V2",
//     "E3", "E4" price rows, which cover both P100 and V100 shapes) are UnknownGPU.
//     Rules of a provider apply when Hint.Provider names it, all of them when it is
//     empty; they are tried on the SKU and on the name, and a name that names a
//     different model than the rule's GPU makes the result UnknownGPU.
//
//  2. Name parsing. Name and SKU are split into lower-case tokens. A model is a
//     catalog model key or alias made of 1-3 adjacent tokens ("RTX 6000 Ada
//     Generation" → rtx6000ada, "A6000" → RTX A6000); "Quadro RTX 6000", "RTX PRO
//     6000", "A100X", "H100T", "B300" and other GPUs outside the catalog name no model.
//     A model followed by a variant suffix (Ti, D, S, G, SUPER, Laptop…) or a name
//     with "MIG" is UnknownGPU. Form factor tokens: SXM/SXM2-6, HGX, DGX → SXM;
//     PCIe/PCI-E → PCIe; NVL → NVL (NVL72-style rack names are not a form factor);
//     OAM; Superchip. Memory: "80GB", "80 GB" in the name, else Hint.MemoryGB (a
//     match is within 8 % of the catalog figure; a name and a hint that disagree make
//     the result UnknownGPU). Memory type (HBM3, HBM2e, …) only breaks ties: it is how
//     nvidia-smi's "NVIDIA H100 80GB HBM3" is the SXM part (the PCIe card is HBM2e,
//     the NVL card 94 GB).
//
//  3. Provider assumptions, used only when the name leaves several catalog GPUs:
//     GCP sells A100 (40GB unless "80GB"), H100, H200 and V100 (16GB) only as SXM
//     and P100 only as PCIe; OCI sells A100, H100 and H200 only in 8-GPU HGX (SXM)
//     shapes; GMI Cloud sells H100 and H200 only in HGX (SXM) servers; RunPod and
//     Vast.ai use nvidia-smi device names, where a bare "H200" is the SXM part (the
//     NVL card is "H200 NVL"; RunPod shows id "NVIDIA H200" as "H200 SXM"); Lambda
//     sells GH200 only with 96 GB. A name that names a form factor the provider is
//     assumed not to sell ("A100 PCIe" at GCP) is outside the assumption.
//
// Consequences: a bare "H100" or "h100-80gb" with no form factor is UnknownGPU
// everywhere except where rule 3 applies (Lambda sells both H100 SXM and PCIe, so
// its slugs must say which); "A100" without SXM/PCIe is UnknownGPU outside GCP and
// OCI, and without memory outside GCP; B200, GB200, L40S, L4 and other GPUs with a
// single catalog variant need no form factor. OVHcloud flavours resolve only when
// the model is unambiguous (l4-90, l40s-180, a10-45); h100-380 and a100-180 do not
// say the form factor and are UnknownGPU.

// Hint is what a source knows about the GPU of a SKU. Provider is the provider name
// as in the provider catalog ("aws", "runpod"…); Name is the provider's GPU name or
// description, verbatim; SKU is the instance type, shape or product id; MemoryGB is
// the memory of one GPU, 0 when unknown.
type Hint struct {
	Provider string
	Name     string
	SKU      string
	MemoryGB float64
}

// Canonicalize returns the catalog id of the hinted GPU, or UnknownGPU.
func (c *Catalog) Canonicalize(h Hint) string {
	id, _ := c.Explain(h)
	return id
}

// Explain is Canonicalize with the reason for its answer, for logs and quarantine.
func (c *Catalog) Explain(h Hint) (id, reason string) {
	provider := strings.ToLower(strings.TrimSpace(h.Provider))
	nameF := c.parse(h.Name)

	if id, why, ok := c.bySKURules(provider, h); ok {
		if id == UnknownGPU {
			return UnknownGPU, why
		}
		i, inCatalog := c.byID[id]
		if !inCatalog {
			return UnknownGPU, why + ": " + id + " is not in this catalog"
		}
		g := c.gpus[i]
		if m := nameF.model; m != "" && (m != ModelKey(g.Model) || len(nameF.others) > 0) {
			return UnknownGPU, fmt.Sprintf("%s, but the name says %s", why, m)
		}
		return id, why
	}

	f := nameF
	if sf := c.parse(h.SKU); !sf.empty() {
		f = f.merge(sf)
	}
	return c.resolve(provider, f, h.MemoryGB)
}

// features are what one string says about a GPU.
type features struct {
	model   string   // catalog model key (aliases resolved)
	others  []string // further, different model keys
	form    string
	forms   int // distinct form factors named
	memGB   float64
	mems    int // distinct memory sizes named
	memType string
	variant string // a token that makes the name a different product
}

func (f features) empty() bool {
	return f.model == "" && f.form == "" && f.memGB == 0 && f.memType == "" && f.variant == ""
}

func (f features) merge(g features) features {
	if f.model == "" {
		f.model, f.others = g.model, g.others
	} else if g.model != "" {
		if g.model != f.model {
			f.others = append(f.others, g.model)
		}
		f.others = append(f.others, g.others...)
	}
	if f.form == "" {
		f.form, f.forms = g.form, g.forms
	} else if g.form != "" && g.form != f.form {
		f.forms++
	}
	if f.memGB == 0 {
		f.memGB, f.mems = g.memGB, g.mems
	} else if g.memGB != 0 && !memClose(g.memGB, f.memGB) {
		f.mems++
	}
	if f.memType == "" {
		f.memType = g.memType
	}
	if f.variant == "" {
		f.variant = g.variant
	}
	return f
}

var (
	formTokens = map[string]string{
		"sxm": FormSXM, "sxm2": FormSXM, "sxm3": FormSXM, "sxm4": FormSXM, "sxm5": FormSXM, "sxm6": FormSXM,
		"hgx": FormSXM, "dgx": FormSXM,
		"pcie": FormPCIe, "pci": FormPCIe,
		"nvl":       FormNVL,
		"oam":       FormOAM,
		"superchip": FormSuperchip,
	}
	memTypeTokens = map[string]bool{"hbm2": true, "hbm2e": true, "hbm3": true, "hbm3e": true, "gddr6": true, "gddr6x": true}
	// Tokens right after a model name that make it a different product (RTX 3090 Ti,
	// RTX 4090 D, A10 G written apart…): never collapse those into the base model.
	variantSuffixes = map[string]bool{
		"ti": true, "d": true, "s": true, "g": true, "super": true, "max": true,
		"laptop": true, "mobile": true,
	}
	memToken = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(gb|gib)$`)
)

// tokens splits s into lower-case runs of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !((r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.')
	})
}

func (c *Catalog) parse(s string) features {
	var f features
	if s == "" {
		return f
	}
	// Dots stay inside tokens so that "1.5gb" parses; elsewhere they separate.
	var toks []string
	for _, t := range tokens(s) {
		if memToken.MatchString(t) {
			toks = append(toks, t)
			continue
		}
		for _, p := range strings.Split(t, ".") {
			if p != "" {
				toks = append(toks, p)
			}
		}
	}
	addModel := func(k string) {
		switch {
		case f.model == "":
			f.model = k
		case k != f.model:
			f.others = append(f.others, k)
		}
	}
	addMem := func(v float64) {
		switch {
		case f.memGB == 0:
			f.memGB, f.mems = v, 1
		case !memClose(v, f.memGB):
			f.mems++
		}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if k, n := c.matchModel(toks[i:]); n > 0 {
			addModel(k)
			i += n - 1
			if i+1 < len(toks) && variantSuffixes[toks[i+1]] {
				f.variant = toks[i+1]
			}
			continue
		}
		if form, ok := formTokens[t]; ok {
			if f.form == "" {
				f.form, f.forms = form, 1
			} else if f.form != form {
				f.forms++
			}
			if t == "pci" && i+1 < len(toks) && toks[i+1] == "e" {
				i++
			}
			continue
		}
		if memTypeTokens[t] {
			f.memType = t
			continue
		}
		if m := memToken.FindStringSubmatch(t); m != nil {
			var v float64
			fmt.Sscan(m[1], &v)
			addMem(v)
			continue
		}
		if isNumber(t) && i+1 < len(toks) && (toks[i+1] == "gb" || toks[i+1] == "gib") {
			var v float64
			fmt.Sscan(t, &v)
			addMem(v)
			i++
			continue
		}
		if t == "mig" {
			f.variant = t
		}
	}
	return f
}

// matchModel finds the longest model key made of the first 1-3 tokens.
func (c *Catalog) matchModel(toks []string) (key string, n int) {
	for k := min(3, len(toks)); k >= 1; k-- {
		cand := strings.Join(toks[:k], "")
		if idx, ok := c.byModel[cand]; ok {
			return ModelKey(c.gpus[idx[0]].Model), k
		}
	}
	return "", 0
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}

// memClose reports whether a reported memory size matches a catalog size: within 8 %
// (nvidia-smi and providers report 79.6 GiB for 80 GB, 179 for 180, 93.6 for 94).
func memClose(reported, catalog float64) bool {
	return math.Abs(reported-catalog) <= 0.08*catalog
}

// assumption is what a provider's GPU names leave unsaid because the provider sells
// only one variant.
type assumption struct {
	form  string
	memGB float64
	why   string
}

var providerAssumptions = map[string]map[string]assumption{
	"gcp": {
		"a100": {FormSXM, 40, "GCP attaches A100 only to A2 machines (SXM4); 40GB unless the SKU says 80GB"},
		"h100": {FormSXM, 0, "GCP sells H100 only in A3 machines (SXM)"},
		"h200": {FormSXM, 0, "GCP sells H200 only in A3 Ultra machines (SXM)"},
		"v100": {FormSXM, 16, "GCP V100s are 16GB NVLink (SXM2) parts"},
		"p100": {FormPCIe, 0, "GCP P100s are 16GB PCIe cards"},
	},
	"oci": {
		"a100": {FormSXM, 0, "OCI sells A100 only in 8-GPU HGX shapes (BM.GPU4.8, BM.GPU.A100-v2.8)"},
		"h100": {FormSXM, 0, "OCI sells H100 only as BM.GPU.H100.8 (HGX)"},
		"h200": {FormSXM, 0, "OCI sells H200 only as BM.GPU.H200.8 (HGX)"},
	},
	"gmi": {
		"h100": {FormSXM, 0, "GMI Cloud sells H100 only in HGX servers"},
		"h200": {FormSXM, 0, "GMI Cloud sells H200 only in HGX servers"},
	},
	"runpod": {
		"h200": {FormSXM, 0, "RunPod uses nvidia-smi names: bare \"NVIDIA H200\" is the SXM part (shown as \"H200 SXM\")"},
	},
	"vast": {
		"h200": {FormSXM, 0, "Vast.ai uses nvidia-smi names: bare \"H200\" is the SXM part, the NVL card is \"H200 NVL\""},
	},
	"lambda": {
		"gh200": {"", 96, "Lambda sells GH200 only with 96 GB"},
	},
}

func (c *Catalog) resolve(provider string, f features, hintMem float64) (string, string) {
	if f.model == "" {
		return UnknownGPU, "no catalog GPU named"
	}
	if len(f.others) > 0 {
		return UnknownGPU, fmt.Sprintf("several models named (%s, %s)", f.model, strings.Join(f.others, ", "))
	}
	if f.variant != "" {
		return UnknownGPU, fmt.Sprintf("%s followed by %q: a different product", f.model, f.variant)
	}
	if f.forms > 1 {
		return UnknownGPU, "several form factors named"
	}
	if f.mems > 1 {
		return UnknownGPU, "several memory sizes named"
	}
	cands := c.byModel[f.model]
	why := "model " + f.model
	filter := func(keep func(GPU) bool) []int {
		var out []int
		for _, i := range cands {
			if keep(c.gpus[i]) {
				out = append(out, i)
			}
		}
		return out
	}
	if f.form != "" {
		cands = filter(func(g GPU) bool { return g.FormFactor == f.form })
		if len(cands) == 0 {
			return UnknownGPU, fmt.Sprintf("no %s in form factor %s", f.model, f.form)
		}
		why += ", " + f.form
	}
	mem := f.memGB
	if mem == 0 {
		mem = hintMem
	} else if hintMem > 0 && !memClose(hintMem, mem) {
		return UnknownGPU, fmt.Sprintf("name says %g GB, hint says %g GB", mem, hintMem)
	}
	if mem > 0 {
		cands = filter(func(g GPU) bool { return memClose(mem, g.MemoryGB) })
		if len(cands) == 0 {
			return UnknownGPU, fmt.Sprintf("no %s with %g GB", f.model, mem)
		}
		why += fmt.Sprintf(", %g GB", mem)
	}
	if len(cands) > 1 && f.memType != "" {
		if kept := filter(func(g GPU) bool { return strings.EqualFold(g.MemoryType, f.memType) }); len(kept) > 0 {
			cands = kept
			why += ", " + f.memType
		}
	}
	if len(cands) > 1 {
		// An assumption describes what the provider sells; a name that says otherwise
		// (a form factor the provider is assumed not to sell) is outside it.
		if a, ok := providerAssumptions[provider][f.model]; ok && (a.form == "" || f.form == "" || f.form == a.form) {
			if f.form == "" && a.form != "" {
				if kept := filter(func(g GPU) bool { return g.FormFactor == a.form }); len(kept) > 0 {
					cands = kept
				}
			}
			if len(cands) > 1 && mem == 0 && a.memGB > 0 {
				if kept := filter(func(g GPU) bool { return memClose(a.memGB, g.MemoryGB) }); len(kept) > 0 {
					cands = kept
				}
			}
			why += "; " + a.why
		}
	}
	if len(cands) != 1 {
		ids := make([]string, len(cands))
		for i, j := range cands {
			ids[i] = c.gpus[j].ID
		}
		return UnknownGPU, fmt.Sprintf("%s is ambiguous: %s", why, strings.Join(ids, ", "))
	}
	return c.gpus[cands[0]].ID, why
}

// skuRule maps a normalised SKU or name matching re to a catalog id (or UnknownGPU).
type skuRule struct {
	re *regexp.Regexp
	id string
}

type skuRuleSet struct {
	provider  string
	normalize func(string) string
	rules     []skuRule
}

func rule(expr, id string) skuRule { return skuRule{regexp.MustCompile(expr), id} }

// awsFamilies maps EC2 instance families to their GPU (AWS accelerated-computing
// documentation). UnknownGPU marks GPU families whose GPU the catalog lacks.
var awsFamilies = map[string]string{
	"p5":        "H100-SXM-80GB",
	"p5e":       "H200-SXM-141GB",
	"p5en":      "H200-SXM-141GB",
	"p4d":       "A100-SXM-40GB",
	"p4de":      "A100-SXM-80GB",
	"p6-b200":   "B200-SXM-180GB",
	"p6e-gb200": "GB200-SUPERCHIP-186GB",
	"g4dn":      "T4-PCIE-16GB",
	"g5":        "A10G-PCIE-24GB",
	"g6":        "L4-PCIE-24GB",
	"g6f":       "L4-PCIE-24GB",
	"gr6":       "L4-PCIE-24GB",
	"gr6f":      "L4-PCIE-24GB",
	"g6e":       "L40S-PCIE-48GB",
	"p3":        "V100-SXM-16GB",
	"p3dn":      "V100-SXM-32GB",
	"p2":        UnknownGPU, // K80
	"g3":        UnknownGPU, // M60
	"g3s":       UnknownGPU, // M60
	"g4ad":      UnknownGPU, // Radeon Pro V520
	"g5g":       UnknownGPU, // T4G (Graviton)
	"p6-b300":   UnknownGPU, // B300
	"p6e-gb300": UnknownGPU, // GB300
	"g7e":       UnknownGPU, // RTX PRO 6000 Blackwell
}

var awsInstanceType = regexp.MustCompile(`^([a-z][a-z0-9-]*)\.(?:[0-9]*x?large|metal(?:-[0-9]+xl)?|[0-9]+xlarge|medium|small|micro|nano)$`)

// azureNoise are words of Azure product and meter names that say nothing about the GPU.
var azureNoise = map[string]bool{
	"standard": true, "virtual": true, "machines": true, "machine": true, "series": true, "srs": true,
	"linux": true, "windows": true, "spot": true, "low": true, "priority": true, "promo": true,
}

func azureNormalize(s string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !((r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'))
	}) {
		if !azureNoise[w] {
			b.WriteString(w)
		}
	}
	return b.String()
}

func ociNormalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

var skuRuleSets = []skuRuleSet{
	{
		provider:  "azure",
		normalize: azureNormalize,
		rules: []skuRule{
			rule(`^nd[0-9]*[a-z]*gb200v6$`, "GB200-SUPERCHIP-186GB"),
			rule(`^nd[0-9]*[a-z]*h200v5$`, "H200-SXM-141GB"),
			rule(`^nd[0-9]*[a-z]*h100v5$`, "H100-SXM-80GB"),
			rule(`^ncc?[0-9]*[a-z]*h100v5$`, "H100-NVL-94GB"),
			rule(`^nd[0-9]*[a-z]*mi300xv5$`, "MI300X-OAM-192GB"),
			rule(`^nd[0-9]*amsr(a100)?v4$`, "A100-SXM-80GB"),
			rule(`^nd[0-9]*asr(a100)?v4$`, "A100-SXM-40GB"),
			rule(`^nc[0-9]*adsa100v4$`, "A100-PCIE-80GB"),
			rule(`^nc[0-9]*ast4v3$`, "T4-PCIE-16GB"),
			rule(`^nv[0-9]*adm?sa10v5$`, "A10-PCIE-24GB"),
			rule(`^nc[0-9]*r?s?v3$`, "V100-PCIE-16GB"),
			rule(`^nd[0-9]*r?s?v2$`, "V100-SXM-32GB"),
		},
	},
	{
		provider:  "oci",
		normalize: ociNormalize,
		rules: []skuRule{
			rule(`^bm\.gpu\.h100\.[0-9]+$`, "H100-SXM-80GB"),
			rule(`^bm\.gpu\.h200\.[0-9]+$`, "H200-SXM-141GB"),
			rule(`^bm\.gpu\.b200\.[0-9]+$`, "B200-SXM-180GB"),
			rule(`^bm\.gpu\.gb200\.[0-9]+$`, "GB200-SUPERCHIP-186GB"),
			rule(`^bm\.gpu\.a100-v2\.[0-9]+$`, "A100-SXM-80GB"),
			rule(`^bm\.gpu4\.[0-9]+$`, "A100-SXM-40GB"),
			rule(`^bm\.gpu\.mi300x\.[0-9]+$`, "MI300X-OAM-192GB"),
			rule(`^(bm|vm)\.gpu\.a10\.[0-9]+$`, "A10-PCIE-24GB"),
			rule(`^bm\.gpu\.l40s(-nc)?\.[0-9]+$`, "L40S-PCIE-48GB"),
			rule(`^(bm|vm)\.gpu3\.[0-9]+$`, "V100-SXM-16GB"),
			rule(`^(bm|vm)\.gpu2\.[0-9]+$`, UnknownGPU), // P100, form factor not documented
			rule(`(^|\s)gpu - a100 - v2$`, "A100-SXM-80GB"),
			rule(`gpu standard - (x7|v2)(\s|$)`, UnknownGPU), // covers both P100 and V100 shapes
			rule(`gpu - e[0-9]+(\s|$)`, UnknownGPU),
		},
	},
	{
		provider:  "gcp",
		normalize: strings.ToLower,
		rules: []skuRule{
			rule(`^a2-(highgpu-[0-9]+g|megagpu-16g)$`, "A100-SXM-40GB"),
			rule(`^a2-ultragpu-[0-9]+g$`, "A100-SXM-80GB"),
			rule(`^a3-(highgpu|megagpu|edgegpu)-[0-9]+g(-nolssd)?$`, "H100-SXM-80GB"),
			rule(`^a3-ultragpu-[0-9]+g(-nolssd)?$`, "H200-SXM-141GB"),
			rule(`^a4-highgpu-[0-9]+g(-nolssd)?$`, "B200-SXM-180GB"),
			rule(`^a4x-highgpu-[0-9]+g(-nolssd)?$`, "GB200-SUPERCHIP-186GB"),
			rule(`^g2-standard-[0-9]+$`, "L4-PCIE-24GB"),
		},
	},
}

// bySKURules applies the provider's SKU rules to the SKU and the name.
func (c *Catalog) bySKURules(provider string, h Hint) (id, why string, ok bool) {
	var found []string
	var whys []string
	add := func(id, why string) {
		found = append(found, id)
		whys = append(whys, why)
	}
	if provider == "" || provider == "aws" {
		for _, s := range []string{h.SKU, h.Name} {
			// "p5.48xlarge:all-upfront": the aws source marks purchase options after a colon.
			s, _, _ = strings.Cut(s, ":")
			if m := awsInstanceType.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s))); m != nil {
				if id, known := awsFamilies[m[1]]; known {
					add(id, "aws instance family "+m[1])
				}
			}
		}
	}
	for _, rs := range skuRuleSets {
		if provider != "" && provider != rs.provider {
			continue
		}
		for _, s := range []string{h.SKU, h.Name} {
			if s == "" {
				continue
			}
			n := rs.normalize(strings.TrimSpace(s))
			for _, r := range rs.rules {
				if r.re.MatchString(n) {
					add(r.id, fmt.Sprintf("%s rule %s", rs.provider, r.re))
					break
				}
			}
		}
	}
	if len(found) == 0 {
		return "", "", false
	}
	for _, f := range found[1:] {
		if f != found[0] {
			return UnknownGPU, "SKU rules disagree: " + strings.Join(whys, "; "), true
		}
	}
	if found[0] == UnknownGPU {
		return UnknownGPU, whys[0] + ": GPU not in the catalog or not determined by the SKU", true
	}
	return found[0], whys[0], true
}

// CheckRules reports SKU rules and provider assumptions that name ids or models
// missing from the catalog. LoadCatalog runs it on the embedded catalog; a catalog
// from ParseCatalog may lack GPUs the rules name, and those rules then yield
// UnknownGPU.
func (c *Catalog) CheckRules() error {
	check := func(where, id string) error {
		if id == UnknownGPU {
			return nil
		}
		if _, ok := c.byID[id]; !ok {
			return fmt.Errorf("%w: %s names %q, which is not in the catalog", ErrCatalog, where, id)
		}
		return nil
	}
	for fam, id := range awsFamilies {
		if err := check("aws family "+fam, id); err != nil {
			return err
		}
	}
	for _, rs := range skuRuleSets {
		for _, r := range rs.rules {
			if err := check(rs.provider+" rule "+r.re.String(), r.id); err != nil {
				return err
			}
		}
	}
	for p, m := range providerAssumptions {
		for model, a := range m {
			if _, ok := c.byModel[model]; !ok {
				return fmt.Errorf("%w: %s assumption names model %q, which is not in the catalog", ErrCatalog, p, model)
			}
			if a.form == "" && a.memGB == 0 {
				return fmt.Errorf("%w: %s assumption for %q assumes nothing", ErrCatalog, p, model)
			}
		}
	}
	return nil
}

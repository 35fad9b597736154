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
//     directly (AWS instance families, Azure ARM SKU and meter names, OCI shapes, GCP
//     machine types). The rules are facts of the provider: its source package
//     (scrapers/<name>/naming.go) declares them as a Naming and registers them with
//     RegisterProvider, so that `go doc` on that package lists them. A rule may map
//     to UnknownGPU: a family known to carry a GPU the catalog lacks, or whose GPU
//     the provider does not pin down. Rules of a provider apply when Hint.Provider
//     names it, every registered provider's when it is empty; they are tried on the
//     SKU and on the name, and a name that names a different model than the rule's
//     GPU makes the result UnknownGPU.
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
//  3. Provider assumptions (Naming.Assumptions, registered with the rules), used only
//     when the name leaves several catalog GPUs: GCP sells A100 (40GB unless "80GB"),
//     H100, H200 and V100 (16GB) only as SXM and P100 only as PCIe; OCI sells A100,
//     H100 and H200 only in 8-GPU HGX (SXM) shapes; GMI Cloud sells H100 and H200
//     only in HGX (SXM) servers; RunPod and Vast.ai use nvidia-smi device names, where
//     a bare "H200" is the SXM part; Lambda sells GH200 only with 96 GB. A name that
//     names a form factor the provider is assumed not to sell ("A100 PCIe" at GCP) is
//     outside the assumption.
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
	// MemoryType is the memory technology the source states apart from the name
	// (OVHcloud's gpu_memory_interface "HBM3"), "" when unknown. Like a memory type
	// in the name, it only breaks ties: an 80 GB HBM3 H100 is the SXM part.
	MemoryType string
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
	if mt := strings.ToLower(strings.TrimSpace(h.MemoryType)); f.memType == "" && memTypeTokens[mt] {
		f.memType = mt
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
	memTypeTokens = map[string]bool{
		"hbm2":   true,
		"hbm2e":  true,
		"hbm3":   true,
		"hbm3e":  true,
		"gddr6":  true,
		"gddr6x": true,
		"gddr7":  true,
		"gddr5":  true,
	}
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

// maxModelTokens is the most tokens a model name or alias spans ("RTX PRO 6000
// Blackwell Max-Q Workstation Edition" is eight).
const maxModelTokens = 8

// matchModel finds the longest model key made of the first 1-maxModelTokens tokens.
func (c *Catalog) matchModel(toks []string) (key string, n int) {
	for k := min(maxModelTokens, len(toks)); k >= 1; k-- {
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
		n, _ := namingOf(provider)
		if a, ok := n.Assumptions[f.model]; ok && (a.Form == "" || f.form == "" || f.form == a.Form) {
			if f.form == "" && a.Form != "" {
				if kept := filter(func(g GPU) bool { return g.FormFactor == a.Form }); len(kept) > 0 {
					cands = kept
				}
			}
			if len(cands) > 1 && mem == 0 && a.MemoryGB > 0 {
				if kept := filter(func(g GPU) bool { return memClose(a.MemoryGB, g.MemoryGB) }); len(kept) > 0 {
					cands = kept
				}
			}
			why += "; " + a.Why
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

// bySKURules applies the registered providers' SKU rules (only the hinted provider's
// when Hint.Provider is set) to the SKU and the name.
func (c *Catalog) bySKURules(provider string, h Hint) (id, why string, ok bool) {
	var found []string
	var whys []string
	sourced := false // the first matching rule gives its own reason
	for _, r := range registeredProviders() {
		if provider != "" && provider != r.provider.Name {
			continue
		}
		for _, s := range []string{h.SKU, h.Name} {
			if s == "" {
				continue
			}
			n := r.naming.Normalize(strings.TrimSpace(s))
			for _, rule := range r.naming.Rules {
				if rule.Pattern.MatchString(n) {
					found = append(found, rule.ID)
					if rule.Why != "" {
						sourced = sourced || len(whys) == 0
						whys = append(whys, rule.Why)
					} else {
						whys = append(whys, fmt.Sprintf("%s rule %s", r.provider.Name, rule.Pattern))
					}
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
		if sourced {
			// A rule with its own reason says why the SKU stays unknown (which
			// statement is missing, what was searched); the generic tail would
			// contradict it.
			return UnknownGPU, whys[0], true
		}
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
	for _, r := range registeredProviders() {
		p := r.provider.Name
		for _, rule := range r.naming.Rules {
			if err := check(p+" rule "+rule.Pattern.String(), rule.ID); err != nil {
				return err
			}
		}
		for model, a := range r.naming.Assumptions {
			if _, ok := c.byModel[model]; !ok {
				return fmt.Errorf("%w: %s assumption names model %q, which is not in the catalog", ErrCatalog, p, model)
			}
			if a.Form == "" && a.MemoryGB == 0 {
				return fmt.Errorf("%w: %s assumption for %q assumes nothing", ErrCatalog, p, model)
			}
		}
	}
	return nil
}

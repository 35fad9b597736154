package lambda

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// UnitRegions is the unit (Attrs["unit"]) of a Lambda stock signal: its Value counts
// the regions with capacity for the instance type.
const UnitRegions = "regions"

// instanceTypes is the answer of GET /api/v1/instance-types: {"data": {<name>:
// {instance_type, regions_with_capacity_available}}}, or {"error": {code, message}}.
type instanceTypes struct {
	Data  map[string]json.RawMessage `json:"data"` // decoded one by one: one bad entry is skipped alone
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// instanceTypeItem is one entry of data (the API's InstanceTypesItem).
type instanceTypeItem struct {
	InstanceType struct {
		Name              string `json:"name"`
		Description       string `json:"description"`
		GPUDescription    string `json:"gpu_description"`
		PriceCentsPerHour *int64 `json:"price_cents_per_hour"`
		Specs             struct {
			VCPUs      int `json:"vcpus"`
			MemoryGiB  int `json:"memory_gib"`
			StorageGiB int `json:"storage_gib"`
			GPUs       int `json:"gpus"`
		} `json:"specs"`
	} `json:"instance_type"`
	Regions *[]struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"regions_with_capacity_available"`
}

// capacity is what the source keeps of an instance type: its name, its GPU (count,
// model, memory, form factor), and the names of the regions with capacity for it.
type capacity struct {
	name    string
	gpus    int
	gpuName string  // gpu_description without its parenthesis ("H100" of "H100 (80 GB SXM5)")
	form    string  // the form factor in the parenthesis ("SXM5", "PCIe"), "" when none
	memGB   float64 // the memory in the parenthesis, 0 when none
	regions []string
}

var (
	countRE  = regexp.MustCompile(`^gpu_([0-9]+)x_`)
	parenRE  = regexp.MustCompile(`^(.*?)\s*\(([^)]*)\)\s*$`)
	apiMemRE = regexp.MustCompile(`(?i)([0-9]+(?:\.[0-9]+)?)\s*(GB|GiB|TB)\b`)
	leadRE   = regexp.MustCompile(`^[0-9]+x\s+`)          // "8x " of a description
	memWord  = regexp.MustCompile(`^[0-9]+(p[0-9]+)?gb$`) // "80gb" of a slug
)

// parseInstanceTypes reads an instance-types answer. It is pure. An answer without
// a data object is an error (Lambda's error answer names its code); an entry that
// cannot be read, or has no GPU (a CPU instance type), is skipped and counted in
// skipped by reason.
func parseInstanceTypes(r io.Reader) (caps []capacity, skipped map[string]int, err error) {
	var resp instanceTypes
	if err := json.NewDecoder(r).Decode(&resp); err != nil {
		return nil, nil, fmt.Errorf("lambda: capacity: decoding instance types: %w", err)
	}
	if resp.Data == nil {
		if resp.Error != nil {
			return nil, nil, fmt.Errorf("lambda: capacity: error answer %q", resp.Error.Code)
		}
		return nil, nil, fmt.Errorf("lambda: capacity: answer has no data object")
	}
	skipped = map[string]int{}
	for key, msg := range resp.Data {
		var it instanceTypeItem
		if err := json.Unmarshal(msg, &it); err != nil || it.Regions == nil {
			skipped["unreadable entry"]++
			continue
		}
		c := capacity{name: it.InstanceType.Name, gpus: it.InstanceType.Specs.GPUs}
		if c.name == "" {
			c.name = key
		}
		if m := countRE.FindStringSubmatch(c.name); c.gpus == 0 && m != nil {
			c.gpus, _ = strconv.Atoi(m[1])
		}
		if c.gpus <= 0 {
			skipped["no GPU"]++
			continue
		}
		desc := strings.TrimSpace(it.InstanceType.GPUDescription)
		if desc == "" { // "8x H100 (80 GB SXM5)" → "H100 (80 GB SXM5)"
			desc = strings.TrimSpace(leadRE.ReplaceAllString(it.InstanceType.Description, ""))
		}
		c.gpuName = desc
		if m := parenRE.FindStringSubmatch(desc); m != nil {
			c.gpuName = m[1]
			inner := m[2]
			if mm := apiMemRE.FindStringSubmatch(inner); mm != nil {
				c.memGB, _ = strconv.ParseFloat(mm[1], 64)
				if strings.EqualFold(mm[2], "TB") {
					c.memGB *= 1000
				}
				inner = strings.Replace(inner, mm[0], "", 1)
			}
			c.form = strings.Join(strings.Fields(inner), " ")
		}
		seen := map[string]bool{}
		for _, reg := range *it.Regions {
			if n := strings.TrimSpace(reg.Name); n != "" && !seen[n] {
				seen[n] = true
				c.regions = append(c.regions, n)
			}
		}
		sort.Strings(c.regions)
		caps = append(caps, c)
	}
	sort.Slice(caps, func(i, j int) bool { return caps[i].name < caps[j].name })
	return caps, skipped, nil
}

// gpuKey is what matches an API instance type to a page row: the GPU count, the
// model number (the last word of the model: "h100", "6000" of "RTX 6000", "a6000"
// of "RTX A6000"), the memory and the form-factor family ("sxm" for SXM, SXM4,
// SXM5 …, "pcie", "" when not stated).
type gpuKey struct {
	count  int
	model  string
	memGB  float64
	family string
}

// keyOf splits a model slug ("h100_sxm", "b200_sxm6", "rtx_6000") into its model
// number and form-factor family.
func keyOf(count int, slug string, memGB float64) gpuKey {
	k := gpuKey{count: count, memGB: memGB}
	for _, w := range strings.Split(slug, "_") {
		switch {
		case w == "":
		case strings.HasPrefix(w, "sxm"):
			k.family = "sxm"
		case w == "pcie":
			k.family = "pcie"
		case memWord.MatchString(w):
		default:
			k.model = w
		}
	}
	return k
}

// compatible reports whether an instance type (a) and a page row (p) can be the same
// offer: same count, model and memory (when both state one), and form factors that
// do not contradict (the page prints none for some plans: "NVIDIA A10").
func (a gpuKey) compatible(p gpuKey) bool {
	if a.count != p.count || a.model != p.model || a.model == "" {
		return false
	}
	if a.memGB > 0 && p.memGB > 0 && math.Abs(a.memGB-p.memGB) > 0.5 {
		return false
	}
	return a.family == "" || p.family == "" || a.family == p.family
}

// matchRow finds the page row of an instance type: the one compatible row, or among
// several the one row of the same form factor; nil when there is none or no single
// one. Lambda's API and page name the same offer differently ("gpu_8x_h100_sxm5",
// "H100 (80 GB SXM5)" against the page's "NVIDIA H100 SXM", 80 GB, SKU
// gpu_8x_h100_sxm_80gb; the page keeps "SXM6" for the B200 and prints no form factor
// for the A10), so the page's SKU cannot be built from the API's name alone: it is
// read from the page of the same run.
func matchRow(c capacity, rows []schemas.Observation) *schemas.Observation {
	a := keyOf(c.gpus, modelSlug(c.gpuName+" "+c.form), c.memGB)
	var all, exact []*schemas.Observation
	seen := map[string]bool{}
	for i := range rows {
		o := &rows[i]
		if seen[o.SKU] {
			continue // one page row per SKU (a row is on demand only, but be sure)
		}
		seen[o.SKU] = true
		p := keyOf(int(o.GPUCount), modelSlug(o.GPUName), o.GPUMemoryGB)
		if !a.compatible(p) {
			continue
		}
		all = append(all, o)
		if a.family == p.family {
			exact = append(exact, o)
		}
	}
	switch {
	case len(all) == 1:
		return all[0]
	case len(exact) == 1:
		return exact[0]
	}
	return nil
}

// capacitySignals are the stock signals of the instance types: one per type, Value
// the count of regions with capacity (0: none), Label their names sorted and joined
// by ",", Region "" (the count is over every region), Attrs unit "regions". An
// instance type whose page row is found (matchRow) has that row's SKU, GPU name and
// memory, so that its stock joins its price; one without (not on the page, or two
// types matching one row) keeps the API's name as SKU and its gpu_description's
// model and form factor as GPU name. Attrs["instance_type"] is always the API's
// name, Attrs["price_sku"] the page row's SKU when one was found. Sorted by SKU.
func capacitySignals(caps []capacity, rows []schemas.Observation, at time.Time, sourceURL string) []schemas.Signal {
	matched := map[string]*schemas.Observation{}
	users := map[string]int{} // page SKU → how many instance types matched it
	for _, c := range caps {
		if o := matchRow(c, rows); o != nil {
			matched[c.name] = o
			users[o.SKU]++
		}
	}
	out := make([]schemas.Signal, 0, len(caps))
	for _, c := range caps {
		s := schemas.Signal{
			ObservedAt:  at,
			EffectiveAt: at,
			Provider:    "lambda",
			SKU:         c.name,
			Kind:        schemas.SignalStock,
			Value:       float64(len(c.regions)),
			Label:       strings.Join(c.regions, ","),
			SourceURL:   schemas.RedactURL(sourceURL),
			Attrs: map[string]string{
				"unit":          UnitRegions,
				"instance_type": c.name,
				"gpu_count":     strconv.Itoa(c.gpus),
				"gpu_name":      strings.TrimSpace(c.gpuName + " " + c.form),
			},
		}
		mem := c.memGB
		if o := matched[c.name]; o != nil {
			s.Attrs["price_sku"] = o.SKU
			s.Attrs["gpu_name"] = o.GPUName
			mem = o.GPUMemoryGB
			if users[o.SKU] == 1 {
				s.SKU = o.SKU
			}
		}
		if mem > 0 {
			s.Attrs["gpu_memory_gb"] = schemas.FormatNum(mem)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].SKU < out[j].SKU })
	return out
}

// collectCapacity reads the instance types with the API key (Authorization: Bearer,
// as Lambda's API documentation recommends) and emits their stock signals. Any
// failure is a warning: the page's prices are already emitted and stay the run's.
// Neither the key nor a header is ever logged.
func (s *Source) collectCapacity(ctx context.Context, e scrapers.Emitter, rows []schemas.Observation) {
	log := s.cfg.Logger.With("source", s.cfg.Name)
	shown := schemas.RedactURL(s.capacityURL)
	warn := func(err error) {
		msg := strings.ReplaceAll(schemas.RedactText(err.Error()), s.apiKey, schemas.Redacted)
		log.Warn("capacity not read; the prices are kept", "url", shown, "error", msg)
	}
	hdr := http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + s.apiKey}}
	resp, err := s.cfg.Client.Get(ctx, s.capacityURL, hdr)
	if err != nil {
		warn(fmt.Errorf("lambda: capacity: %w", err))
		return
	}
	caps, skipped, err := parseInstanceTypes(bytes.NewReader(resp.Body))
	if err != nil {
		warn(err)
		return
	}
	sigs := capacitySignals(caps, rows, s.cfg.Now(), s.capacityURL)
	log.Debug("capacity read", "instance_types", len(sigs), "skipped", skipped)
	scrapers.EmitSignals(e, sigs...)
}

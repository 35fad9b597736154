package gcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// skusPage is one response of services.skus.list.
type skusPage struct {
	Skus          *[]json.RawMessage `json:"skus"`
	NextPageToken string             `json:"nextPageToken"`
}

// sku is one Cloud Billing Catalog SKU, in the API's field layout.
type sku struct {
	Name        string `json:"name"`
	SkuID       string `json:"skuId"`
	Description string `json:"description"`
	Category    struct {
		ServiceDisplayName string `json:"serviceDisplayName"`
		ResourceFamily     string `json:"resourceFamily"`
		ResourceGroup      string `json:"resourceGroup"`
		UsageType          string `json:"usageType"`
	} `json:"category"`
	ServiceRegions      []string      `json:"serviceRegions"`
	PricingInfo         []pricingInfo `json:"pricingInfo"`
	ServiceProviderName string        `json:"serviceProviderName"`
	GeoTaxonomy         *struct {
		Type    string   `json:"type"`
		Regions []string `json:"regions"`
	} `json:"geoTaxonomy"`
}

type pricingInfo struct {
	Summary           string `json:"summary"`
	PricingExpression struct {
		UsageUnit            string       `json:"usageUnit"`
		UsageUnitDescription string       `json:"usageUnitDescription"`
		BaseUnit             string       `json:"baseUnit"`
		DisplayQuantity      float64      `json:"displayQuantity"`
		TieredRates          []tieredRate `json:"tieredRates"`
	} `json:"pricingExpression"`
	CurrencyConversionRate float64 `json:"currencyConversionRate"`
	EffectiveTime          string  `json:"effectiveTime"`
}

type tieredRate struct {
	StartUsageAmount float64 `json:"startUsageAmount"`
	UnitPrice        money   `json:"unitPrice"`
}

// money is google.type.Money: units is an int64, which proto3 JSON writes as a string.
type money struct {
	CurrencyCode string      `json:"currencyCode"`
	Units        json.Number `json:"units"`
	Nanos        int64       `json:"nanos"`
}

// value is units + nanos/1e9.
func (m money) value() (float64, error) {
	units := int64(0)
	if m.Units != "" {
		u, err := strconv.ParseInt(string(m.Units), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("units %q: %w", m.Units, err)
		}
		units = u
	}
	if m.Nanos <= -1e9 || m.Nanos >= 1e9 {
		return 0, fmt.Errorf("nanos %d out of range", m.Nanos)
	}
	if (units > 0 && m.Nanos < 0) || (units < 0 && m.Nanos > 0) {
		return 0, fmt.Errorf("units %d and nanos %d differ in sign", units, m.Nanos)
	}
	if units > math.MaxInt64/1_000_000_000-1 || units < math.MinInt64/1_000_000_000+1 {
		return 0, fmt.Errorf("units %d out of range", units)
	}
	// Written as the decimal it is and parsed, so that 2 units 933908000 nanos is
	// exactly the float nearest 2.933908.
	total := units*1e9 + m.Nanos
	sign := ""
	if total < 0 {
		sign, total = "-", -total
	}
	return strconv.ParseFloat(fmt.Sprintf("%s%d.%09d", sign, total/1e9, total%1e9), 64)
}

// page is what one skus response yields: every parser's scrapers.Result (the GPU rows,
// why the SKUs that gave no row were left out, the SKUs it could not read at all), the
// components that priced machine types are summed from, the next page token ("" on
// the last page) and how many SKUs it held.
type page struct {
	scrapers.Result
	Components []component `json:"components,omitempty"`
	Next       string      `json:"next"`
	SKUs       int         `json:"skus"`
}

// rejected is a SKU the parser could not read, kept for quarantine.
type rejected = scrapers.Rejected

// Reasons a SKU yields no row. Every GPU SKU not skipped by one of these yields rows
// whatever its price or unit: ingest decides what is plausible.
const (
	skipNotGPU   = "not_gpu"   // not a GPU SKU (CPU and RAM of GPU machine families are kept as components)
	skipDWS      = "dws"       // Dynamic Workload Scheduler: calendar mode and flex-start
	skipReserved = "reserved"  // "Reserved …" SKUs bill reserved capacity, not a price kind of ours
	skipNoRegion = "no_region" // a component without serviceRegions (cannot be matched to a machine)
)

// Component kinds.
const (
	compGPU = "gpu"
	compCPU = "cpu"
	compRAM = "ram"
)

// component is one published price a machine type's price is summed from: a GPU
// (per GPU-hour), a vCPU (per vCPU-hour) or memory (per GiB-hour) of one family, one
// usage type and one region.
type component struct {
	Kind      string    `json:"kind"`
	Family    string    `json:"family"` // accelerator type for GPUs, "A2", "A3", "G2" … for CPU/RAM
	Pricing   string    `json:"pricing"`
	Region    string    `json:"region"`
	SkuID     string    `json:"sku_id"`
	Price     float64   `json:"price"`
	Currency  string    `json:"currency"`
	UsageUnit string    `json:"usage_unit"`
	GPUName   string    `json:"gpu_name,omitempty"`
	Effective time.Time `json:"effective"`
}

var dwsRE = regexp.MustCompile(`(?i)\bDWS\b|dynamic workload scheduler|calendar mode|flex[- ]start|defined duration`)

// parseSkus turns one services.skus.list response into GPU rows and machine
// components. It is pure: rows carry observedAt and no source URL (Collect sets it).
func parseSkus(r io.Reader, observedAt time.Time) (page, error) {
	var top map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&top); err != nil {
		return page{}, fmt.Errorf("gcp: decoding response: %w", err)
	}
	if top == nil {
		return page{}, fmt.Errorf("gcp: decoding response: not a JSON object")
	}
	var env skusPage
	if raw, ok := top["skus"]; ok {
		if err := json.Unmarshal(raw, &env.Skus); err != nil {
			return page{}, fmt.Errorf("gcp: decoding response: skus: %w", err)
		}
	}
	if raw, ok := top["nextPageToken"]; ok {
		if err := json.Unmarshal(raw, &env.NextPageToken); err != nil {
			return page{}, fmt.Errorf("gcp: decoding response: nextPageToken: %w", err)
		}
	}
	if env.Skus == nil {
		// proto3 JSON leaves an empty "skus" and an empty "nextPageToken" out, so the
		// empty last page is {}. An object with other fields and no skus is not a
		// skus response (an error body, or a changed layout).
		var other []string
		for k := range top {
			if k != "nextPageToken" {
				other = append(other, k)
			}
		}
		if len(other) > 0 {
			slices.Sort(other)
			return page{}, fmt.Errorf("gcp: response has no skus array (has %q)", other)
		}
		if env.NextPageToken != "" {
			return page{}, fmt.Errorf("gcp: response has no skus array but a nextPageToken")
		}
		return page{Result: scrapers.Result{Rows: []schemas.Observation{}}}, nil
	}
	p := page{SKUs: len(*env.Skus), Next: env.NextPageToken, Result: scrapers.Result{Rows: []schemas.Observation{}}}
	for _, raw := range *env.Skus {
		var s sku
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&s); err != nil {
			p.Rejects = append(p.Rejects, rejected{Raw: string(raw), Reason: "gcp: sku: " + err.Error()})
			continue
		}
		rows, comps, reason, err := skuRows(s, observedAt)
		if err != nil {
			p.Rejects = append(
				p.Rejects,
				rejected{Raw: string(raw), Reason: "gcp: sku " + s.SkuID + ": " + err.Error()},
			)
			continue
		}
		if reason != "" {
			if p.Skipped == nil {
				p.Skipped = map[string]int{}
			}
			p.Skipped[reason]++
		}
		p.Rows = append(p.Rows, rows...)
		p.Components = append(p.Components, comps...)
	}
	return p, nil
}

// isGPU reports whether a SKU prices a GPU.
func isGPU(s sku) bool {
	if s.Category.ResourceGroup == "GPU" {
		return true
	}
	d := strings.ToLower(s.Description)
	return s.Category.ResourceFamily == "Compute" && s.Category.ResourceGroup != "CPU" &&
		s.Category.ResourceGroup != "RAM" && strings.Contains(d, "nvidia ") && strings.Contains(d, " gpu")
}

// pricingOf maps a usage type to a pricing kind. GCP bills Spot VMs under the
// Preemptible usage type. An unknown usage type is passed on prefixed, for ingest to
// quarantine.
func pricingOf(usageType string) string {
	switch usageType {
	case "OnDemand":
		return schemas.OnDemand
	case "Preemptible":
		return schemas.Spot
	case "Commit1Yr":
		return schemas.Reserved1Y
	case "Commit3Yr":
		return schemas.Reserved3Y
	}
	return "gcp_usage:" + usageType
}

// skuRows maps one SKU to its GPU rows (one per service region) and its components, or
// names why it has none. An error means the SKU is unreadable.
func skuRows(s sku, observedAt time.Time) ([]schemas.Observation, []component, string, error) {
	gpu := isGPU(s)
	group := s.Category.ResourceGroup
	if !gpu && group != "CPU" && group != "RAM" {
		return nil, nil, skipNotGPU, nil
	}
	if dwsRE.MatchString(s.Description) {
		return nil, nil, skipDWS, nil
	}
	if strings.HasPrefix(s.Description, "Reserved ") {
		return nil, nil, skipReserved, nil
	}
	pricing := pricingOf(s.Category.UsageType)
	pr, err := priceOf(s.PricingInfo)
	if err != nil {
		return nil, nil, "", err
	}
	effective := observedAt
	if len(s.PricingInfo) > 0 {
		if t, err := time.Parse(time.RFC3339Nano, s.PricingInfo[0].EffectiveTime); err == nil {
			effective = t.UTC()
		}
	}
	if !gpu {
		family := familyOf(s.Description)
		if !machineFamilies[family] {
			return nil, nil, skipNotGPU, nil
		}
		if len(s.ServiceRegions) == 0 {
			return nil, nil, skipNoRegion, nil
		}
		kind := compCPU
		if group == "RAM" {
			kind = compRAM
		}
		var comps []component
		for _, region := range s.ServiceRegions {
			comps = append(comps, component{
				Kind: kind, Family: family, Pricing: pricing, Region: region, SkuID: s.SkuID,
				Price: pr.price, Currency: pr.currency, UsageUnit: pr.usageUnit, Effective: effective,
			})
		}
		return nil, comps, "", nil
	}

	name := gpuNameOf(s.Description)
	acc := acceleratorOf(name)
	unit := schemas.UnitGPUHour
	if pr.usageUnit != "h" {
		unit = pr.usageUnit // verbatim: ingest quarantines an unknown unit
	}
	regions := s.ServiceRegions
	if len(regions) == 0 {
		regions = []string{""}
	}
	var rows []schemas.Observation
	var comps []component
	for _, region := range regions {
		o := schemas.Observation{
			ObservedAt:  observedAt,
			EffectiveAt: effective,
			Provider:    "gcp",
			SKU:         acc.Type,
			Region:      region,
			GPUName:     name,
			GPUCount:    1,
			GPUMemoryGB: acc.MemGB,
			Pricing:     pricing,
			Currency:    pr.currency,
			PriceNative: pr.price,
			Unit:        unit,
			SourceKind:  schemas.SourceAPI,
			// An accelerator SKU prices the GPU alone; the VM it attaches to is billed
			// apart. The machine-type rows below are whole instances.
			PriceScope: schemas.ScopeGPUOnly,
			Attrs: map[string]string{
				"skuId":       s.SkuID,
				"description": s.Description,
				"usageType":   s.Category.UsageType,
			},
		}
		if pr.text != "" {
			o.Attrs["price_text"] = pr.text
		}
		if pr.tierStart != 0 {
			o.Attrs["tier_start_usage_amount"] = strconv.FormatFloat(pr.tierStart, 'f', -1, 64)
		}
		rows = append(rows, o)
		if region != "" {
			comps = append(comps, component{
				Kind: compGPU, Family: acc.Type, Pricing: pricing, Region: region, SkuID: s.SkuID,
				Price: pr.price, Currency: pr.currency, UsageUnit: pr.usageUnit, GPUName: name, Effective: effective,
			})
		}
	}
	return rows, comps, "", nil
}

// skuPrice is the price read from a SKU's pricing info.
type skuPrice struct {
	price     float64
	currency  string
	usageUnit string
	tierStart float64 // startUsageAmount of the tier used, when not 0
	text      string  // why the price is 0 when the SKU states none
}

// priceOf reads the current price: pricingInfo[0] (the API returns only the current
// pricing unless a time range is asked for), the tier starting at usage 0. When that
// tier is free (0) and a later tier is not, the first non-zero tier is used and its
// start recorded: a free allowance is not the price. A SKU with no pricing or no tiers
// has price 0 and says so in price_text.
func priceOf(infos []pricingInfo) (skuPrice, error) {
	if len(infos) == 0 {
		return skuPrice{text: "no pricingInfo"}, nil
	}
	pe := infos[0].PricingExpression
	out := skuPrice{usageUnit: pe.UsageUnit}
	if len(pe.TieredRates) == 0 {
		out.text = "no tieredRates"
		return out, nil
	}
	rates := slices.Clone(pe.TieredRates)
	slices.SortStableFunc(rates, func(a, b tieredRate) int {
		switch {
		case a.StartUsageAmount < b.StartUsageAmount:
			return -1
		case a.StartUsageAmount > b.StartUsageAmount:
			return 1
		}
		return 0
	})
	chosen := rates[0]
	v, err := chosen.UnitPrice.value()
	if err != nil {
		return skuPrice{}, err
	}
	if v == 0 {
		for _, r := range rates[1:] {
			w, err := r.UnitPrice.value()
			if err != nil {
				return skuPrice{}, err
			}
			if w != 0 {
				chosen, v = r, w
				break
			}
		}
	}
	out.price = v
	out.currency = chosen.UnitPrice.CurrencyCode
	out.tierStart = chosen.StartUsageAmount
	return out, nil
}

// descPrefixes are the usage-type words GCP puts before a SKU's resource name.
var descPrefixes = []string{"Commitment v1: ", "Commitment v2: ", "Commitment: ", "Spot Preemptible ", "Preemptible "}

// trimUsagePrefix removes the usage-type words from a description.
func trimUsagePrefix(d string) string {
	for changed := true; changed; {
		changed = false
		for _, p := range descPrefixes {
			if rest, ok := strings.CutPrefix(d, p); ok {
				d, changed = rest, true
			}
		}
	}
	return d
}

// cutAtFirst cuts s at the earliest of the markers.
func cutAtFirst(s string, markers ...string) string {
	end := len(s)
	for _, m := range markers {
		if i := strings.Index(s, m); i >= 0 && i < end {
			end = i
		}
	}
	return strings.TrimSpace(s[:end])
}

// gpuNameOf reads the GPU name from a GPU SKU description:
// "Nvidia Tesla A100 80GB GPU attached to Spot Preemptible VMs running in Americas" →
// "Nvidia Tesla A100 80GB"; "Commitment v1: Nvidia L4 GPU in Americas for 1 Year" →
// "Nvidia L4"; "RTX 6000 96GB running in Iowa" → "RTX 6000 96GB".
func gpuNameOf(desc string) string {
	return cutAtFirst(trimUsagePrefix(desc), " GPU", " running in", " attached to", " in ", " for ")
}

// familyOf reads the machine family from a CPU or RAM SKU description:
// "Spot Preemptible A2 Instance Core running in Americas" → "A2";
// "Commitment v1: A3 Cpu in Americas for 1 Year" → "A3".
func familyOf(desc string) string {
	return cutAtFirst(
		trimUsagePrefix(desc),
		" Instance",
		" Cpu",
		" Ram",
		" Core",
		" Memory",
		" running in",
		" in ",
		" for ",
	)
}

// accelerator is a GCP accelerator type (the name gcloud and the API use).
type accelerator struct {
	Type  string
	MemGB float64
}

// accelerators maps a normalised GPU name (lower case, without "nvidia" and "tesla")
// to GCP's accelerator type and the memory of one GPU, from GCP's GPU documentation.
var accelerators = map[string]accelerator{
	"a100":                     {"nvidia-tesla-a100", 40},
	"a100 40gb":                {"nvidia-tesla-a100", 40},
	"a100 80gb":                {"nvidia-a100-80gb", 80},
	"h100":                     {"nvidia-h100-80gb", 80},
	"h100 80gb":                {"nvidia-h100-80gb", 80},
	"h100 80gb mega":           {"nvidia-h100-mega-80gb", 80},
	"h100 mega 80gb":           {"nvidia-h100-mega-80gb", 80},
	"h100 mega":                {"nvidia-h100-mega-80gb", 80},
	"h200":                     {"nvidia-h200-141gb", 141},
	"h200 141gb":               {"nvidia-h200-141gb", 141},
	"b200":                     {"nvidia-b200", 180},
	"b200 180gb":               {"nvidia-b200", 180},
	"gb200":                    {"nvidia-gb200", 0},
	"l4":                       {"nvidia-l4", 24},
	"l4 virtual workstation":   {"nvidia-l4-vws", 24},
	"t4":                       {"nvidia-tesla-t4", 16},
	"t4 virtual workstation":   {"nvidia-tesla-t4-vws", 16},
	"v100":                     {"nvidia-tesla-v100", 16},
	"p100":                     {"nvidia-tesla-p100", 16},
	"p100 virtual workstation": {"nvidia-tesla-p100-vws", 16},
	"p4":                       {"nvidia-tesla-p4", 8},
	"p4 virtual workstation":   {"nvidia-tesla-p4-vws", 8},
	"k80":                      {"nvidia-tesla-k80", 12},
	"rtx 6000 96gb":            {"nvidia-rtx-pro-6000", 96},
	"rtx pro 6000":             {"nvidia-rtx-pro-6000", 96},
	"rtx pro 6000 96gb":        {"nvidia-rtx-pro-6000", 96},
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// normGPU lower-cases a GPU name and drops the brand words.
func normGPU(name string) string {
	var keep []string
	for _, w := range strings.Fields(strings.ToLower(name)) {
		switch w {
		case "nvidia", "tesla", "gpu", "gpus":
			continue
		}
		keep = append(keep, w)
	}
	return strings.Join(keep, " ")
}

// acceleratorOf maps a GPU name to its accelerator type; a name it does not know gets
// a slug of itself ("Nvidia X300 90GB" → "nvidia-x300-90gb") and memory 0.
func acceleratorOf(name string) accelerator {
	if a, ok := accelerators[normGPU(name)]; ok {
		return a
	}
	return accelerator{Type: strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")}
}

// machine is a machine type that bundles GPUs: its GPUs, vCPUs and memory, from GCP's
// accelerator-optimized machine type tables. Family is the word its CPU and RAM SKUs
// start with ("A2 Instance Core running in …").
type machine struct {
	Name   string
	Family string
	Accel  string
	GPUs   int
	VCPUs  int
	MemGB  float64
}

var machines = []machine{
	{"a2-highgpu-1g", "A2", "nvidia-tesla-a100", 1, 12, 85},
	{"a2-highgpu-2g", "A2", "nvidia-tesla-a100", 2, 24, 170},
	{"a2-highgpu-4g", "A2", "nvidia-tesla-a100", 4, 48, 340},
	{"a2-highgpu-8g", "A2", "nvidia-tesla-a100", 8, 96, 680},
	{"a2-megagpu-16g", "A2", "nvidia-tesla-a100", 16, 96, 1360},
	{"a2-ultragpu-1g", "A2", "nvidia-a100-80gb", 1, 12, 170},
	{"a2-ultragpu-2g", "A2", "nvidia-a100-80gb", 2, 24, 340},
	{"a2-ultragpu-4g", "A2", "nvidia-a100-80gb", 4, 48, 680},
	{"a2-ultragpu-8g", "A2", "nvidia-a100-80gb", 8, 96, 1360},
	{"a3-highgpu-1g", "A3", "nvidia-h100-80gb", 1, 26, 234},
	{"a3-highgpu-2g", "A3", "nvidia-h100-80gb", 2, 52, 468},
	{"a3-highgpu-4g", "A3", "nvidia-h100-80gb", 4, 104, 936},
	{"a3-highgpu-8g", "A3", "nvidia-h100-80gb", 8, 208, 1872},
	{"a3-megagpu-8g", "A3 Mega", "nvidia-h100-mega-80gb", 8, 208, 1872},
	{"a3-ultragpu-8g", "A3 Ultra", "nvidia-h200-141gb", 8, 224, 2952},
	{"a4-highgpu-8g", "A4", "nvidia-b200", 8, 224, 3968},
	{"g2-standard-4", "G2", "nvidia-l4", 1, 4, 16},
	{"g2-standard-8", "G2", "nvidia-l4", 1, 8, 32},
	{"g2-standard-12", "G2", "nvidia-l4", 1, 12, 48},
	{"g2-standard-16", "G2", "nvidia-l4", 1, 16, 64},
	{"g2-standard-24", "G2", "nvidia-l4", 2, 24, 96},
	{"g2-standard-32", "G2", "nvidia-l4", 1, 32, 128},
	{"g2-standard-48", "G2", "nvidia-l4", 4, 48, 192},
	{"g2-standard-96", "G2", "nvidia-l4", 8, 96, 384},
}

// machineFamilies are the families whose CPU and RAM SKUs are kept as components.
var machineFamilies = func() map[string]bool {
	m := map[string]bool{}
	for _, mt := range machines {
		m[mt.Family] = true
	}
	return m
}()

// deriveMachines prices every machine type of the table in every region and usage type
// where all three of its components are published: GPUs × the GPU SKU's price +
// vCPUs × the family's core price + GiB × the family's RAM price, all per hour, in one
// currency. The rows are published prices summed, not estimates: SourceKind stays api
// and Attrs["derived_from"] names the three SKU ids. It also returns how many
// (machine, region, pricing) combinations had a GPU price but lacked a component.
func deriveMachines(comps []component, observedAt time.Time) ([]schemas.Observation, int) {
	index := map[string]component{}
	key := func(kind, family, pricing, region string) string {
		return kind + "|" + family + "|" + pricing + "|" + region
	}
	var gpuKeys []component
	for _, c := range comps {
		k := key(c.Kind, c.Family, c.Pricing, c.Region)
		if _, dup := index[k]; dup {
			continue // the first SKU in API order wins
		}
		index[k] = c
		if c.Kind == compGPU {
			gpuKeys = append(gpuKeys, c)
		}
	}
	slices.SortFunc(gpuKeys, func(a, b component) int {
		return strings.Compare(a.Family+"|"+a.Region+"|"+a.Pricing, b.Family+"|"+b.Region+"|"+b.Pricing)
	})
	rows := []schemas.Observation{}
	incomplete := 0
	for _, mt := range machines {
		for _, g := range gpuKeys {
			if g.Family != mt.Accel {
				continue
			}
			cpu, okC := index[key(compCPU, mt.Family, g.Pricing, g.Region)]
			ram, okR := index[key(compRAM, mt.Family, g.Pricing, g.Region)]
			if !okC || !okR || g.UsageUnit != "h" || cpu.UsageUnit != "h" || ram.UsageUnit != "GiBy.h" ||
				cpu.Currency != g.Currency || ram.Currency != g.Currency {
				incomplete++
				continue
			}
			price := float64(mt.GPUs)*g.Price + float64(mt.VCPUs)*cpu.Price + mt.MemGB*ram.Price
			price = math.Round(price*1e9) / 1e9
			eff := g.Effective
			for _, t := range []time.Time{cpu.Effective, ram.Effective} {
				if t.After(eff) {
					eff = t
				}
			}
			rows = append(rows, schemas.Observation{
				ObservedAt:  observedAt,
				EffectiveAt: eff,
				Provider:    "gcp",
				SKU:         mt.Name,
				Region:      g.Region,
				GPUName:     g.GPUName,
				GPUCount:    float64(mt.GPUs),
				GPUMemoryGB: accelMem(mt.Accel),
				Pricing:     g.Pricing,
				Currency:    g.Currency,
				PriceNative: price,
				Unit:        schemas.UnitHour,
				SourceKind:  schemas.SourceAPI,
				Attrs: map[string]string{
					"derived_from": g.SkuID + "," + cpu.SkuID + "," + ram.SkuID,
					"formula": fmt.Sprintf(
						"%d × gpu + %d × core + %s GiB × ram",
						mt.GPUs,
						mt.VCPUs,
						fmtNum(mt.MemGB),
					),
					"gpu_price":  fmtNum(g.Price),
					"core_price": fmtNum(cpu.Price),
					"ram_price":  fmtNum(ram.Price),
					"vcpus":      strconv.Itoa(mt.VCPUs),
					"memory_gb":  fmtNum(mt.MemGB),
				},
			})
		}
	}
	return rows, incomplete
}

func accelMem(t string) float64 {
	for _, a := range accelerators {
		if a.Type == t {
			return a.MemGB
		}
	}
	return 0
}

func fmtNum(f float64) string { return schemas.FormatNum(f) }

package oci

import (
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

// envelope is one response of the price list API. items is always there; hasMore,
// limit, offset, count and links are the paging fields of Oracle REST Data Services,
// read when the API sends them.
type envelope struct {
	Items   *[]json.RawMessage `json:"items"`
	HasMore bool               `json:"hasMore"`
	Limit   int                `json:"limit"`
	Offset  int                `json:"offset"`
	Count   int                `json:"count"`
	Links   []link             `json:"links"`
}

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// item is one part of the price list.
type item struct {
	PartNumber                string         `json:"partNumber"`
	DisplayName               string         `json:"displayName"`
	MetricName                string         `json:"metricName"`
	ServiceCategory           string         `json:"serviceCategory"`
	CurrencyCodeLocalizations []localization `json:"currencyCodeLocalizations"`
}

type localization struct {
	CurrencyCode string  `json:"currencyCode"`
	Prices       []price `json:"prices"`
}

type price struct {
	Model     string   `json:"model"`
	Value     *float64 `json:"value"`
	RangeMin  *float64 `json:"rangeMin"`
	RangeMax  *float64 `json:"rangeMax"`
	RangeUnit string   `json:"rangeUnit"`
}

// page is what one response yields: every parser's scrapers.Result (the rows, why
// the items that gave no row were left out, the items it could not read), where the
// next page is (a link, or an offset when hasMore is set without a next link; -1 for
// none) and how many items it held.
type page struct {
	scrapers.Result
	NextLink   string `json:"next_link,omitempty"`
	NextOffset int    `json:"next_offset"`
	Items      int    `json:"items"`
}

type rejected = scrapers.Rejected

// skipNotGPU is why a part that is not a GPU gives no row.
const skipNotGPU = "not_gpu"

// PAYG is the price model of the pay-as-you-go list price.
const PAYG = "PAY_AS_YOU_GO"

// PreemptibleRule names the rule the derived spot rows follow: OCI preemptible
// capacity is billed at 50% of the on-demand price (Oracle's documented discount).
const PreemptibleRule = "oci-preemptible-50pct-of-on-demand"

// PreemptibleFactor is the share of the on-demand price preemptible capacity costs.
const PreemptibleFactor = 0.5

// parsePage turns one price list response into rows for the GPU parts in currency. It
// is pure: rows carry observedAt and no source URL (Collect sets it).
func parsePage(r io.Reader, currency string, observedAt time.Time) (page, error) {
	var env envelope
	if err := json.NewDecoder(r).Decode(&env); err != nil {
		return page{}, fmt.Errorf("oci: decoding response: %w", err)
	}
	if env.Items == nil {
		return page{}, fmt.Errorf("oci: response has no items array")
	}
	p := page{Items: len(*env.Items), Result: scrapers.Result{Rows: []schemas.Observation{}}, NextOffset: -1}
	if env.HasMore {
		for _, l := range env.Links {
			if l.Rel == "next" && l.Href != "" {
				p.NextLink = l.Href
			}
		}
		if p.NextLink == "" {
			n := env.Count
			if n == 0 {
				n = len(*env.Items)
			}
			p.NextOffset = env.Offset + n
		}
	}
	for _, raw := range *env.Items {
		var it item
		if err := json.Unmarshal(raw, &it); err != nil {
			p.Rejects = append(p.Rejects, rejected{Raw: string(raw), Reason: "oci: item: " + err.Error()})
			continue
		}
		if !isGPU(it) {
			if p.Skipped == nil {
				p.Skipped = map[string]int{}
			}
			p.Skipped[skipNotGPU]++
			continue
		}
		p.Rows = append(p.Rows, itemRows(it, currency, observedAt)...)
	}
	return p, nil
}

// shapeGPUs is the number of GPUs of an OCI shape ("BM.GPU.H100.8" → 8,
// "VM.GPU.A10.1" → 1, "BM.GPU4.8" → 8), 1 for a SKU that names no shape: the
// price list prices one GPU-hour, so an N-GPU shape's row is N GPUs at N × the
// per-GPU price (ingest multiplies a gpu_hour price by the count).
func shapeGPUs(sku string) float64 {
	m := shapeCount.FindStringSubmatch(strings.TrimSpace(sku))
	if m == nil {
		return 1
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 || n > 72 {
		return 1
	}
	return float64(n)
}

var shapeCount = regexp.MustCompile(`(?i)^(?:bm|vm)\.gpu[0-9a-z.-]*\.([0-9]+)$`)

// isGPU reports whether a part prices GPUs.
func isGPU(it item) bool {
	return strings.EqualFold(strings.TrimSpace(it.ServiceCategory), "Compute - GPU") ||
		strings.EqualFold(strings.TrimSpace(it.MetricName), "GPU Per Hour")
}

// itemRows maps a GPU part to its on-demand row and, when that has a price, the
// derived preemptible (spot) row.
func itemRows(it item, currency string, observedAt time.Time) []schemas.Observation {
	sh := shapeOf(it.DisplayName)
	sku := sh.SKU
	if sku == "" {
		sku = it.PartNumber
	}
	unit := schemas.UnitGPUHour
	if !strings.EqualFold(strings.TrimSpace(it.MetricName), "GPU Per Hour") {
		unit = it.MetricName // verbatim: ingest quarantines an unknown unit
	}
	attrs := map[string]string{
		"partNumber":      it.PartNumber,
		"displayName":     it.DisplayName,
		"metricName":      it.MetricName,
		"serviceCategory": it.ServiceCategory,
	}
	if sh.Shapes != "" {
		attrs["oci_shapes"] = sh.Shapes
	}
	od := schemas.Observation{
		ObservedAt:  observedAt,
		EffectiveAt: observedAt,
		Provider:    "oci",
		SKU:         sku,
		Region:      "",
		GPUName:     sh.GPUName,
		GPUCount:    shapeGPUs(sku),
		GPUMemoryGB: sh.MemGB,
		Pricing:     schemas.OnDemand,
		Currency:    currency,
		Unit:        unit,
		SourceKind:  schemas.SourceAPI,
		Attrs:       attrs,
	}
	v, rangeMin, text := paygPrice(it, currency)
	od.PriceNative = v
	if text != "" {
		od.Attrs["price_text"] = text
	}
	if rangeMin != 0 {
		od.Attrs["range_min"] = schemas.FormatNum(rangeMin)
	}
	rows := []schemas.Observation{od}
	if text == "" && v > 0 {
		sp := od
		sp.Attrs = map[string]string{}
		for k, val := range od.Attrs {
			sp.Attrs[k] = val
		}
		sp.Pricing = schemas.Spot
		sp.PriceNative = math.Round(v*PreemptibleFactor*1e9) / 1e9
		sp.SourceKind = schemas.SourceDerived
		sp.Attrs["rule"] = PreemptibleRule
		sp.Attrs["on_demand_price"] = schemas.FormatNum(v)
		rows = append(rows, sp)
	}
	return rows
}

// paygPrice returns the pay-as-you-go price in currency: the PAY_AS_YOU_GO entry
// starting at usage 0 (or without a range), else the first PAY_AS_YOU_GO entry; when
// that entry is free (0) and a later one is not, the first non-zero one, whose
// rangeMin is returned (a free allowance is not the price). When there is no price it
// returns 0 and says why.
func paygPrice(it item, currency string) (value float64, rangeMin float64, text string) {
	i := slices.IndexFunc(it.CurrencyCodeLocalizations, func(l localization) bool { return l.CurrencyCode == currency })
	if i < 0 {
		return 0, 0, "no " + currency + " prices"
	}
	var payg []price
	for _, p := range it.CurrencyCodeLocalizations[i].Prices {
		if p.Model == PAYG && p.Value != nil {
			payg = append(payg, p)
		}
	}
	if len(payg) == 0 {
		return 0, 0, "no " + PAYG + " price"
	}
	chosen := payg[0]
	for _, p := range payg {
		if p.RangeMin == nil || *p.RangeMin == 0 {
			chosen = p
			break
		}
	}
	if *chosen.Value == 0 {
		for _, p := range payg {
			if *p.Value != 0 {
				chosen = p
				break
			}
		}
	}
	if chosen.RangeMin != nil {
		rangeMin = *chosen.RangeMin
	}
	return *chosen.Value, rangeMin, ""
}

// shape is what a part's display name tells: the OCI shape (or shape family) it
// prices, the GPU, the memory of one GPU, and every shape the part covers.
type shape struct {
	SKU     string
	GPUName string
	MemGB   float64
	Shapes  string
}

// shapes maps a normalised display name (lower case, single spaces, without the
// "Oracle Cloud Infrastructure - " and "Compute - " prefixes) to its shape, from OCI's
// GPU shape documentation. A part that covers several shapes of one GPU is named by its
// largest (bare metal) shape, the others listed in Attrs["oci_shapes"].
var shapes = map[string]shape{
	"bare metal gpu standard - x7":      {"BM.GPU2.2", "NVIDIA Tesla P100", 16, "BM.GPU2.2"},
	"virtual machine gpu standard - x7": {"VM.GPU2.1", "NVIDIA Tesla P100", 16, "VM.GPU2.1"},
	"gpu standard - v2":                 {"BM.GPU3.8", "NVIDIA Tesla V100", 16, "VM.GPU3.1,VM.GPU3.2,VM.GPU3.4,BM.GPU3.8"},
	"gpu - e3":                          {"BM.GPU4.8", "NVIDIA A100 40GB", 40, "BM.GPU4.8"},
	"gpu - a100 - v2":                   {"BM.GPU.A100-v2.8", "NVIDIA A100 80GB", 80, "BM.GPU.A100-v2.8"},
	"gpu - a10":                         {"BM.GPU.A10.4", "NVIDIA A10", 24, "VM.GPU.A10.1,VM.GPU.A10.2,BM.GPU.A10.4"},
	"gpu - h100":                        {"BM.GPU.H100.8", "NVIDIA H100", 80, "BM.GPU.H100.8"},
	"gpu - h200":                        {"BM.GPU.H200.8", "NVIDIA H200", 141, "BM.GPU.H200.8"},
	"gpu - l40s":                        {"BM.GPU.L40S.4", "NVIDIA L40S", 48, "BM.GPU.L40S.4"},
	"gpu - mi300x":                      {"BM.GPU.MI300X.8", "AMD Instinct MI300X", 192, "BM.GPU.MI300X.8"},
	"gpu - b200":                        {"BM.GPU.B200.8", "NVIDIA B200", 0, "BM.GPU.B200.8"},
	"gpu - gb200":                       {"BM.GPU.GB200.4", "NVIDIA GB200", 0, "BM.GPU.GB200.4"},
}

// normName lower-cases a display name, collapses its spaces and drops the
// "Oracle Cloud Infrastructure - " and "Compute - " prefixes.
func normName(d string) string {
	s := strings.ToLower(strings.Join(strings.Fields(d), " "))
	s = strings.TrimPrefix(s, "oracle cloud infrastructure - ")
	s = strings.TrimPrefix(s, "compute - ")
	return s
}

// shapeOf maps a display name to its shape. An unknown name yields no SKU (the caller
// uses the part number) and, as the GPU name, the text after the last "GPU - " or the
// display name itself.
func shapeOf(displayName string) shape {
	if s, ok := shapes[normName(displayName)]; ok {
		return s
	}
	clean := strings.Join(strings.Fields(displayName), " ")
	if i := strings.LastIndex(strings.ToUpper(clean), "GPU - "); i >= 0 {
		return shape{GPUName: strings.TrimSpace(clean[i+len("GPU - "):])}
	}
	return shape{GPUName: clean}
}

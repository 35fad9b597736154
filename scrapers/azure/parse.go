package azure

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// envelope is one page of the Retail Prices API.
type envelope struct {
	BillingCurrency    string             `json:"BillingCurrency"`
	CustomerEntityID   string             `json:"CustomerEntityId"`
	CustomerEntityType string             `json:"CustomerEntityType"`
	Items              *[]json.RawMessage `json:"Items"` // decoded one by one: one bad meter is rejected alone
	NextPageLink       *string            `json:"NextPageLink"`
	Count              int                `json:"Count"`
}

// item is one price meter, in the API's field layout (api-version 2023-01-01-preview
// adds savingsPlan to consumption meters that a savings plan covers).
type item struct {
	CurrencyCode         string        `json:"currencyCode"`
	TierMinimumUnits     float64       `json:"tierMinimumUnits"`
	ReservationTerm      string        `json:"reservationTerm"`
	RetailPrice          *float64      `json:"retailPrice"`
	UnitPrice            *float64      `json:"unitPrice"`
	ArmRegionName        string        `json:"armRegionName"`
	Location             string        `json:"location"`
	EffectiveStartDate   string        `json:"effectiveStartDate"`
	MeterID              string        `json:"meterId"`
	MeterName            string        `json:"meterName"`
	ProductID            string        `json:"productId"`
	SkuID                string        `json:"skuId"`
	ProductName          string        `json:"productName"`
	SkuName              string        `json:"skuName"`
	ServiceName          string        `json:"serviceName"`
	ServiceID            string        `json:"serviceId"`
	ServiceFamily        string        `json:"serviceFamily"`
	UnitOfMeasure        string        `json:"unitOfMeasure"`
	Type                 string        `json:"type"`
	IsPrimaryMeterRegion bool          `json:"isPrimaryMeterRegion"`
	ArmSkuName           string        `json:"armSkuName"`
	SavingsPlan          []savingsPlan `json:"savingsPlan"`
}

type savingsPlan struct {
	UnitPrice   *float64 `json:"unitPrice"`
	RetailPrice *float64 `json:"retailPrice"`
	Term        string   `json:"term"`
}

// page is what one response yields: every parser's scrapers.Result (the rows, and why
// the items that gave no row were left out), the next link ("" on the last page)
// and how many items it held.
type page struct {
	scrapers.Result
	Next  string `json:"next"`
	Items int    `json:"items"`
}

// Reasons an item yields no row. Every other item yields at least one row, whatever
// its price or unit: ingest decides what is plausible.
const (
	skipWindows = "windows" // the price includes a Windows licence
	skipDevTest = "devtest" // Dev/Test pricing needs a Dev/Test subscription offer
)

// Attrs["azure_priority"] values.
const (
	priorityRegular = "regular"
	prioritySpot    = "spot"
	priorityLow     = "low"
)

// lowPrioritySuffix is appended to the SKU of a Low Priority meter, as Azure appends
// it to the meter and SKU names, so that low-priority prices form their own spot series.
const lowPrioritySuffix = " Low Priority"

// parsePage turns one Retail Prices API response into observations. It is pure: rows
// carry observedAt and no source URL (Collect sets it).
func parsePage(r io.Reader, observedAt time.Time) (page, error) {
	var env envelope
	dec := json.NewDecoder(r)
	if err := dec.Decode(&env); err != nil {
		return page{}, fmt.Errorf("azure: decoding response: %w", err)
	}
	if env.Items == nil {
		return page{}, fmt.Errorf("azure: response has no Items array")
	}
	p := page{Items: len(*env.Items), Result: scrapers.Result{Rows: []schemas.Observation{}}}
	if env.NextPageLink != nil {
		p.Next = *env.NextPageLink
	}
	for _, msg := range *env.Items {
		var it item
		if err := json.Unmarshal(msg, &it); err != nil {
			// One meter with a field of the wrong type (a price "N/A") is quarantined;
			// the others are read.
			p.Reject(string(msg), fmt.Sprintf("azure: meter not readable: %v", err))
			continue
		}
		rows, reason := itemRows(it, env.BillingCurrency, observedAt)
		if reason != "" {
			if p.Skipped == nil {
				p.Skipped = map[string]int{}
			}
			p.Skipped[reason]++
			continue
		}
		p.Rows = append(p.Rows, rows...)
	}
	return p, nil
}

// itemRows maps one meter to its rows, or names why it has none.
func itemRows(it item, billingCurrency string, observedAt time.Time) ([]schemas.Observation, string) {
	if strings.Contains(strings.ToLower(it.ProductName), "windows") {
		return nil, skipWindows
	}
	if strings.HasPrefix(it.Type, "DevTest") {
		return nil, skipDevTest
	}
	spec := parseArmSku(it.ArmSkuName)
	currency := it.CurrencyCode
	if currency == "" {
		currency = billingCurrency
	}
	effective := observedAt
	if t, err := time.Parse(time.RFC3339, it.EffectiveStartDate); err == nil {
		effective = t.UTC()
	}
	base := schemas.Observation{
		ObservedAt:   observedAt,
		EffectiveAt:  effective,
		Provider:     "azure",
		SKU:          it.ArmSkuName,
		Region:       it.ArmRegionName,
		GPUName:      spec.GPUName,
		GPUCount:     spec.GPUCount,
		GPUMemoryGB:  spec.MemoryGB,
		Currency:     currency,
		Interconnect: spec.Interconnect,
		SourceKind:   schemas.SourceAPI,
	}
	attrs := func() map[string]string {
		a := map[string]string{
			"meterId":     it.MeterID,
			"meterName":   it.MeterName,
			"skuName":     it.SkuName,
			"productName": it.ProductName,
			"location":    it.Location,
		}
		if it.TierMinimumUnits != 0 {
			a["tierMinimumUnits"] = strconv.FormatFloat(it.TierMinimumUnits, 'f', -1, 64)
		}
		return a
	}
	price := priceOf(it.RetailPrice, it.UnitPrice)

	switch it.Type {
	case "Consumption":
		o := base
		o.Attrs = attrs()
		o.PriceNative = price
		o.Unit = hourUnit(it.UnitOfMeasure, schemas.UnitHour)
		switch {
		case strings.HasSuffix(it.MeterName, " Spot"):
			o.Pricing = schemas.Spot
			o.Attrs["azure_priority"] = prioritySpot
		case strings.HasSuffix(it.MeterName, lowPrioritySuffix):
			// Low Priority VMs are Azure's batch product, a different product from
			// Spot (fixed discount, different eviction): their own pricing kind.
			o.Pricing = schemas.LowPriority
			o.SKU = it.ArmSkuName + lowPrioritySuffix
			o.Attrs["azure_priority"] = priorityLow
		default:
			o.Pricing = schemas.OnDemand
			o.Attrs["azure_priority"] = priorityRegular
		}
		rows := []schemas.Observation{o}
		// Savings plans are an hourly rate under a 1- or 3-year spend commitment:
		// commitment_12m / commitment_36m, kept apart from reservations.
		if o.Pricing == schemas.OnDemand {
			for _, sp := range it.SavingsPlan {
				s := base
				s.Attrs = attrs()
				s.Attrs["azure_commitment"] = "savings_plan"
				s.Attrs["term"] = sp.Term
				s.Pricing = termPricing(sp.Term, "savings_plan")
				s.PriceNative = priceOf(sp.RetailPrice, sp.UnitPrice)
				s.Unit = hourUnit(it.UnitOfMeasure, schemas.UnitHour)
				rows = append(rows, s)
			}
		}
		return rows, ""
	case "Reservation":
		o := base
		o.Attrs = attrs()
		o.Attrs["azure_commitment"] = "reservation"
		o.Attrs["term"] = it.ReservationTerm
		o.Pricing = termPricing(it.ReservationTerm, "reservation")
		o.PriceNative = price
		// The API writes "1 Hour" on reservations but the price is for the whole term.
		o.Unit = hourUnit(it.UnitOfMeasure, schemas.UnitTerm)
		return []schemas.Observation{o}, ""
	default:
		// An item type this source does not know: pass it on with the type as its
		// pricing kind, so ingest quarantines it where someone will see it.
		o := base
		o.Attrs = attrs()
		o.Pricing = it.Type
		o.PriceNative = price
		o.Unit = hourUnit(it.UnitOfMeasure, schemas.UnitHour)
		return []schemas.Observation{o}, ""
	}
}

// priceOf prefers the retail price and falls back to the unit price; both are
// published and equal for retail meters.
func priceOf(retail, unit *float64) float64 {
	if retail != nil {
		return *retail
	}
	if unit != nil {
		return *unit
	}
	return 0
}

// hourUnit maps "1 Hour" to unit; any other unit of measure is passed on verbatim so
// ingest quarantines it as unknown.
func hourUnit(uom, unit string) string {
	if uom == "1 Hour" {
		return unit
	}
	return uom
}

// termPricing maps a term ("1 Year", "3 Years", "5 Years") to a pricing kind:
// reservations of 1 and 3 years are reserved_1y/reserved_3y, other reservation terms
// and all savings plans are commitment_<n>m. An unreadable term is passed on
// verbatim, prefixed with the kind, for ingest to quarantine.
func termPricing(term, kind string) string {
	years := 0
	if f := strings.Fields(term); len(f) == 2 && strings.HasPrefix(f[1], "Year") {
		years, _ = strconv.Atoi(f[0])
	}
	switch {
	case years <= 0:
		return kind + ":" + term
	case kind == "reservation" && years == 1:
		return schemas.Reserved1Y
	case kind == "reservation" && years == 3:
		return schemas.Reserved3Y
	default:
		return schemas.CommitmentPricing(12 * years)
	}
}

// skuSpec is what an ARM SKU name tells about its GPUs.
type skuSpec struct {
	GPUName      string
	GPUCount     float64
	MemoryGB     float64 // of one whole GPU
	Interconnect string
}

// series describes one Azure GPU VM series: the GPU it carries, its memory, and the
// GPU count of each size (keyed by the vCPU count in the size name), from Azure's
// published size tables. Fractional counts are GPU partitions (NVadsA10 v5 etc.).
type series struct {
	gpu    string
	memGB  float64
	counts map[int]float64
}

// seriesTable is keyed by family|gpu token|version, e.g. "ND|H100|v5", "NC||v3".
var seriesTable = map[string]series{
	"NC||v1":       {"NVIDIA Tesla K80", 12, map[int]float64{6: 1, 12: 2, 24: 4}},
	"NC||v2":       {"NVIDIA Tesla P100", 16, map[int]float64{6: 1, 12: 2, 24: 4}},
	"NC||v3":       {"NVIDIA Tesla V100", 16, map[int]float64{6: 1, 12: 2, 24: 4}},
	"NC|T4|v3":     {"NVIDIA Tesla T4", 16, map[int]float64{4: 1, 8: 1, 16: 1, 64: 4}},
	"NC|A100|v4":   {"NVIDIA A100 PCIe", 80, map[int]float64{24: 1, 48: 2, 96: 4}},
	"NC|H100|v5":   {"NVIDIA H100 NVL", 94, map[int]float64{40: 1, 80: 2}},
	"NCC|H100|v5":  {"NVIDIA H100 NVL", 94, map[int]float64{40: 1}},
	"ND||v1":       {"NVIDIA Tesla P40", 24, map[int]float64{6: 1, 12: 2, 24: 4}},
	"ND||v2":       {"NVIDIA Tesla V100", 32, map[int]float64{40: 8}},
	"ND||v4":       {"NVIDIA A100 SXM", 40, map[int]float64{96: 8}},
	"ND|A100|v4":   {"NVIDIA A100 SXM", 80, map[int]float64{96: 8}},
	"ND|H100|v5":   {"NVIDIA H100 SXM", 80, map[int]float64{96: 8}},
	"ND|H200|v5":   {"NVIDIA H200 SXM", 141, map[int]float64{96: 8}},
	"ND|MI300X|v5": {"AMD Instinct MI300X", 192, map[int]float64{96: 8}},
	"ND|GB200|v6":  {"NVIDIA GB200", 0, map[int]float64{128: 4}},
	"NV||v1":       {"NVIDIA Tesla M60", 8, map[int]float64{6: 1, 12: 2, 24: 4}},
	"NV||v3":       {"NVIDIA Tesla M60", 8, map[int]float64{12: 1, 24: 2, 48: 4}},
	"NV||v4":       {"AMD Radeon Instinct MI25", 16, map[int]float64{4: 1.0 / 8, 8: 1.0 / 4, 16: 1.0 / 2, 32: 1}},
	"NV|A10|v5":    {"NVIDIA A10", 24, map[int]float64{6: 1.0 / 6, 12: 1.0 / 3, 18: 1.0 / 2, 36: 1, 72: 2}},
	"NV|V710|v5":   {"AMD Radeon Pro V710", 24, map[int]float64{4: 1.0 / 6, 8: 1.0 / 3, 12: 1.0 / 2, 24: 1, 28: 1}},
	"NG|V620|v1":   {"AMD Radeon Pro V620", 32, map[int]float64{8: 1.0 / 4, 16: 1.0 / 2, 32: 1}},
}

var (
	sizeRE    = regexp.MustCompile(`^(NCC|N[CDVG])(\d+)([a-z]*)$`)
	versionRE = regexp.MustCompile(`^v\d+$`)
)

// parseArmSku reads the GPU model, count and memory from an ARM SKU name such as
// Standard_ND96isr_H100_v5 (8 × H100 SXM) or Standard_NV6ads_A10_v5 (1/6 of an A10).
// The "r" capability letter is Azure's mark of an RDMA (InfiniBand) size. A series it
// does not know yields an empty spec; a known series with an unknown size keeps the
// GPU name and leaves the count 0.
func parseArmSku(arm string) skuSpec {
	rest, ok := strings.CutPrefix(arm, "Standard_")
	if !ok {
		return skuSpec{}
	}
	parts := strings.Split(rest, "_")
	m := sizeRE.FindStringSubmatch(parts[0])
	if m == nil {
		return skuSpec{}
	}
	family, features := m[1], m[3]
	vcpus, _ := strconv.Atoi(m[2])
	version := "v1"
	tokens := parts[1:]
	if n := len(tokens); n > 0 && versionRE.MatchString(tokens[n-1]) {
		version = tokens[n-1]
		tokens = tokens[:n-1]
	}
	gpu := ""
	for _, t := range tokens {
		if t != "NDR" && t != "xl" {
			gpu = t
		}
	}
	var spec skuSpec
	if strings.Contains(features, "r") {
		spec.Interconnect = schemas.InterconnectInfiniband
	}
	s, ok := seriesTable[family+"|"+gpu+"|"+version]
	if !ok {
		return spec
	}
	spec.GPUName = s.gpu
	spec.MemoryGB = s.memGB
	spec.GPUCount = s.counts[vcpus]
	return spec
}

package aws

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// product is a Price List product: the same object in a GetProducts PriceList item
// and under "products" in a bulk offer file.
type product struct {
	SKU           string            `json:"sku"`
	ProductFamily string            `json:"productFamily"`
	Attributes    map[string]string `json:"attributes"`
}

// offerTerm is one offer term (terms.OnDemand.… or terms.Reserved.…).
type offerTerm struct {
	OfferTermCode   string                    `json:"offerTermCode"`
	SKU             string                    `json:"sku"`
	EffectiveDate   string                    `json:"effectiveDate"`
	PriceDimensions map[string]priceDimension `json:"priceDimensions"`
	TermAttributes  map[string]string         `json:"termAttributes"`
}

type priceDimension struct {
	RateCode     string            `json:"rateCode"`
	Description  string            `json:"description"`
	BeginRange   string            `json:"beginRange"`
	EndRange     string            `json:"endRange"`
	Unit         string            `json:"unit"`
	PricePerUnit map[string]string `json:"pricePerUnit"`
}

// priceListItem is one decoded GetProducts PriceList string. Terms are keyed by
// offer term id ("<sku>.<offerTermCode>").
type priceListItem struct {
	Product         *product                        `json:"product"`
	ServiceCode     string                          `json:"serviceCode"`
	Terms           map[string]map[string]offerTerm `json:"terms"`
	Version         string                          `json:"version"`
	PublicationDate string                          `json:"publicationDate"`
}

// Reasons a product or term yields no row. They are counted, never silent.
const (
	skipNotCompute  = "not_compute_instance" // storage, data transfer, …
	skipNotLinux    = "not_plain_linux"      // Windows, RHEL, SUSE, … or pre-installed software
	skipNotShared   = "not_shared_tenancy"   // dedicated instances and hosts
	skipCapacity    = "capacity_reservation" // capacitystatus other than Used
	skipMarket      = "not_ondemand_market"  // marketoption other than OnDemand (capacity blocks)
	skipNotGPU      = "not_gpu"
	skipConvertible = "convertible_ri" // only standard reserved instances are recorded
	skipTermKind    = "unknown_term_kind"
)

// Purchase options of reserved instances, and the SKU suffix of each. The No Upfront
// price is hourly and keeps the bare instance type; All Upfront and Partial Upfront
// are whole-term prices (unit "term") and get their own series through the suffix.
const (
	noUpfront      = "No Upfront"
	partialUpfront = "Partial Upfront"
	allUpfront     = "All Upfront"
)

// Cancellation is the reserved rows' Attrs["cancellation"], from the EC2 user guide
// (awsdocs/amazon-ec2-user-guide, doc_source/ri-market-concepts-buying.md: "After you
// purchase a Reserved Instance … you cannot cancel your purchase"; ri-market-general.md:
// only Standard Reserved Instances, the ones recorded here, can be sold in the Reserved
// Instance Marketplace, with at least a month of the term left).
const Cancellation = "cannot be cancelled; resale on the RI Marketplace"

var purchaseSuffix = map[string]string{
	noUpfront:      "",
	partialUpfront: ":partial-upfront",
	allUpfront:     ":all-upfront",
}

// wantProduct decides whether a product is a GPU instance of plain Linux, shared
// tenancy, on-demand capacity; it returns the reason when it is not.
func wantProduct(p product) string {
	a := p.Attributes
	switch {
	case !strings.HasPrefix(p.ProductFamily, "Compute Instance") || a["instanceType"] == "":
		return skipNotCompute
	case a["operatingSystem"] != "Linux" || a["preInstalledSw"] != "NA" ||
		(a["licenseModel"] != "" && a["licenseModel"] != "No License required"):
		return skipNotLinux
	case a["tenancy"] != "Shared":
		return skipNotShared
	case a["capacitystatus"] != "" && a["capacitystatus"] != "Used":
		return skipCapacity
	case a["marketoption"] != "" && a["marketoption"] != "OnDemand":
		return skipMarket
	}
	if n, _ := parseNumber(a["gpu"]); n > 0 {
		return ""
	}
	if specOf(a["instanceType"]).Known {
		return ""
	}
	return skipNotGPU
}

// parseNumber reads "8", "0.125" or "640 GB" (the number before the unit).
func parseNumber(s string) (float64, bool) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(f[0], ",", ""), 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// productBase is the part of every row of a product: instance type, region, GPUs.
// The product's gpu attribute is the GPU count and gpuMemory the memory of all its
// GPUs together ("640 GB" on p5.48xlarge); the row carries the memory of one GPU.
// regionHint is used when the product has no regionCode (older files).
func productBase(p product, regionHint string, observedAt time.Time) schemas.Observation {
	a := p.Attributes
	spec := specOf(a["instanceType"])
	count := spec.GPUCount
	if n, ok := parseNumber(a["gpu"]); ok && n > 0 {
		count = n
	}
	mem := spec.MemoryGB
	if total, ok := parseNumber(a["gpuMemory"]); ok && total > 0 && count > 0 {
		mem = total / count
	}
	region := a["regionCode"]
	if region == "" {
		region = regionHint
	}
	attrs := map[string]string{"aws_sku": p.SKU}
	for _, k := range []string{"location", "vcpu", "memory", "gpu", "gpuMemory", "physicalProcessor",
		"networkPerformance", "instanceFamily", "usagetype", "storage"} {
		if v := a[k]; v != "" {
			attrs[k] = v
		}
	}
	return schemas.Observation{
		ObservedAt:   observedAt,
		EffectiveAt:  observedAt,
		Provider:     Provider,
		SKU:          a["instanceType"],
		Region:       region,
		GPUName:      spec.GPUName,
		GPUCount:     count,
		GPUMemoryGB:  mem,
		Interconnect: spec.Interconnect,
		SourceKind:   schemas.SourceAPI,
		Attrs:        attrs,
	}
}

// termRows turns one offer term of a wanted product into rows. kind is "OnDemand" or
// "Reserved". It returns the reason when the term yields none.
func termRows(base schemas.Observation, kind string, t offerTerm) ([]schemas.Observation, string) {
	o := base
	o.Attrs = cloneAttrs(base.Attrs)
	if t.OfferTermCode != "" {
		o.Attrs["offer_term_code"] = t.OfferTermCode
	}
	if at, err := time.Parse(time.RFC3339, t.EffectiveDate); err == nil {
		o.EffectiveAt = at.UTC()
	}
	dims := sortedDims(t.PriceDimensions)
	switch kind {
	case "OnDemand":
		var rows []schemas.Observation
		for _, d := range dims {
			r := o
			r.Attrs = cloneAttrs(o.Attrs)
			r.Pricing = schemas.OnDemand
			r.Currency, r.PriceNative = dimPrice(d, r.Attrs)
			r.Unit = unitOf(d.Unit, schemas.UnitHour)
			rows = append(rows, r)
		}
		return rows, ""
	case "Reserved":
		ta := t.TermAttributes
		if ta["OfferingClass"] != "standard" {
			return nil, skipConvertible
		}
		o.Pricing = leasePricing(ta["LeaseContractLength"])
		po := ta["PurchaseOption"]
		o.Attrs["purchase_option"] = po
		o.Attrs["offering_class"] = ta["OfferingClass"]
		o.Attrs["lease_contract_length"] = ta["LeaseContractLength"]
		o.Attrs["cancellation"] = Cancellation
		suffix, ok := purchaseSuffix[po]
		if !ok {
			// A purchase option this source does not know: its own series, passed on
			// with its dimensions for ingest to quarantine.
			suffix = ":" + strings.ToLower(strings.ReplaceAll(po, " ", "-"))
		}
		o.SKU = base.SKU + suffix
		var hourly, fee *priceDimension
		for i := range dims {
			switch dims[i].Unit {
			case "Hrs":
				hourly = &dims[i]
			case "Quantity":
				fee = &dims[i]
			}
		}
		switch {
		case po == noUpfront && hourly != nil:
			o.Currency, o.PriceNative = dimPrice(*hourly, o.Attrs)
			o.Unit = schemas.UnitHour
		case po == allUpfront && fee != nil:
			o.Currency, o.PriceNative = dimPrice(*fee, o.Attrs)
			o.Unit = schemas.UnitTerm
			if hourly != nil {
				_, h := dimPrice(*hourly, map[string]string{})
				o.Attrs["hourly_fee"] = schemas.FormatNum(h)
			}
		case po == partialUpfront && fee != nil && hourly != nil:
			// The whole-term cost: the upfront fee plus the hourly fee over the term.
			cur, f := dimPrice(*fee, o.Attrs)
			_, h := dimPrice(*hourly, o.Attrs)
			o.Currency = cur
			o.PriceNative = f + h*schemas.TermHours(o.Pricing)
			o.Unit = schemas.UnitTerm
			o.Attrs["upfront_fee"] = schemas.FormatNum(f)
			o.Attrs["hourly_fee"] = schemas.FormatNum(h)
		default:
			// Dimensions that do not fit the purchase option: one row per dimension,
			// units verbatim, so ingest quarantines them where someone will see them.
			var rows []schemas.Observation
			for _, d := range dims {
				r := o
				r.Attrs = cloneAttrs(o.Attrs)
				r.Currency, r.PriceNative = dimPrice(d, r.Attrs)
				r.Unit = d.Unit
				rows = append(rows, r)
			}
			return rows, ""
		}
		return []schemas.Observation{o}, ""
	}
	return nil, skipTermKind
}

// leasePricing maps LeaseContractLength to a pricing kind; anything but 1yr/3yr is
// passed on prefixed, for ingest to quarantine.
func leasePricing(l string) string {
	switch l {
	case "1yr":
		return schemas.Reserved1Y
	case "3yr":
		return schemas.Reserved3Y
	}
	return "reserved:" + l
}

// dimPrice returns the currency and price of a dimension: USD when published, else
// the first currency in name order (CNY in the China regions). A price that is not a
// number is 0 with the text kept in attrs["price_text"].
func dimPrice(d priceDimension, attrs map[string]string) (string, float64) {
	cur := "USD"
	text, ok := d.PricePerUnit[cur]
	if !ok {
		keys := make([]string, 0, len(d.PricePerUnit))
		for k := range d.PricePerUnit {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if len(keys) == 0 {
			attrs["price_text"] = ""
			return "", 0
		}
		cur, text = keys[0], d.PricePerUnit[keys[0]]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil {
		attrs["price_text"] = text
		return cur, 0
	}
	return cur, v
}

// unitOf maps the Price List unit "Hrs" to unit; any other unit passes verbatim.
func unitOf(u, unit string) string {
	if u == "Hrs" {
		return unit
	}
	return u
}

func sortedDims(m map[string]priceDimension) []priceDimension {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]priceDimension, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

func cloneAttrs(a map[string]string) map[string]string {
	out := make(map[string]string, len(a)+4)
	for k, v := range a {
		out[k] = v
	}
	return out
}

// reject is a record that could not be read, with the reason.
type reject = scrapers.Rejected

// priceListResult is what a page of GetProducts items yields (scrapers.Result).
type priceListResult = scrapers.Result

var errNoProduct = errors.New("no product")

// parsePriceList turns the PriceList strings of one GetProducts page into rows. It is
// pure. An item that is not valid JSON, or has no product, is a reject; the others go on.
func parsePriceList(items []string, observedAt time.Time) priceListResult {
	res := priceListResult{Rows: []schemas.Observation{}}
	for _, raw := range items {
		var it priceListItem
		err := json.Unmarshal([]byte(raw), &it)
		if err == nil && (it.Product == nil || it.Product.Attributes == nil) {
			err = errNoProduct
		}
		if err != nil {
			res.Rejects = append(res.Rejects, reject{Raw: raw, Reason: fmt.Sprintf("aws: PriceList item: %v", err)})
			continue
		}
		if reason := wantProduct(*it.Product); reason != "" {
			res.Skip(reason)
			continue
		}
		base := productBase(*it.Product, "", observedAt)
		for _, kind := range sortedKeys(it.Terms) {
			for _, id := range sortedKeys(it.Terms[kind]) {
				rows, reason := termRows(base, kind, it.Terms[kind][id])
				if reason != "" {
					res.Skip(reason)
				}
				res.Rows = append(res.Rows, rows...)
			}
		}
	}
	return res
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

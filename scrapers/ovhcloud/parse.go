package ovhcloud

import (
	"encoding/json"
	"errors"
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

// ErrLayout means the response no longer has the catalog shape this parser reads.
var ErrLayout = errors.New("ovhcloud: catalog layout changed")

// priceScale is the catalog's price unit: 1e-8 of the currency unit.
const priceScale = 1e8

// catalog is the public order catalog. Plans and addons are decoded one by one so
// that one unreadable record is rejected, not the whole catalog.
type catalog struct {
	CatalogID json.Number `json:"catalogId"`
	Locale    *struct {
		CurrencyCode string  `json:"currencyCode"`
		Subsidiary   string  `json:"subsidiary"`
		TaxRate      float64 `json:"taxRate"`
	} `json:"locale"`
	Plans  []json.RawMessage  `json:"plans"`
	Addons *[]json.RawMessage `json:"addons"`
}

// offer is a plan or an addon, the fields this source reads.
type offer struct {
	PlanCode       string    `json:"planCode"`
	InvoiceName    string    `json:"invoiceName"`
	Product        string    `json:"product"`
	Pricings       []pricing `json:"pricings"`
	Configurations []struct {
		Name   string   `json:"name"`
		Values []string `json:"values"`
	} `json:"configurations"`
	Blobs *struct {
		Commercial *struct {
			Name         string `json:"name"`
			Brick        string `json:"brick"`
			BrickSubtype string `json:"brickSubtype"`
		} `json:"commercial"`
		Technical *struct {
			GPU *struct {
				Model  string  `json:"model"`
				Number float64 `json:"number"`
				Memory *struct {
					Size      float64 `json:"size"`
					Interface string  `json:"interface"`
				} `json:"memory"`
			} `json:"gpu"`
			OS *struct {
				Family string `json:"family"`
			} `json:"os"`
		} `json:"technical"`
		Tags []string `json:"tags"`
	} `json:"blobs"`
}

type pricing struct {
	Capacities     []string    `json:"capacities"`
	Description    string      `json:"description"`
	Interval       json.Number `json:"interval"`
	IntervalUnit   string      `json:"intervalUnit"`
	Mode           string      `json:"mode"`
	Phase          json.Number `json:"phase"`
	Price          json.Number `json:"price"`
	Tax            json.Number `json:"tax"`
	Type           string      `json:"type"`
	FormattedPrice string      `json:"formattedPrice"`
}

// result is what one catalog yields: every parser's scrapers.Result and the count of
// records read.
type result struct {
	scrapers.Result
	Records int `json:"records"`
}

type rejected = scrapers.Rejected

// Reasons a record yields no row.
const (
	skipNotGPU      = "not_gpu"      // not a GPU instance flavour
	skipWindows     = "windows"      // Windows licence included
	skipMonthlyStub = "monthly_stub" // "<flavour>.monthly": a configuration stub
)

var (
	// gpuFlavourRE recognises the GPU families by flavour name, for records without a brick.
	gpuFlavourRE = regexp.MustCompile(
		`^(?:win-)?(?:h100|h200|a100|a10|l40s|l4|v100s|t1|t2|rtx5000)(?:-le)?-[0-9]+(?:\.|$)`,
	)
	gpuBrickRE = regexp.MustCompile(`"brick"\s*:\s*"gpu"`)
	savingsRE  = regexp.MustCompile(`^savings-plan[.-]?([0-9]+)m$`)
	shownRE    = regexp.MustCompile(`[0-9][0-9.,\x{00a0}\x{202f} ]*`)
)

// parseCatalog turns one public cloud catalog into GPU observations. subsidiary is the
// ovhSubsidiary asked for: a catalog of another one is an error. It is pure: rows carry
// observedAt and no source URL.
func parseCatalog(r io.Reader, subsidiary string, observedAt time.Time) (result, error) {
	var c catalog
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return result{}, fmt.Errorf("ovhcloud: decoding catalog: %w", err)
	}
	if c.Addons == nil {
		return result{}, fmt.Errorf("%w: no addons array", ErrLayout)
	}
	if c.Locale == nil || c.Locale.CurrencyCode == "" {
		return result{}, fmt.Errorf("%w: no locale.currencyCode; refusing to guess the currency", ErrLayout)
	}
	if c.Locale.Subsidiary != "" && subsidiary != "" && c.Locale.Subsidiary != subsidiary {
		return result{}, fmt.Errorf(
			"ovhcloud: asked for the %s catalog, got the %s one (%s)",
			subsidiary,
			c.Locale.Subsidiary,
			c.Locale.CurrencyCode,
		)
	}
	res := result{Result: scrapers.Result{Rows: []schemas.Observation{}}}
	for _, raw := range append(slices.Clone(c.Plans), *c.Addons...) {
		res.Records++
		var o offer
		if err := json.Unmarshal(raw, &o); err != nil {
			// Only a record that looks like a GPU flavour is worth quarantining.
			var head struct {
				PlanCode string `json:"planCode"`
			}
			_ = json.Unmarshal(raw, &head)
			if gpuFlavourRE.MatchString(head.PlanCode) || gpuBrickRE.Match(raw) {
				res.Rejects = append(
					res.Rejects,
					rejected{Raw: string(raw), Reason: "ovhcloud: " + head.PlanCode + ": " + err.Error()},
				)
			} else {
				res.Skip(skipNotGPU)
			}
			continue
		}
		rows, reason, rej := offerRows(o, c.Locale.CurrencyCode, c.Locale.Subsidiary, observedAt)
		switch {
		case rej != "":
			res.Rejects = append(
				res.Rejects,
				rejected{Raw: string(raw), Reason: "ovhcloud: " + o.PlanCode + ": " + rej},
			)
		case reason != "":
			res.Skip(reason)
		default:
			res.Rows = append(res.Rows, rows...)
		}
	}
	return res, nil
}

// offerRows maps one record to its rows; or names why it has none (reason, counted)
// or why it cannot be read (rej, quarantined).
func offerRows(
	o offer,
	currency, subsidiary string,
	observedAt time.Time,
) (rows []schemas.Observation, reason, rej string) {
	brick := ""
	if o.Blobs != nil && o.Blobs.Commercial != nil {
		brick = o.Blobs.Commercial.Brick
	}
	if brick != "gpu" && (brick != "" || !gpuFlavourRE.MatchString(o.PlanCode)) {
		return nil, skipNotGPU, ""
	}
	osFamily := ""
	if o.Blobs != nil && o.Blobs.Technical != nil && o.Blobs.Technical.OS != nil {
		osFamily = o.Blobs.Technical.OS.Family
	}
	if osFamily == "windows" || strings.HasPrefix(o.PlanCode, "win-") {
		return nil, skipWindows, ""
	}
	flavour, mode, _ := strings.Cut(o.PlanCode, ".")
	if flavour == "" {
		return nil, "", "no planCode"
	}
	if mode == "monthly" {
		return nil, skipMonthlyStub, ""
	}
	var pricingKind, wantInterval string
	switch {
	case mode == "consumption":
		pricingKind, wantInterval = schemas.OnDemand, "hour"
	case mode == "monthly.postpaid":
		pricingKind, wantInterval = schemas.CommitmentPricing(1), "month"
	case savingsRE.MatchString(mode):
		n, _ := strconv.Atoi(savingsRE.FindStringSubmatch(mode)[1])
		if n <= 0 {
			return nil, "", fmt.Sprintf("savings plan term %q", mode)
		}
		pricingKind = schemas.CommitmentPricing(n)
	default:
		pricingKind = "ovhcloud:" + mode
	}
	p, err := pickPricing(o.Pricings, wantInterval)
	if err != "" {
		return nil, "", err
	}
	price, perr := microPrice(p.Price)
	if perr != "" {
		return nil, "", perr
	}
	if shown, ok := shownPrice(p.FormattedPrice); ok && math.Abs(shown-price) > 0.0051 {
		return nil, "", fmt.Sprintf(
			"price %s (%.8g %s) disagrees with its formattedPrice %q: the 1e-8 scale changed",
			p.Price,
			price,
			currency,
			p.FormattedPrice,
		)
	}
	var unit string
	switch mode {
	case "consumption":
		unit = schemas.UnitHour
	case "monthly.postpaid":
		unit = schemas.UnitMonth
	default:
		unit = intervalUnit(p.IntervalUnit)
	}

	base := schemas.Observation{
		ObservedAt:  observedAt,
		EffectiveAt: observedAt,
		Provider:    "ovhcloud",
		SKU:         flavour,
		Pricing:     pricingKind,
		Currency:    currency,
		PriceNative: price,
		Unit:        unit,
		SourceKind:  schemas.SourceAPI,
	}
	attrs := map[string]string{
		"planCode":     o.PlanCode,
		"intervalUnit": p.IntervalUnit,
		"price_raw":    p.Price.String(),
	}
	setIf := func(k, v string) {
		if v != "" {
			attrs[k] = v
		}
	}
	setIf("invoiceName", o.InvoiceName)
	setIf("formattedPrice", p.FormattedPrice)
	setIf("brick", brick)
	setIf("os_family", osFamily)
	setIf("subsidiary", subsidiary)
	if p.Interval != "" {
		attrs["interval"] = p.Interval.String()
	}
	if tax, err := p.Tax.Float64(); err == nil && p.Tax != "" {
		attrs["tax"] = schemas.FormatNum(tax / priceScale)
	}
	if o.Blobs != nil {
		if len(o.Blobs.Tags) > 0 {
			attrs["tags"] = strings.Join(o.Blobs.Tags, ",")
		}
		if c := o.Blobs.Commercial; c != nil {
			setIf("brickSubtype", c.BrickSubtype)
		}
		if t := o.Blobs.Technical; t != nil && t.GPU != nil {
			base.GPUName = t.GPU.Model
			base.GPUCount = t.GPU.Number
			if t.GPU.Memory != nil {
				base.GPUMemoryGB = t.GPU.Memory.Size
				setIf("gpu_memory_interface", t.GPU.Memory.Interface)
			}
		}
	}
	if strings.Contains(flavour, "-le-") {
		attrs["legacy"] = "true"
	}
	var regions []string
	for _, c := range o.Configurations {
		if c.Name == "region" {
			regions = append(regions, c.Values...)
		}
	}
	if len(regions) == 0 {
		regions = []string{""}
	}
	for _, region := range regions {
		row := base
		row.Region = region
		row.Attrs = make(map[string]string, len(attrs))
		for k, v := range attrs {
			row.Attrs[k] = v
		}
		rows = append(rows, row)
	}
	return rows, "", ""
}

// pickPricing chooses the one pricing of a record: the only one, else the only one
// that is not an installation fee, else the only one of the expected interval unit.
func pickPricing(ps []pricing, wantInterval string) (pricing, string) {
	var cands []pricing
	for _, p := range ps {
		if !slices.Contains(p.Capacities, "installation") || slices.Contains(p.Capacities, "consumption") {
			cands = append(cands, p)
		}
	}
	if len(cands) > 1 && wantInterval != "" {
		var same []pricing
		for _, p := range cands {
			if p.IntervalUnit == wantInterval {
				same = append(same, p)
			}
		}
		cands = same
	}
	switch len(cands) {
	case 1:
		return cands[0], ""
	case 0:
		return pricing{}, fmt.Sprintf("no usable pricing among %d", len(ps))
	default:
		return pricing{}, fmt.Sprintf("%d pricings and no rule to choose between them", len(cands))
	}
}

// microPrice reads a price in 1e-8 of the currency unit.
func microPrice(n json.Number) (float64, string) {
	if n == "" {
		return 0, "pricing without a price"
	}
	if i, err := n.Int64(); err == nil {
		return float64(i) / priceScale, ""
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Sprintf("price %q is not a number", n.String())
	}
	return f / priceScale, ""
}

// shownPrice reads the number of a formattedPrice ("2.80 €", "$1.56 USD",
// "1 940,00 €", "1,940.00 EUR").
func shownPrice(s string) (float64, bool) {
	m := strings.TrimSpace(shownRE.FindString(s))
	if m == "" {
		return 0, false
	}
	m = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "").Replace(m)
	dot, comma := strings.LastIndex(m, "."), strings.LastIndex(m, ",")
	switch {
	case dot >= 0 && comma >= 0 && dot > comma: // 1,940.00
		m = strings.ReplaceAll(m, ",", "")
	case dot >= 0 && comma >= 0: // 1.940,00
		m = strings.ReplaceAll(m, ".", "")
		m = strings.Replace(m, ",", ".", 1)
	case comma >= 0 && len(m)-comma-1 <= 2: // 2,80
		m = strings.Replace(m, ",", ".", 1)
	case comma >= 0: // 1,940
		m = strings.ReplaceAll(m, ",", "")
	}
	f, err := strconv.ParseFloat(strings.TrimRight(m, "."), 64)
	return f, err == nil
}

// intervalUnit maps a pricing's intervalUnit to a unit; an unknown one is passed on
// verbatim so ingest quarantines it.
func intervalUnit(u string) string {
	switch u {
	case "hour":
		return schemas.UnitHour
	case "month":
		return schemas.UnitMonth
	}
	return "ovhcloud:" + u
}

package schemas

import (
	"fmt"
	"strconv"
	"strings"
)

// PriceSteps is how a stored price came from the figure its source published: the
// published figure with its currency and unit, the FX conversion, the unit
// conversion to $/hour and the division by the GPU count, with the scope and basis.
type PriceSteps struct {
	Published string `json:"published"` // "19.92 USD per instance-hour"
	// FX is "USD: no conversion" or "× 1.0812 USD/EUR (rate in force on 2026-11-30)".
	FX           string   `json:"fx"`
	USDPerHour   string   `json:"usd_per_hour"`     // "$19.92/h"
	USDGPUHour   string   `json:"usd_gpu_hour"`     // "$19.92/h ÷ 8 GPUs = $2.49/GPU-h"
	Scope        string   `json:"scope"`            // "instance: the whole machine"
	Basis        string   `json:"basis"`            // "listed: the provider's published price"
	Origin       string   `json:"origin,omitempty"` // a recorded example's row: what it was parsed from
	Steps        []string `json:"steps"`            // the lines above, in order
	PriceUSDHour float64  `json:"price_usd_hour"`   // as stored
	PriceGPUHour float64  `json:"price_usd_gpu_hour"`
}

func num(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func money(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if !strings.Contains(s, ".") {
		s += ".00"
	} else if len(s)-strings.Index(s, ".") == 2 {
		s += "0"
	}
	return "$" + s
}

// ExplainPrice writes the steps from a stored row's published figure to its
// $/GPU-hour (`gpuprice prices --explain`), from the row's own columns.
func ExplainPrice(o Observation) PriceSteps {
	var p PriceSteps
	unit := map[string]string{
		UnitHour: "per instance-hour", UnitGPUHour: "per GPU-hour", UnitMonth: "per instance-month (730 h)",
		UnitGPUMonth: "per GPU-month (730 h)", UnitTerm: "for the whole term",
	}[o.Unit]
	if unit == "" {
		unit = "per " + o.Unit
	}
	p.Published = fmt.Sprintf("%s %s %s", num(o.PriceNative), o.Currency, unit)
	rate := o.FXRate
	if rate == 0 {
		rate = 1
	}
	if strings.EqualFold(o.Currency, "USD") || o.Currency == "" {
		p.FX = "USD: no conversion"
	} else {
		p.FX = fmt.Sprintf("× %s USD per %s (the rate in force on %s) = %s USD %s", num(rate), o.Currency,
			o.EffectiveAt.UTC().Format("2006-01-02"), num(Round9(o.PriceNative*rate)), unit)
	}
	usd := o.PriceNative * rate
	switch o.Unit {
	case UnitHour:
		p.USDPerHour = money(o.PriceUSDHour) + "/h, as published"
	case UnitGPUHour:
		p.USDPerHour = fmt.Sprintf("%s/GPU-h × %s GPUs = %s/h", money(usd), num(o.GPUCount), money(o.PriceUSDHour))
	case UnitMonth:
		p.USDPerHour = fmt.Sprintf("%s/month ÷ 730 h = %s/h", money(usd), money(o.PriceUSDHour))
	case UnitGPUMonth:
		p.USDPerHour = fmt.Sprintf(
			"%s/GPU-month ÷ 730 h × %s GPUs = %s/h",
			money(usd),
			num(o.GPUCount),
			money(o.PriceUSDHour),
		)
	case UnitTerm:
		p.USDPerHour = fmt.Sprintf(
			"%s for the term ÷ %s h = %s/h",
			money(usd),
			num(TermHours(o.Pricing)),
			money(o.PriceUSDHour),
		)
	default:
		p.USDPerHour = money(o.PriceUSDHour) + "/h"
	}
	p.USDGPUHour = fmt.Sprintf(
		"%s/h ÷ %s GPUs = %s/GPU-h",
		money(o.PriceUSDHour),
		num(o.GPUCount),
		money(o.PriceUSDGPUHour),
	)
	switch ScopeOf(o.PriceScope) {
	case ScopeGPUOnly:
		p.Scope = "gpu_only: the GPU alone; the VM it attaches to is billed apart"
	default:
		p.Scope = "instance: the whole machine"
	}
	switch BasisOf(o.PriceBasis) {
	case BasisDerived:
		p.Basis = "derived: computed by a documented rule"
		if r := o.Attrs["rule"]; r != "" {
			p.Basis += " (" + r + ")"
		}
	case BasisFloor:
		p.Basis = `floor: a "from $X" lower bound, not one offer's price`
	default:
		p.Basis = "listed: the provider's published price"
	}
	p.PriceUSDHour, p.PriceGPUHour = o.PriceUSDHour, o.PriceUSDGPUHour
	p.Steps = []string{"published  " + p.Published, "currency   " + p.FX, "per hour   " + p.USDPerHour,
		"per GPU    " + p.USDGPUHour, "scope      " + p.Scope, "basis      " + p.Basis}
	if o.Recorded() {
		// "listed: the provider's published price" holds for the response's format;
		// whether the figure is the provider's depends on what the response is.
		p.Origin = "recorded example (examples/recorded/README.md), not today's price: " + map[string]string{
			ProvenanceVerbatim: "parsed from a verbatim capture of the provider's response",
			ProvenanceRetyped:  "parsed from a page re-typed by hand from the provider's published one",
			ProvenanceConstructed: "parsed from a response constructed in the provider's format; the figure may be " +
				"illustrative, not the provider's",
		}[o.Attrs[AttrProvenance]]
		p.Origin = strings.TrimSuffix(p.Origin, ": ")
		p.Steps = append(p.Steps, "origin     "+p.Origin)
	}
	return p
}

// Round9 rounds to 1e-9, as ingest stores prices.
func Round9(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 9, 64), 64)
	return r
}

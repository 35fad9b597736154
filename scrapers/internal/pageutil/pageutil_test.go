package pageutil

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

func TestParseNumber(t *testing.T) {
	for in, want := range map[string]float64{
		"42": 42, "42.00": 42, "4,096": 4096, "1,234.56": 1234.56, "1.234,56": 1234.56,
		"3,90": 3.9, "1 234,5": 1234.5, "12'345.50": 12345.5, "1,234,567": 1234567,
		"1.234.567": 1234567, "0.5": 0.5, ".5": 0.5, "30.72": 30.72, "1\u00a0024": 1024,
	} {
		got, err := ParseNumber(in)
		if err != nil || got != want {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "abc", "1,23,4", "1.2.3,4.5", "4x", "1,2,3", "12,34.5,6", ",", "."} {
		if v, err := ParseNumber(in); !errors.Is(err, ErrNumber) {
			t.Errorf("ParseNumber(%q) = %v, %v; want ErrNumber", in, v, err)
		}
	}
}

func TestReadPrice(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Price
	}{
		{"$3.90/GPU-hr", Price{3.9, "USD", "", "GPU-hr"}},
		{"from $2.00", Price{2, "USD", "from", ""}},
		{"Starting at $1,234.50 per hour", Price{1234.5, "USD", "from", "hour"}},
		{"On-Demand Price: $42.00 / Hour", Price{42, "USD", "", "Hour"}},
		{"€3,90 / GPU-Stunde", Price{3.9, "EUR", "", "GPU-Stunde"}},
		{"As low as $2.50.", Price{2.5, "USD", "from", ""}},
		{"USD 1 024,00", Price{1024, "USD", "", ""}},
		{"$2.00 8 GPUs", Price{2, "USD", "", ""}},
	} {
		got, ok, err := ReadPrice(c.in)
		if !ok || err != nil || got != c.want {
			t.Errorf("ReadPrice(%q) = %+v, %v, %v; want %+v", c.in, got, ok, err, c.want)
		}
	}
	for _, in := range []string{"Contact sales", "N/A", "", "Pre order", "—"} {
		if _, ok, err := ReadPrice(in); ok || err != nil {
			t.Errorf("ReadPrice(%q): ok %v err %v, want no amount", in, ok, err)
		}
	}
	for _, in := range []string{"$4x.00", "$8k", "$1,23,4", "$4.2.0,1"} {
		if _, ok, err := ReadPrice(in); !ok || !errors.Is(err, ErrNumber) {
			t.Errorf("ReadPrice(%q): ok %v err %v, want an unreadable amount", in, ok, err)
		}
	}
}

func TestNotOffered(t *testing.T) {
	for _, in := range []string{"", " ", "N/A", "—", "-", "n/a"} {
		if !NotOffered(in) {
			t.Errorf("NotOffered(%q) = false", in)
		}
	}
	for _, in := range []string{"Contact sales", "$1.00", "Pre order"} {
		if NotOffered(in) {
			t.Errorf("NotOffered(%q) = true", in)
		}
	}
}

// TestUnpricedTextNotSold: a provider's own "not available" markers (issue 23:
// CoreWeave's and Together's "Contact sales", RunPod's "Contact us", GMI's "Pre
// order", OVHcloud's "Coming soon") become a not-offered text that ingest counts as
// not offered; any other note stays as written, for ingest to quarantine.
func TestUnpricedTextNotSold(t *testing.T) {
	for _, in := range []string{"Contact sales", "Contact Sales", " contact  us ", "Pre order", "Pre-order",
		"PREORDER", "Coming soon", "Contact sales →", "Talk to sales"} {
		got := UnpricedText(in)
		if !NotSold(in) || !scrapers.NotOffered(got) || !strings.Contains(got, Clean(in)) {
			t.Errorf("UnpricedText(%q) = %q, want a not-offered text naming it", in, got)
		}
	}
	for _, in := range []string{"Call", "Sold out soon", "Contact sales for $2", "TBD", "Limited", "from"} {
		if got := UnpricedText(in); NotSold(in) || got != Clean(in) || scrapers.NotOffered(got) {
			t.Errorf("UnpricedText(%q) = %q, want the text as written (quarantined)", in, got)
		}
	}
}

func TestKindFromLabel(t *testing.T) {
	for in, want := range map[string]string{
		"On-demand": schemas.OnDemand, "On-Demand Price (Per Hour)": schemas.OnDemand, "Pay as you go": schemas.OnDemand,
		"Hourly": schemas.OnDemand, "Current spot": schemas.Spot, "Spot Price (Per Hour)": schemas.Spot,
		"1-year reserved": schemas.Reserved1Y, "3 Years": schemas.Reserved3Y, "6-month commitment": "commitment_6m",
		"12 months": schemas.Reserved1Y, "36-month": schemas.Reserved3Y, "Monthly reserved": "commitment_1m",
		"Reserved 2 yr": "commitment_24m", "One-year term": schemas.Reserved1Y,
	} {
		if got, ok := KindFromLabel(in); !ok || got != want {
			t.Errorf("KindFromLabel(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"Reserved", "GPU model", "Hardware", "VRAM (GB)"} {
		if got, ok := KindFromLabel(in); ok {
			t.Errorf("KindFromLabel(%q) = %q, want none", in, got)
		}
	}
}

func TestTermMonthsDays(t *testing.T) {
	for label, want := range map[string]int{"7-30 days": 1, "Reserved 31-90 days": 3, "91–180 days": 6, "181+ days": 7, "6 months": 6} {
		if got, ok := TermMonths(label); !ok || got != want {
			t.Errorf("TermMonths(%q) = %d %v, want %d", label, got, ok, want)
		}
	}
	if _, ok := TermMonths("30 days free"); ok {
		t.Error("a number of days that is not a range read as a term")
	}
}

func TestSlugMemory(t *testing.T) {
	if got := Slug("NVIDIA HGX H100", "nvidia"); got != "hgx-h100" {
		t.Errorf("Slug = %q", got)
	}
	if got := Slug("NVIDIA RTX PRO 6000 Blackwell Server Edition", "nvidia"); got != "rtx-pro-6000-blackwell-server-edition" {
		t.Errorf("Slug = %q", got)
	}
	for in, want := range map[string]float64{"141GB": 141, "80 GB": 80, "1.5 TB": 1500, "none": 0, "192 GiB HBM3": 192} {
		if got := MemoryGB(in); got != want {
			t.Errorf("MemoryGB(%q) = %v, want %v", in, got, want)
		}
	}
	if Clean(" a \u00a0 b\n\tc ") != "a b c" {
		t.Error("Clean")
	}
}

func FuzzReadPrice(f *testing.F) {
	for _, s := range []string{"$3.90/GPU-hr", "from $2.00", "€1.234,56", "$4x.00", "Contact sales", "$1 234 567,8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, ok, err := ReadPrice(s)
		if !ok && (err != nil || p != (Price{})) {
			t.Errorf("no amount but %+v %v", p, err)
		}
		if ok && err == nil && (p.Value < 0 || p.Currency == "") {
			t.Errorf("bad price %+v", p)
		}
	})
}

func TestUnitFromPer(t *testing.T) {
	for in, want := range map[string]string{
		"GPU-hr": schemas.UnitGPUHour, "GPU-hour": schemas.UnitGPUHour, "Hour": schemas.UnitHour, "hr": schemas.UnitHour,
		"gpu per hour": schemas.UnitGPUHour, "": schemas.UnitGPUHour, "month": schemas.UnitMonth, "GPU-month": schemas.UnitGPUMonth,
		"1M tokens": "1M tokens",
	} {
		if got := UnitFromPer(in, schemas.UnitGPUHour); got != want {
			t.Errorf("UnitFromPer(%q) = %q, want %q", in, got, want)
		}
	}
}

type plainSink struct{ rows []schemas.Observation }

func (p *plainSink) Emit(o schemas.Observation) { p.rows = append(p.rows, o) }

type rejectSink struct {
	plainSink
	raws []string
}

func (r *rejectSink) Reject(raw, reason string) { r.raws = append(r.raws, raw+"|"+reason) }

func TestEmit(t *testing.T) {
	res := Result{Rows: []schemas.Observation{{SKU: "a"}, {SKU: "b"}}, Rejects: []Rejected{{Raw: "x", Reason: "no price"}}}
	var p plainSink
	err := Emit(&p, res, "https://example.com/pricing")
	if !errors.Is(err, ErrUnquarantined) || len(p.rows) != 2 || p.rows[1].SourceURL != "https://example.com/pricing" {
		t.Errorf("plain sink: err %v rows %+v", err, p.rows)
	}
	var r rejectSink
	if err := Emit(&r, res, "u"); err != nil || len(r.rows) != 2 || len(r.raws) != 1 || r.raws[0] != "x|no price" {
		t.Errorf("rejecting sink: err %v rows %d raws %v", err, len(r.rows), r.raws)
	}
}

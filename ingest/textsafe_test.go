package ingest

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// TestNormalizeCleansHostileStrings: a Vast host's geolocation and GPU name from
// issue 29 come out of Normalize boring, with the raw location kept in attrs.
func TestNormalizeCleansHostileStrings(t *testing.T) {
	n := &Normalizer{GPUs: fakeGPUs{"H100 SXM": "h100-sxm"}}
	o := raw(func(o *schemas.Observation) {
		o.Provider = "vast"
		o.Region = `US\') OR 1=1 --`
		o.GPUName = "H100\u202e SXM\n"
		o.SKU = "vast:1:1x\x1b[2J"
		o.Attrs = map[string]string{"geolocation": "Texas, US\n:white_check_mark: RESOLVED", "note\x00": "<!channel>"}
	})
	got, unknown, err := n.Normalize(context.Background(), o)
	if err != nil || unknown {
		t.Fatalf("Normalize: %v, unknown %v: %+v", err, unknown, got)
	}
	if got.Region != "US" || got.Attrs[AttrRegionRaw] != `US\') OR 1=1 --` {
		t.Errorf("region %q, raw %q", got.Region, got.Attrs[AttrRegionRaw])
	}
	if got.GPUName != "H100 SXM" || got.GPU != "h100-sxm" || got.SKU != "vast:1:1x[2J" {
		t.Errorf("gpu name %q gpu %q sku %q", got.GPUName, got.GPU, got.SKU)
	}
	if got.Attrs["geolocation"] != "Texas, US :white_check_mark: RESOLVED" || got.Attrs["note"] != "<!channel>" {
		t.Errorf("attrs %q", got.Attrs)
	}
	if o.Attrs["note\x00"] != "<!channel>" {
		t.Error("the source's attrs map was changed in place")
	}
	for _, h := range textsafe.Hostile {
		o := raw(func(o *schemas.Observation) { o.Region, o.Zone = h, h })
		if !cleanable(o) {
			continue // not UTF-8 or too long: the storable gate's (TestRowsNoStoreCanHoldAreQuarantined)
		}
		got, _, err := n.Normalize(context.Background(), o)
		if err != nil {
			t.Fatalf("Normalize(region %q): %v", h, err)
		}
		if got.Region != "" && !textsafe.Boring(got.Region) || got.Zone != "" && !textsafe.Boring(got.Zone) {
			t.Errorf("region %q gave %q, zone %q", h, got.Region, got.Zone)
		}
	}
}

// FuzzClean: whatever strings a source emits, the row Clean gives has boring
// region and zone, capped lengths and no control or bidi character, and cleaning
// it again changes nothing.
func FuzzClean(f *testing.F) {
	for _, h := range textsafe.Hostile {
		f.Add(h, h, h, h)
	}
	f.Fuzz(func(t *testing.T, region, name, sku, attr string) {
		in := schemas.Observation{ObservedAt: t0, EffectiveAt: t0, Provider: "vast", Region: region, Zone: region,
			GPUName: name, SKU: sku, Attrs: map[string]string{attr: attr, "geolocation": region}}
		if !cleanable(in) {
			// Not UTF-8 or too long for a store: left for the storable gate's quarantine.
			if o := Clean(in); o.Region != in.Region || o.SKU != in.SKU {
				t.Fatalf("an unstorable row was changed: %+v", o)
			}
			return
		}
		o := Clean(in)
		if o.Region != "" && !textsafe.Boring(o.Region) || o.Zone != "" && !textsafe.Boring(o.Zone) {
			t.Fatalf("region %q → %q, zone %q", region, o.Region, o.Zone)
		}
		if utf8.RuneCountInString(o.GPUName) > textsafe.MaxName || utf8.RuneCountInString(o.SKU) > textsafe.MaxKey {
			t.Fatalf("caps: name %d, sku %d runes", utf8.RuneCountInString(o.GPUName), utf8.RuneCountInString(o.SKU))
		}
		for k, v := range o.Attrs {
			for _, s := range []string{k, v, o.GPUName, o.SKU} {
				if strings.ContainsAny(s, "\x00\x1b\n\r\t\u202e\u2066") {
					t.Fatalf("%q survived Clean", s)
				}
			}
		}
		again := Clean(o)
		if again.Region != o.Region || again.GPUName != o.GPUName || again.SKU != o.SKU || len(again.Attrs) != len(o.Attrs) {
			t.Fatalf("Clean is not stable: %+v → %+v", o, again)
		}
	})
}

// TestCleanSignal: a signal from a Vast host's strings comes out as boring as its
// row (the same region, so the two join), for every hostile string.
func TestCleanSignal(t *testing.T) {
	s := CleanSignal(schemas.Signal{Provider: "vast", SKU: "depth:H100\u202e SXM\n", Region: `US\') OR 1=1 --`,
		Label: "<!channel>\x1b[2J", Kind: schemas.SignalDepth, Attrs: map[string]string{"gpu_name": "H100\u202e SXM\n"}})
	if s.Region != "US" || s.Attrs[AttrRegionRaw] != `US\') OR 1=1 --` || s.SKU != "depth:H100 SXM" ||
		s.Attrs["gpu_name"] != "H100 SXM" || s.Label != "<!channel>[2J" {
		t.Errorf("cleaned %+v", s)
	}
	row := Clean(schemas.Observation{Provider: "vast", Region: `US\') OR 1=1 --`})
	if row.Region != s.Region {
		t.Errorf("signal region %q, its row's %q", s.Region, row.Region)
	}
	for _, h := range textsafe.Hostile {
		got := CleanSignal(schemas.Signal{Provider: "vast", SKU: h, Region: h, Zone: h, Label: h,
			Attrs: map[string]string{h: h}})
		if got.Region != "" && !textsafe.Boring(got.Region) || got.Zone != "" && !textsafe.Boring(got.Zone) {
			t.Errorf("region %q gave %q, zone %q", h, got.Region, got.Zone)
		}
		for _, v := range []string{got.SKU, got.Label} {
			if strings.ContainsAny(v, "\n\r\x1b\u202e") {
				t.Errorf("%q kept a control or bidi character: %q", h, v)
			}
		}
	}
}

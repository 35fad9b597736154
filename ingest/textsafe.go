package ingest

import (
	"unicode/utf8"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// AttrRegionRaw keeps a row's region as the source gave it when Clean changed it
// (a marketplace's free-text location, mapped to a country code or dropped).
const AttrRegionRaw = "region_raw"

// Clean passes every third-party string of o through the ingest rule of
// textsafe.Clean (controls and bidi overrides removed, lengths capped) and makes its
// region and zone boring (textsafe.Region: a free-text location becomes a country
// code where it can, the raw text kept in Attrs[AttrRegionRaw]). Every row of every
// source passes here (Normalize), so labels, options and keys are bounded and boring
// whatever a host or a page author wrote. Attrs is copied before it is changed.
// A field that no store can hold (not UTF-8, over MaxFieldBytes) is left as it is:
// the storable gate quarantines its row with the reason, nothing is guessed.
func Clean(o schemas.Observation) schemas.Observation {
	if !plainFields(&o) && !cleanable(o) {
		return o
	}
	o.Provider = textsafe.Clean(o.Provider, textsafe.MaxName)
	o.SKU = textsafe.Clean(o.SKU, textsafe.MaxKey)
	o.GPUName = textsafe.Clean(o.GPUName, textsafe.MaxName)
	o.SourceURL = textsafe.Clean(o.SourceURL, textsafe.MaxURL)
	o.Tier = textsafe.Clean(o.Tier, textsafe.MaxName)
	o.Interconnect = textsafe.Clean(o.Interconnect, textsafe.MaxName)
	var rawRegion string
	o.Region, rawRegion = textsafe.Region(textsafe.Clean(o.Region, textsafe.MaxText))
	o.Zone, _ = textsafe.Region(textsafe.Clean(o.Zone, textsafe.MaxText))
	changed := rawRegion != ""
	for k, v := range o.Attrs {
		if textsafe.Clean(k, textsafe.MaxKey) != k || textsafe.Clean(v, textsafe.MaxText) != v {
			changed = true
			break
		}
	}
	if !changed {
		return o
	}
	o.Attrs = cleanAttrs(o.Attrs, rawRegion)
	return o
}

// cleanAttrs is a copy of attrs with every key and value through textsafe.Clean and,
// when the region was changed, its raw text under AttrRegionRaw.
func cleanAttrs(attrs map[string]string, rawRegion string) map[string]string {
	a := make(map[string]string, len(attrs)+1)
	for k, v := range attrs {
		a[textsafe.Clean(k, textsafe.MaxKey)] = textsafe.Clean(v, textsafe.MaxText)
	}
	if rawRegion != "" {
		a[AttrRegionRaw] = rawRegion
	}
	return a
}

// cleanable reports whether every text field of o is UTF-8 within MaxFieldBytes (its
// attributes within MaxAttrsBytes): what Clean may change. Anything else is the
// storable gate's to quarantine, with the reason.
func cleanable(o schemas.Observation) bool {
	ok := func(s string, max int) bool { return len(s) <= max && utf8.ValidString(s) }
	for _, v := range [...]string{o.Provider, o.Tier, o.SKU, o.Region, o.Zone, o.GPUName, o.Interconnect, o.SourceURL} {
		if !ok(v, MaxFieldBytes) {
			return false
		}
	}
	for k, v := range o.Attrs {
		if !ok(k, MaxFieldBytes) || !ok(v, MaxAttrsBytes) {
			return false
		}
	}
	return true
}

// CleanSignal is Clean for a signal: every third-party string through
// textsafe.Clean, region and zone made boring as a row's are (so that a signal
// names its offer as the offer's stored prices do), its attributes likewise. Every
// signal stored passes here (a run's and an import's).
func CleanSignal(s schemas.Signal) schemas.Signal {
	s.Provider = textsafe.Clean(s.Provider, textsafe.MaxName)
	s.SKU = textsafe.Clean(s.SKU, textsafe.MaxKey)
	s.GPU = textsafe.Clean(s.GPU, textsafe.MaxName)
	s.Label = textsafe.Clean(s.Label, textsafe.MaxName)
	s.Source = textsafe.Clean(s.Source, textsafe.MaxName)
	s.SourceURL = textsafe.Clean(s.SourceURL, textsafe.MaxURL)
	var rawRegion string
	s.Region, rawRegion = textsafe.Region(textsafe.Clean(s.Region, textsafe.MaxText))
	s.Zone, _ = textsafe.Region(textsafe.Clean(s.Zone, textsafe.MaxText))
	if len(s.Attrs) == 0 && rawRegion == "" {
		return s
	}
	s.Attrs = cleanAttrs(s.Attrs, rawRegion)
	return s
}

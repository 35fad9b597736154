package ingest

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

func TestPlainText(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"", true},
		{"aws", true},
		{"H100-SXM-80GB-sku-12345", true},
		{strings.Repeat("x", 64), true},
		{"\x00", false},
		{"abcdefg\x00", false},  // the last byte of the first word
		{"abcdefgh\x00", false}, // the tail
		{"\x00bcdefghij", false},
		{"abc\x7fdefgh", true}, // DEL is ASCII
		{"abcdéfgh", false},
		{"abcdefghé", false},
		{"\x80", false},
		{"\x01\x01\x01\x01\x01\x01\x01\x01", true}, // no zero byte: not confused by the borrow
		{"\x01\x00\x01\x01\x01\x01\x01\x01", false},
	} {
		if got := plainText(c.s); got != c.want {
			t.Errorf("plainText(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

// Storable's one-pass check and its field-by-field check agree: plain rows pass,
// and a field past ASCII is still judged (valid UTF-8 passes, the rest is refused
// with the field's name).
func TestStorableText(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	base := schemas.Observation{ObservedAt: t0, EffectiveAt: t0, Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-1",
		Pricing: "on_demand", Currency: "USD", Unit: "hour", Attrs: map[string]string{"k": "v"}}
	cases := []struct {
		name string
		edit func(o *schemas.Observation)
		want string // "" means storable
	}{
		{"plain", func(*schemas.Observation) {}, ""},
		{"UTF-8 region", func(o *schemas.Observation) { o.Region = "São Paulo" }, ""},
		{"UTF-8 attribute", func(o *schemas.Observation) { o.Attrs = map[string]string{"note": "prix en €"} }, ""},
		{"invalid UTF-8", func(o *schemas.Observation) { o.GPUName = "H100\xff" }, "gpu_name is not valid UTF-8"},
		{"NUL", func(o *schemas.Observation) { o.SKU = "p5\x00" }, "sku holds a NUL byte"},
		{"NUL in an attribute", func(o *schemas.Observation) { o.Attrs = map[string]string{"k": "a\x00b"} }, "attribute k holds a NUL byte"},
		{"long field", func(o *schemas.Observation) { o.Zone = strings.Repeat("z", MaxFieldBytes+1) }, "zone is 4097 bytes long"},
		{"long attrs", func(o *schemas.Observation) {
			o.Attrs = map[string]string{"a": strings.Repeat("x", MaxAttrsBytes/2), "b": strings.Repeat("y", MaxAttrsBytes/2)}
		}, "attributes take"},
	}
	for _, c := range cases {
		o := base
		c.edit(&o)
		err := Storable(o, t0)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

package store

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/gpuprice/gpuprice/schemas"
)

// identity is the key of an observation: its series plus effective_at in seconds.
type identity struct {
	provider, sku, region, zone, pricing string
	effective                            int64
}

// LastPerIdentity keeps the last row of each observation identity in a batch, in the
// order of first appearance: what every backend writes, so that a batch holding the
// same identity twice stores its last write, as two batches would.
//
// A batch without a repeated identity (the usual one) is returned as it is, not
// copied: a copy of a large batch is as large again, held while it is written.
func LastPerIdentity(obs []schemas.Observation) []schemas.Observation {
	pos := make(map[identity]int, len(obs))
	var out []schemas.Observation // nil until an identity repeats
	for j := range obs {
		o := &obs[j]
		k := identity{o.Provider, o.SKU, o.Region, o.Zone, o.Pricing, o.EffectiveAt.Unix()}
		i, seen := pos[k]
		if seen && out == nil {
			out = make([]schemas.Observation, j, len(obs))
			copy(out, obs[:j])
		}
		switch {
		case seen:
			out[i] = *o
		case out != nil:
			pos[k] = len(out)
			out = append(out, *o)
		default:
			pos[k] = j
		}
	}
	if out == nil {
		return obs
	}
	return out
}

// EncodeAttrs is how backends store an observation's attrs: a JSON object with sorted
// keys ("{}" when empty), so the same map always encodes the same.
func EncodeAttrs(a map[string]string) (string, error) {
	if len(a) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("encode attrs: %w", err)
	}
	return string(b), nil
}

// DecodeAttrs reads what EncodeAttrs wrote; empty attrs read back as nil.
func DecodeAttrs(s string) (map[string]string, error) {
	if s == "" || s == "{}" {
		return nil, nil
	}
	var a map[string]string
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, fmt.Errorf("decode attrs %q: %w", s, err)
	}
	if len(a) == 0 {
		return nil, nil
	}
	return a, nil
}

// AttrsEncoder is EncodeAttrs for a batch of rows, reusing the last encoding while
// the attrs do not change: the rows of one source mostly carry the same attrs, and
// encoding JSON (sorting the keys) is most of a row's cost otherwise. The zero
// value is ready; it is not safe for concurrent use.
type AttrsEncoder struct {
	last map[string]string // a copy of the last attrs encoded
	enc  string
	ok   bool
}

// Encode returns EncodeAttrs(a).
func (e *AttrsEncoder) Encode(a map[string]string) (string, error) {
	if len(a) == 0 {
		return "{}", nil
	}
	if e.ok && maps.Equal(a, e.last) {
		return e.enc, nil
	}
	s, err := EncodeAttrs(a)
	if err != nil {
		return "", err
	}
	e.last, e.enc, e.ok = maps.Clone(a), s, true
	return s, nil
}

package schemas

import (
	"slices"
	"testing"
)

// TestNear: candidates within two edits, nearest first, ties in the candidates'
// order; none further away.
func TestNear(t *testing.T) {
	known := []string{"provider", "pricing", "region", "providers", "gpu", "gpus"}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"providr", []string{"provider", "providers"}},
		{"provders", []string{"providers", "provider"}},
		{"gpx", []string{"gpu", "gpus"}},
		{"regoin", []string{"region"}},
		{"window", nil},
	} {
		if got := Near(c.in, known); !slices.Equal(got, c.want) {
			t.Errorf("Near(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

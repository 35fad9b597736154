package store

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"clickhouse://u:hunter2@db:9000/x":                "clickhouse://u:REDACTED@db:9000/x",
		"clickhouse://db:9000/x?password=hunter2&debug=1": "clickhouse://db:9000/x?password=REDACTED&debug=1",
		// Order is kept, so a DSN without secrets comes back unchanged.
		"clickhouse://db:9000/x?read_timeout=30s&compress=true": "clickhouse://db:9000/x?read_timeout=30s&compress=true",
		"duckdb:///var/lib/gpuprice/gpuprice.duckdb":            "duckdb:///var/lib/gpuprice/gpuprice.duckdb",
		"clickhouse://u@db:9000/x":                              "clickhouse://u@db:9000/x",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Redact("clickhouse://u:pw@[::1"); strings.Contains(got, "pw") {
		t.Errorf("unparseable DSN leaked: %q", got)
	}
}

func TestOpenUnknownScheme(t *testing.T) {
	_, err := Open(context.Background(), "postgres://u:hunter2@db/x")
	if err == nil || !strings.Contains(err.Error(), `unknown DSN scheme "postgres"`) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v", err)
	}
}

func TestRegisterRefusesDuplicates(t *testing.T) {
	o := Opener(func(context.Context, *url.URL) (Store, error) { return nil, nil })
	Register("test-scheme", o)
	defer func() {
		if recover() == nil {
			t.Error("duplicate Register did not panic")
		}
	}()
	Register("test-scheme", o)
}

func TestLastPerIdentity(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	a := schemas.Observation{Provider: "vast", SKU: "a", Pricing: "spot", EffectiveAt: t0, PriceNative: 1}
	b := schemas.Observation{Provider: "vast", SKU: "b", Pricing: "spot", EffectiveAt: t0, PriceNative: 2}
	a2 := a
	a2.PriceNative = 3
	later := a
	later.EffectiveAt = t0.Add(time.Second)
	got := LastPerIdentity([]schemas.Observation{a, b, a2, later})
	if len(got) != 3 || got[0].SKU != "a" || got[0].PriceNative != 3 || got[1].SKU != "b" || !got[2].EffectiveAt.Equal(later.EffectiveAt) {
		t.Errorf("got %+v", got)
	}
}

// TestLastPerIdentityKeepsABatchWithoutRepeats: a batch with no identity twice is
// returned as it is (not copied); one with a repeat after many rows keeps the others
// in order and the repeat's last row.
func TestLastPerIdentityKeepsABatchWithoutRepeats(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var obs []schemas.Observation
	for i := range 5 {
		obs = append(obs, schemas.Observation{Provider: "aws", SKU: fmt.Sprint(i), Pricing: "on_demand", EffectiveAt: t0, PriceNative: float64(i)})
	}
	if got := LastPerIdentity(obs); len(got) != 5 || &got[0] != &obs[0] {
		t.Errorf("a batch without repeats was copied or changed: %d rows", len(got))
	}
	again := obs[3]
	again.PriceNative = 30
	in := append(append([]schemas.Observation(nil), obs...), again, obs[0])
	got := LastPerIdentity(in)
	var skus []string
	for _, o := range got {
		skus = append(skus, fmt.Sprintf("%s=%g", o.SKU, o.PriceNative))
	}
	if fmt.Sprint(skus) != "[0=0 1=1 2=2 3=30 4=4]" {
		t.Errorf("got %v", skus)
	}
	if in[3].PriceNative != 3 {
		t.Errorf("the caller's batch was changed: %+v", in[3])
	}
}

func TestAttrsRoundTrip(t *testing.T) {
	s, err := EncodeAttrs(map[string]string{"z": "1", "a": "é\"x"})
	if err != nil || s != `{"a":"é\"x","z":"1"}` {
		t.Fatalf("encode: %q %v", s, err)
	}
	back, err := DecodeAttrs(s)
	if err != nil || back["a"] != "é\"x" || back["z"] != "1" {
		t.Errorf("decode: %v %v", back, err)
	}
	if s, _ := EncodeAttrs(nil); s != "{}" {
		t.Errorf("empty attrs encode as %q", s)
	}
	if m, err := DecodeAttrs("{}"); m != nil || err != nil {
		t.Errorf("{} decodes as %v %v", m, err)
	}
	if _, err := DecodeAttrs("{not json"); err == nil {
		t.Error("bad attrs decoded without error")
	}
}

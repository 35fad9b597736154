package scrapers

import (
	"context"
	"strings"
	"testing"
)

type nopSource struct{}

func (nopSource) Collect(context.Context, Emitter) error { return nil }

func nopFactory(Config) (Source, error) { return nopSource{}, nil }

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestRegisterRefusesBadEntries(t *testing.T) {
	name := "test-registry-source"
	info := Info{Name: name, Provider: "test-registry-provider", Tier: "specialist"}
	Register(info, nopFactory)
	if _, f, ok := Lookup(name); !ok || f == nil {
		t.Fatal("registered source not found")
	}
	mustPanic(t, "duplicate", func() { Register(info, nopFactory) })
	mustPanic(t, "no provider", func() { Register(Info{Name: "x-no-provider"}, nopFactory) })
	mustPanic(t, "bad tier", func() { Register(Info{Name: "x-bad-tier", Provider: "x-bad-tier", Tier: "cheap"}, nopFactory) })
	mustPanic(t, "empty name", func() { Register(Info{}, nopFactory) })
	mustPanic(t, "nil factory", func() { Register(Info{Name: "x-nil"}, nil) })
	found := false
	for _, n := range Names() {
		found = found || n == name
	}
	if !found {
		t.Error("Names does not list the source")
	}
}

func TestDecodeOptionsRejectsUnknownKeys(t *testing.T) {
	var o struct {
		Regions []string `json:"regions"`
	}
	c := Config{Name: "azure", Options: map[string]any{"regions": []any{"eastus"}}}
	if err := c.DecodeOptions(&o); err != nil || len(o.Regions) != 1 {
		t.Fatalf("%v %v", o, err)
	}
	c.Options["regoins"] = []any{"x"}
	err := c.DecodeOptions(&o)
	if err == nil || !strings.Contains(err.Error(), "azure: options") || !strings.Contains(err.Error(), "regoins") {
		t.Errorf("unknown key: err = %v", err)
	}
	if got := (Config{}).EndpointOr("https://default"); got != "https://default" {
		t.Errorf("EndpointOr = %q", got)
	}
}

func TestRejectUsesOptionalAbility(t *testing.T) {
	plain := EmitterFunc(nil)
	if Reject(plain, "x", "y") {
		t.Error("Reject claimed success on an emitter without the ability")
	}
}

package schemas

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestResolveGPU(t *testing.T) {
	c, err := LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	family := func(model string) []string { return c.GPUFamilies()[model] }
	for _, tc := range []struct {
		in, how string
		want    []string
	}{
		{"H100-SXM-80GB", "exact", []string{"H100-SXM-80GB"}},
		{"h100-sxm-80gb", "case", []string{"H100-SXM-80GB"}},
		{"h100", "family", family("H100")},
		{"H100", "family", family("H100")},
		{"H100 SXM", "variant", []string{"H100-SXM-80GB"}},
		// every A100 80GB, with the rows whose provider leaves the form factor unstated
		{"a100-80gb", "variant", []string{"A100-SXM-80GB", "A100-PCIE-80GB", "A100-UNSTATED-80GB"}},
		{"A100 PCIe 40GB", "case", []string{"A100-PCIE-40GB"}},
		{"a6000", "alias", []string{"RTXA6000-PCIE-48GB"}},
		{"L40S", "family", family("L40S")},
		{"unknown", "exact", []string{UnknownGPU}},
	} {
		m, err := c.ResolveGPU(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if m.How != tc.how || !slices.Equal(m.Names, tc.want) || m.Input != tc.in || m.Kind != "gpu" {
			t.Errorf("%q: %+v, want %s %v", tc.in, m, tc.how, tc.want)
		}
	}
	if m := family("H100"); len(m) < 3 {
		t.Errorf("the catalog's H100 family is %v: every variant expected", m)
	}
	for _, in := range []string{"H1OO", "h100-sxm-99gb", "Z9000", "H100-SXM-80GB' OR '1'='1", "h100 sxm please"} {
		_, err := c.ResolveGPU(in)
		var nm *NoMatchError
		if !errors.As(err, &nm) {
			t.Errorf("%q: %v, want a NoMatchError", in, err)
			continue
		}
		if in == "H1OO" && !slices.Contains(nm.Suggestions, "H100") {
			t.Errorf("%q: suggestions %v lack H100", in, nm.Suggestions)
		}
		if !strings.Contains(err.Error(), in) {
			t.Errorf("%q: error %q does not name the input", in, err)
		}
	}
	_, err = c.ResolveGPU("H1OO")
	if !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("error %q has no suggestions", err)
	}
}

func TestResolvePricing(t *testing.T) {
	for in, want := range map[string][]string{
		"on_demand": {OnDemand}, "On-Demand": {OnDemand}, "SPOT": {Spot}, "ondemand": {OnDemand},
		"reserved": {Reserved1Y, Reserved3Y}, "commitment_12m": {"commitment_12m"},
	} {
		m, err := ResolvePricing(in)
		if err != nil || !slices.Equal(m.Names, want) {
			t.Errorf("%q: %+v %v, want %v", in, m, err, want)
		}
	}
	_, err := ResolvePricing("preemptible")
	var nm *NoMatchError
	if !errors.As(err, &nm) || nm.Kind != "pricing" {
		t.Errorf("preemptible: %v", err)
	}
	_, err = ResolvePricing("spto")
	if !errors.As(err, &nm) || !slices.Contains(nm.Suggestions, Spot) {
		t.Errorf("spto: %v", err)
	}
}

func TestResolveName(t *testing.T) {
	known := []string{"us-east-1", "eastus", "europe-west4"}
	m, err := ResolveName("region", "US East 1", known)
	if err != nil || !slices.Equal(m.Names, []string{"us-east-1"}) || m.How != "case" {
		t.Errorf("US East 1: %+v %v", m, err)
	}
	m, err = ResolveName("region", "eastus", known)
	if err != nil || !m.Exact() {
		t.Errorf("eastus: %+v %v", m, err)
	}
	_, err = ResolveName("region", "us-east-2", known)
	var nm *NoMatchError
	if !errors.As(err, &nm) || !slices.Contains(nm.Suggestions, "us-east-1") {
		t.Errorf("us-east-2: %v", err)
	}
	_, err = ResolveName("provider", "lamdba", DefaultProviders().Names())
	if !errors.As(err, &nm) || !slices.Contains(nm.Suggestions, "lambda") {
		t.Errorf("lamdba: %v", err)
	}
}

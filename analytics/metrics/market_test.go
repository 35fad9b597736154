package metrics

import (
	"fmt"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// TestMetricsLabelsBounded: hostile regions of issue 29 fold into one "other"
// series (the cheapest of them), and a provider with thousands of regions gets at
// most maxRegionLabels+1 region labels.
func TestMetricsLabelsBounded(t *testing.T) {
	var rows []schemas.Observation
	for i, h := range textsafe.Hostile {
		rows = append(rows, schemas.Observation{GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, Tier: "marketplace",
			Provider: "vast", Region: h, PriceUSDGPUHour: 1 + float64(i)})
	}
	for i := 0; i < 5000; i++ {
		rows = append(rows, schemas.Observation{GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, Tier: "marketplace",
			Provider: "many", Region: fmt.Sprintf("r%04d", i), PriceUSDGPUHour: 2})
	}
	rows = append(rows, schemas.Observation{GPU: "H100-SXM-80GB", Pricing: schemas.OnDemand, Tier: "specialist",
		Provider: "lambda", Region: "us-east-1", PriceUSDGPUHour: 2.5})
	cheapest, _ := byLabels(rows)
	perProvider := map[string]int{}
	for w, v := range cheapest {
		perProvider[w.provider]++
		if w.region != "" && !textsafe.Boring(w.region) {
			t.Errorf("region label %.80q", w.region)
		}
		if w.provider == "vast" && w.region != textsafe.Other {
			t.Errorf("vast region %q kept", w.region)
		}
		if w.provider == "vast" && v != 1 {
			t.Errorf("folded vast price %v, want the cheapest (1)", v)
		}
	}
	if perProvider["vast"] != 1 || perProvider["many"] != maxRegionLabels+1 || perProvider["lambda"] != 1 {
		t.Errorf("series per provider %v", perProvider)
	}
	if cheapest[labelWhere{labelKey{"H100-SXM-80GB", schemas.OnDemand, "specialist"}, "lambda", "us-east-1"}] != 2.5 {
		t.Error("a boring region was folded")
	}
}

package analytics

import (
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

func TestCurrentOnly(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rows := []schemas.Observation{
		{Provider: "vast", SKU: "gone", ObservedAt: now.Add(-72 * time.Hour)},
		{Provider: "vast", SKU: "live", ObservedAt: now},
		{Provider: "vast", SKU: "edge", ObservedAt: now.Add(-24 * time.Hour)},
		{Provider: "lambda", SKU: "old-provider", ObservedAt: now.Add(-90 * 24 * time.Hour)},
	}
	got := CurrentOnly(rows, StaleAfter)
	var skus []string
	for _, o := range got {
		skus = append(skus, o.SKU)
	}
	if len(skus) != 3 || skus[0] != "live" || skus[1] != "edge" || skus[2] != "old-provider" {
		t.Errorf("kept %v, want [live edge old-provider]", skus)
	}
	if len(CurrentOnly(rows, 0)) != 4 {
		t.Error("stale 0 must keep every series")
	}
	if rows[0].SKU != "gone" {
		t.Error("input reordered")
	}
}

package cli

import (
	"context"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
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
	got := currentOnly(rows, 24*time.Hour)
	var skus []string
	for _, o := range got {
		skus = append(skus, o.SKU)
	}
	if len(skus) != 3 || skus[0] != "live" || skus[1] != "edge" || skus[2] != "old-provider" {
		t.Errorf("kept %v, want [live edge old-provider]", skus)
	}
	if len(currentOnly(rows, 0)) != 4 {
		t.Error("stale 0 must keep every series")
	}
	if rows[0].SKU != "gone" {
		t.Error("input reordered")
	}
}

func TestLazyFXLoadsOnce(t *testing.T) {
	loads := 0
	l := &lazyFX{load: func() ingest.FX { loads++; return ingest.StaticFX{"EUR": 1.1} }}
	if loads != 0 {
		t.Fatal("loaded before use")
	}
	for i := 0; i < 3; i++ {
		if r, err := l.Rate(context.Background(), "EUR", time.Now()); err != nil || r != 1.1 {
			t.Fatalf("rate %v %v", r, err)
		}
	}
	if loads != 1 {
		t.Errorf("loaded %d times, want once", loads)
	}
}

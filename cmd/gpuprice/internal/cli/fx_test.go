package cli

import (
	"context"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
)

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

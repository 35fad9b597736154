package all

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// The market as the mission names it: every provider must have a registered source.
var wantProviders = []string{"aws", "gcp", "azure", "oci", "coreweave", "lambda", "gmi", "crusoe", "together", "ovhcloud", "runpod", "vast"}

func TestEveryRegisteredSourceIsDocumentedAndTested(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	providers := schemas.DefaultProviders()
	for _, name := range scrapers.Names() {
		info, f, ok := scrapers.Lookup(name)
		if !ok || f == nil || info.Name != name {
			t.Errorf("%s: registry entry broken", name)
			continue
		}
		if info.Provider == "" || info.Method == "" || len(info.Pricing) == 0 || info.DefaultEndpoint == "" || info.Schedule == "" {
			t.Errorf("%s: incomplete Info %+v", name, info)
		}
		if _, known := providers[info.Provider]; !known {
			t.Errorf("%s: provider %q is not in the provider catalog", name, info.Provider)
		}
		for _, p := range info.Pricing {
			if !schemas.ValidPricing(p) {
				t.Errorf("%s: pricing kind %q is not valid", name, p)
			}
		}
		if !strings.Contains(string(readme), "| `"+name+"` |") {
			t.Errorf("%s: no row in README.md's source table", name)
		}
		if fi, err := os.Stat(filepath.Join("..", name, "testdata")); err != nil || !fi.IsDir() {
			t.Errorf("%s: no testdata/ folder of recorded responses", name)
		}
	}
}

func TestEveryProviderHasASource(t *testing.T) {
	have := map[string]bool{}
	for _, name := range scrapers.Names() {
		info, _, _ := scrapers.Lookup(name)
		have[info.Provider] = true
	}
	var missing []string
	for _, p := range wantProviders {
		if !have[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		t.Logf("providers without a source yet: %v", missing)
	}
}

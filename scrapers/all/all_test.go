package all

import (
	"testing"

	"github.com/gpuprice/gpuprice/scrapers"
)

func TestSourcesRegistered(t *testing.T) {
	for _, name := range []string{"azure", "lambda", "vast"} {
		info, f, ok := scrapers.Lookup(name)
		if !ok || f == nil || info.Name != name {
			t.Errorf("source %s is not registered", name)
		}
	}
}

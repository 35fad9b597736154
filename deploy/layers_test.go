package deploy_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the import path prefix of gpuprice's packages.
const module = "github.com/gpuprice/gpuprice/"

// layerOf is the layer of a package (docs/architecture.md, "Layers"): a package
// may import only packages of its own top-level folder or of a lower layer. cmd and
// deploy wire everything; ingest/fetch, the one HTTP client, sits below the sources
// that request through it and imports only schemas.
func layerOf(pkg string) (int, bool) {
	if pkg == "ingest/fetch" || strings.HasPrefix(pkg, "ingest/fetch/") {
		return 2, true
	}
	switch top, _, _ := strings.Cut(pkg, "/"); top {
	case "schemas":
		return 1, true
	case "scrapers", "store":
		return 3, true
	case "ingest":
		return 4, true
	case "analytics":
		return 5, true
	case "cmd", "deploy":
		return 6, true
	}
	return 0, false
}

// upward are the imports that still run up a layer, each to be removed: none is
// left (the figure checks of the conformance suite moved to analytics/figurestest).
var upward = []string{}

// TestImportsRunDown fails when a non-test import of a gpuprice package runs up a
// layer or sideways between scrapers and store, and when an import listed in
// upward no longer exists (the list only shrinks).
func TestImportsRunDown(t *testing.T) {
	if testing.Short() {
		t.Skip("go list over the module")
	}
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var found []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from := strings.TrimPrefix(p.ImportPath, module)
		lf, ok := layerOf(from)
		if !ok {
			t.Errorf("%s: in no layer (docs/architecture.md)", from)
			continue
		}
		topFrom, _, _ := strings.Cut(from, "/")
		for _, imp := range p.Imports {
			to, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			lt, _ := layerOf(to)
			topTo, _, _ := strings.Cut(to, "/")
			if topTo == topFrom && lt == lf {
				continue // within its own folder
			}
			if lt > lf || lt == lf && lf != 6 {
				found = append(found, from+" -> "+to)
			}
		}
	}
	for _, e := range found {
		if !slices.Contains(upward, e) {
			t.Errorf("import runs up a layer: %s", e)
		}
	}
	for _, e := range upward {
		if !slices.Contains(found, e) {
			t.Errorf("listed in upward but gone: %s (remove it from the list)", e)
		}
	}
}

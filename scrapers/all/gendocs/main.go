// Command gendocs writes the parts of README.md (the source table) and
// deploy/gpuprice.example.yaml (the sources section) that are generated from the
// source registry. Run it with `go generate ./scrapers/all`; scrapers/all's tests fail
// when the files drift from the registry.
//
// Usage: gendocs README.md deploy/gpuprice.example.yaml
package main

import (
	"fmt"
	"os"

	"github.com/gpuprice/gpuprice/scrapers"
	_ "github.com/gpuprice/gpuprice/scrapers/all"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gendocs README.md gpuprice.example.yaml")
		os.Exit(2)
	}
	for _, f := range []struct{ path, begin, end, content string }{
		{os.Args[1], scrapers.ReadmeBegin, scrapers.ReadmeEnd, scrapers.ReadmeTable()},
		{os.Args[2], scrapers.SampleBegin, scrapers.SampleEnd, scrapers.SampleSources()},
	} {
		if err := splice(f.path, f.begin, f.end, f.content); err != nil {
			fmt.Fprintln(os.Stderr, "gendocs:", err)
			os.Exit(1)
		}
	}
}

func splice(path, begin, end, content string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := scrapers.Splice(string(data), begin, end, content)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if out == string(data) {
		return nil
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

package all

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	"gopkg.in/yaml.v3"

	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

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
		if u, err := url.Parse(info.DefaultEndpoint); err != nil || u.Scheme != "https" || u.Host == "" {
			t.Errorf("%s: default endpoint %q is not an https URL", name, info.DefaultEndpoint)
		}
		if _, err := os.Stat(filepath.Join("..", name, "testdata", "recorded.json")); err != nil {
			t.Errorf("%s: no testdata/recorded.json (its responses in the recorded example): %v", name, err)
		}
		if d := info.Doc; d.ProviderTitle == "" || d.Method == "" || d.OnDemand == "" || d.Credentials == "" {
			t.Errorf("%s: incomplete README row %+v", name, d)
		}
		if !schemas.ValidTier(info.Tier) || !schemas.ValidInterconnect(info.Interconnect) {
			t.Errorf("%s: tier %q, interconnect %q", name, info.Tier, info.Interconnect)
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

// TestEveryProviderFolderIsRegistered: a provider is one folder under scrapers/
// and one registry line (its import in all.go). Every such folder must register the
// source of its name, and every registered source must have its folder; no list of
// the providers is kept here.
func TestEveryProviderFolderIsRegistered(t *testing.T) {
	entries, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	notProviders := map[string]bool{"all": true, "internal": true, "scrapertest": true, "fx": true}
	folders := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() && !notProviders[e.Name()] {
			folders[e.Name()] = true
		}
	}
	registered := map[string]bool{}
	for _, name := range scrapers.Names() {
		registered[name] = true
		if !folders[name] {
			t.Errorf("source %s is registered but has no folder scrapers/%s", name, name)
		}
	}
	for f := range folders {
		if !registered[f] {
			t.Errorf("scrapers/%s registers no source of its name: add its import to all.go", f)
		}
	}
	if len(registered) == 0 {
		t.Fatal("no source registered")
	}
}

// TestGeneratedDocs fails when README.md's source table or the sources section of
// deploy/gpuprice.example.yaml drifts from the registry: run go generate ./scrapers/all.
func TestGeneratedDocs(t *testing.T) {
	for _, f := range []struct{ path, begin, end, want string }{
		{filepath.Join("..", "..", "README.md"), scrapers.ReadmeBegin, scrapers.ReadmeEnd, scrapers.ReadmeTable()},
		{filepath.Join("..", "..", "deploy", "gpuprice.example.yaml"), scrapers.SampleBegin, scrapers.SampleEnd, scrapers.SampleSources()},
	} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := scrapers.Splice(string(data), f.begin, f.end, f.want)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(data) {
			t.Errorf("%s drifted from the source registry: run go generate ./scrapers/all", f.path)
		}
	}
}

// TestSampleOptions builds every source from its sample options with each commented
// option turned on: the sample configuration only shows options the source accepts.
func TestSampleOptions(t *testing.T) {
	for _, name := range scrapers.Names() {
		info, factory, _ := scrapers.Lookup(name)
		if info.SampleOptions == "" {
			if _, err := factory(scrapertest.Config(t, name, "", map[string]any{"no_such_option": 1})); err == nil {
				t.Errorf("%s: has no sample options but accepts an unknown one", name)
			}
			continue
		}
		var lines []string
		for _, l := range strings.Split(info.SampleOptions, "\n") {
			lines = append(lines, strings.TrimPrefix(l, "# "))
		}
		var opts map[string]any
		if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &opts); err != nil || len(opts) == 0 {
			t.Errorf("%s: sample options do not parse once uncommented: %v", name, err)
			continue
		}
		for _, secret := range info.SecretEnv {
			t.Setenv(secret, "sample-secret-value")
		}
		if _, err := factory(scrapertest.Config(t, name, "", opts)); err != nil {
			t.Errorf("%s: sample options %v refused: %v", name, opts, err)
		}
	}
}

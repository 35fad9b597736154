package aws

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
)

// spotAdvisorCopy is the real Spot Advisor file of 2025-06-28 (a public copy kept by
// alexei-led/spotinfo, internal/spot/data/spot-advisor-data.json @05e9331).
func spotAdvisorCopy(t *testing.T) []byte {
	t.Helper()
	f, err := os.Open("testdata/spot_advisor/input.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The real file, served over HTTP: the bands of the GPU instance types hand-checked
// against the file (jq '.spot_advisor["us-east-1"].Linux["p5.48xlarge"]' → {s: 52, r: 4}).
func TestFetchSpotAdvisorRealCopy(t *testing.T) {
	body := spotAdvisorCopy(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/spot-advisor-data.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c := fetch.New(fetch.Options{Timeout: 5 * time.Second,
		Backoff: fetch.Backoff{MaxTries: 2, Initial: time.Millisecond, Max: time.Millisecond}})
	now := time.Date(2025, 6, 28, 12, 0, 0, 0, time.UTC)
	res, err := FetchSpotAdvisor(t.Context(), c, srv.URL+"/spot-advisor-data.json", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Bands) != 5 || res.Bands[4].Label != ">20%" || res.Bands[4].Max != 100 || res.Bands[1].Max != 11 {
		t.Errorf("bands = %+v", res.Bands)
	}
	// 33 regions, each with a Windows section; non-GPU Linux types are passed over.
	if res.Skipped["Windows"] != 33 || res.Skipped["not a GPU instance type"] < 10000 || len(res.Rejects) != 0 {
		t.Errorf("skipped %v, rejects %v", res.Skipped, res.Rejects)
	}
	by := map[string]schemas.Signal{}
	for _, s := range res.Signals {
		if s.Provider != "aws" || s.Kind != schemas.SignalInterruption || !s.EffectiveAt.Equal(now) ||
			s.Source != SourceSpotAdvisor || s.SourceURL != srv.URL+"/spot-advisor-data.json" || s.Validate() != nil {
			t.Fatalf("signal %+v", s)
		}
		key := s.SKU + " " + s.Region
		if _, dup := by[key]; dup {
			t.Fatalf("two signals for %s", key)
		}
		by[key] = s
	}
	for _, c := range []struct {
		key, label string
		band       float64
		savings    string
	}{
		{"p5.48xlarge us-east-1", ">20%", 4, "52"},
		{"p5.48xlarge us-west-2", "5-10%", 1, "46"},
		{"p4d.24xlarge us-east-1", "10-15%", 2, "67"},
		{"p4d.24xlarge eu-west-1", ">20%", 4, "34"},
		{"g5.xlarge eu-west-1", "10-15%", 2, "56"},
		{"g6e.xlarge us-east-1", "5-10%", 1, "58"},
	} {
		s, ok := by[c.key]
		if !ok {
			t.Errorf("%s: no signal", c.key)
			continue
		}
		if s.Value != c.band || s.Label != c.label || s.Attrs["savings_pct"] != c.savings {
			t.Errorf("%s = %v %q savings %s, want %v %q %s", c.key, s.Value, s.Label, s.Attrs["savings_pct"],
				c.band, c.label, c.savings)
		}
	}
	if p5 := by["p5.48xlarge us-east-1"]; p5.Attrs["gpu_name"] != "NVIDIA H100 SXM" || p5.Attrs["gpu_count"] != "8" ||
		p5.Attrs["band_max"] != "100" {
		t.Errorf("p5.48xlarge attrs %v", p5.Attrs)
	}
	if _, ok := by["p5.48xlarge eu-west-1"]; ok {
		t.Error("a signal for a type the file does not list in the region")
	}
	// p5 sizes in the file's Linux sections, by band: hand-counted with jq.
	bands := map[float64]int{}
	for _, s := range res.Signals {
		if strings.HasPrefix(s.SKU, "p5.") {
			bands[s.Value]++
		}
	}
	if bands[0] != 2 || bands[1] != 5 || bands[2] != 2 || bands[3] != 1 || bands[4] != 1 {
		t.Errorf("p5 signals by band = %v", bands)
	}
}

func TestParseSpotAdvisorRules(t *testing.T) {
	now := time.Date(2025, 6, 28, 12, 0, 0, 0, time.UTC)
	in := `{"ranges":[{"index":0,"label":"<5%","dots":0,"max":5},{"index":4,"label":">20%","dots":4,"max":100}],
	"spot_advisor":{"us-east-1":{"Linux":{"p5.48xlarge":{"s":52,"r":4},"g5.xlarge":{"s":59,"r":7},
	"g6.xlarge":{"s":60},"m5.large":{"s":40,"r":0}},"Windows":{"g5.xlarge":{"s":50,"r":0}}}}}`
	res, err := ParseSpotAdvisor(strings.NewReader(in), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Signals) != 1 || res.Signals[0].SKU != "p5.48xlarge" || res.Signals[0].Value != 4 {
		t.Errorf("signals %+v", res.Signals)
	}
	if len(res.Rejects) != 2 || res.Rejects[0].Reason != "range index 7 not in ranges" ||
		res.Rejects[1].Reason != "no range index (r)" {
		t.Errorf("rejects %+v", res.Rejects)
	}
	if res.Skipped["Windows"] != 1 || res.Skipped["not a GPU instance type"] != 1 {
		t.Errorf("skipped %v", res.Skipped)
	}
	for _, bad := range []string{`{}`, `{"ranges":[]}`, `not json`, `{"ranges":[{"index":0}],"spot_advisor":{}}`} {
		if _, err := ParseSpotAdvisor(strings.NewReader(bad), now); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

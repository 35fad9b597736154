package gcpcalc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	_ "github.com/gpuprice/gpuprice/scrapers/all"
)

// pricing writes a pricing.yml of the calculator's shape (test values, not GCP's):
// a GPU machine type in two regions, one without spot, and a machine without GPU.
func pricing(h100, spot float64) string {
	return fmt.Sprintf(`---
about:
  timestamp: 1785391997
compute:
  instance:
    a3-highgpu-8g:
      cost:
        us-central1:
          hour: %v
          hour_spot: %v
          month: 1
        europe-west4:
          hour: 90.5
      cpu: 208
      h100-80gb: 8
      ram: 1872
    g4-standard-6:
      cost:
        us-central1:
          hour: 1.5
          hour_spot: 0.6
      cpu: 6
      rtx6000: 0.125
    n2-standard-2:
      cost:
        us-central1:
          hour: 0.1
      cpu: 2
      ram: 8
  license: {}
`, h100, spot)
}

func TestParse(t *testing.T) {
	s := Snapshot{Commit: "abc", Time: time.Date(2026, 7, 30, 6, 13, 37, 0, time.UTC)}
	rows, st, err := Parse(strings.NewReader(pricing(88.49, 30.1)), s, "origin", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range rows {
		got = append(got, fmt.Sprintf("%s %s %s %s %v×%v %v", o.SKU, o.Region, o.Pricing, o.GPUName, o.GPUCount, o.GPUMemoryGB, o.PriceNative))
		if !o.ObservedAt.Equal(s.Time) || o.SourceURL != "gcp-pricing-calculator:abc:pricing.yml" || o.SourceKind != "import" ||
			o.Attrs["generated"] != "2026-07-30T06:13:17Z" || o.Attrs["original_source"] != "origin" {
			t.Errorf("row %+v", o)
		}
	}
	want := []string{
		"a3-highgpu-8g europe-west4 on_demand H100 80GB 8×80 90.5",
		"a3-highgpu-8g us-central1 on_demand H100 80GB 8×80 88.49",
		"a3-highgpu-8g us-central1 spot H100 80GB 8×80 30.1",
		"g4-standard-6 us-central1 on_demand RTX PRO 6000 Blackwell Server Edition 0.125×96 1.5",
		"g4-standard-6 us-central1 spot RTX PRO 6000 Blackwell Server Edition 0.125×96 0.6",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st.MachineTypes != 3 || st.NoGPU != 1 {
		t.Errorf("stats %+v", st)
	}
	rows, st, _ = Parse(strings.NewReader(pricing(88.49, 30.1)), s, "origin", []string{"europe-west4"})
	if len(rows) != 1 || st.OtherRegion != 2 {
		t.Errorf("regions: %d rows, %+v", len(rows), st)
	}
	if _, _, err := Parse(strings.NewReader("compute: [1, 2"), s, "", nil); err == nil {
		t.Error("broken YAML: no error")
	}
}

type memSink struct{ rows []schemas.Observation }

func (m *memSink) WriteObservations(_ context.Context, obs []schemas.Observation) error {
	m.rows = append(m.rows, obs...)
	return nil
}
func (m *memSink) WriteQuarantine(context.Context, []schemas.Quarantined) error { return nil }
func (m *memSink) WriteRun(context.Context, schemas.Run) error                  { return nil }

func TestImportSampledWindow(t *testing.T) {
	dir := t.TempDir()
	git := func(env []string, args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(nil, "init", "-q", "-b", "main")
	git(nil, "config", "user.email", "calc@example.com")
	git(nil, "config", "user.name", "calc")
	for week := 0; week < 6; week++ {
		at := time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC).AddDate(0, 0, 7*week)
		if err := os.WriteFile(filepath.Join(dir, Path), []byte(pricing(88+float64(week), 30+float64(week))), 0o644); err != nil {
			t.Fatal(err)
		}
		git(nil, "add", Path)
		date := at.Format(time.RFC3339)
		git([]string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, "commit", "-q", "-m", "Pricing updated")
	}
	cat, err := schemas.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	run := &ingest.Run{Sink: sink, Normalizer: &ingest.Normalizer{GPUs: cat, Providers: schemas.DefaultProviders()},
		Source: "import:gcp-pricing-calculator", RunID: "r", SourceKind: schemas.SourceImport}
	im := &Importer{Repo: dir, Run: run, Since: time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC),
		Every: 14 * 24 * time.Hour, Regions: []string{"us-central1"}}
	res, err := im.Import(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Weeks 1..5 (Jan 8 … Feb 5) in 14-day periods from the epoch (Jan 1, 15, 29 and
	// Feb 12 start one): Jan 8, Jan 15, Jan 29.
	var days []string
	h100 := map[string]string{}
	for _, o := range sink.rows {
		if o.SKU == "a3-highgpu-8g" && o.Pricing == schemas.OnDemand {
			d := o.ObservedAt.Format("01-02")
			days = append(days, d)
			h100[d] = fmt.Sprintf("%s %.4f", o.GPU, o.PriceUSDGPUHour)
		}
	}
	sort.Strings(days)
	if res.Snapshots != 3 || res.Imported != 3 || fmt.Sprint(days) != "[01-08 01-15 01-29]" {
		t.Fatalf("%+v, H100 on-demand rows on %v", res, days)
	}
	if h100["01-15"] != "H100-SXM-80GB 11.2500" {
		t.Errorf("H100 on Jan 15: %q, want H100-SXM-80GB at 90/8 a GPU-hour", h100["01-15"])
	}
}

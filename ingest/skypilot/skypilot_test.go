package skypilot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/resumable"
	"github.com/gpuprice/gpuprice/schemas"
	// The providers' tiers and naming rules (AWS instance families) register
	// with their sources.
	_ "github.com/gpuprice/gpuprice/scrapers/all"
)

// step is one commit of the test catalog: files to write (path → testdata file, ""
// to delete) at a committer time.
type step struct {
	at    time.Time
	files map[string]string
}

func day(m, d int) time.Time { return time.Date(2026, time.Month(m), d, 10, 0, 0, 0, time.UTC) }

var steps = []step{
	{day(1, 5), map[string]string{
		"catalogs/v7/lambda/vms.csv": "lambda_v1.csv", "catalogs/v6/lambda/vms.csv": "lambda_v1.csv",
		"catalogs/v7/aws/vms.csv": "aws_v1.csv",
	}},
	{day(2, 5), map[string]string{
		"catalogs/v7/lambda/vms.csv": "lambda_v2.csv", "catalogs/v7/gcp/vms.csv": "gcp_v1.csv", "README.md": "#",
	}},
	{day(3, 5), map[string]string{
		"catalogs/v7/aws/vms.csv": "aws_v2.csv", "catalogs/v7/runpod/vms.csv": "runpod_v1.csv",
		"catalogs/v7/aws/images.csv": "#",
	}},
	{day(4, 5), map[string]string{"catalogs/v7/gcp/vms.csv": "", "README.md": "# catalog"}},
}

// buildRepo makes the test catalog repository and returns its directory.
func buildRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	run := func(env []string, args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(nil, "init", "-q", "-b", "master")
	run(nil, "config", "user.email", "catalog@example.com")
	run(nil, "config", "user.name", "catalog")
	for i, s := range steps {
		for path, src := range s.files {
			full := filepath.Join(dir, path)
			if src == "" {
				run(nil, "rm", "-q", path)
				continue
			}
			data := []byte(src + "\n")
			if strings.HasSuffix(src, ".csv") {
				var err error
				if data, err = os.ReadFile(filepath.Join("testdata", src)); err != nil {
					t.Fatal(err)
				}
			}
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, data, 0o644); err != nil {
				t.Fatal(err)
			}
			run(nil, "add", path)
		}
		date := s.at.Format(time.RFC3339)
		run([]string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, "commit", "-q", "-m", fmt.Sprintf("update %d", i+1))
	}
	return dir
}

func TestSnapshots(t *testing.T) {
	repo := buildRepo(t)
	snaps, err := Snapshots(context.Background(), repo)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range snaps {
		got = append(got, fmt.Sprintf("%s %s %s %s", s.Time.Format("01-02"), s.Version, s.Cloud, s.Path))
		if len(s.Commit) != 40 {
			t.Errorf("commit %q", s.Commit)
		}
	}
	want := []string{
		"01-05 v6 lambda catalogs/v6/lambda/vms.csv",
		"01-05 v7 aws catalogs/v7/aws/vms.csv",
		"01-05 v7 lambda catalogs/v7/lambda/vms.csv",
		"02-05 v7 gcp catalogs/v7/gcp/vms.csv",
		"02-05 v7 lambda catalogs/v7/lambda/vms.csv",
		"03-05 v7 aws catalogs/v7/aws/vms.csv",
		"03-05 v7 runpod catalogs/v7/runpod/vms.csv",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("snapshots:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := Snapshots(context.Background(), t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Errorf("not a repository: %v", err)
	}
}

func parseFile(t *testing.T, name, cloud string) ([]schemas.Observation, []Reject, Stats) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := Snapshot{Commit: "0123456789abcdef0123456789abcdef01234567", Time: day(3, 5), Path: "catalogs/v7/" + cloud + "/vms.csv", Version: "v7", Cloud: cloud}
	rows, rejects, st, err := Parse(f, s, "https://github.com/skypilot-org/skypilot-catalog.git")
	if err != nil {
		t.Fatal(err)
	}
	return rows, rejects, st
}

func key(o schemas.Observation) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%v|%v|%s|%v", o.Provider, o.SKU, o.Region, o.Zone, o.Pricing, o.PriceNative, o.GPUCount, o.GPUName, o.GPUMemoryGB)
}

func TestParseAWS(t *testing.T) {
	rows, rejects, st := parseFile(t, "aws_v2.csv", "aws")
	var got []string
	for _, o := range rows {
		got = append(got, key(o))
		if !o.ObservedAt.Equal(day(3, 5)) || !o.EffectiveAt.Equal(day(3, 5)) || o.SourceKind != schemas.SourceImport ||
			o.Currency != "USD" || o.Unit != schemas.UnitHour ||
			o.SourceURL != "skypilot-catalog:0123456789abcdef0123456789abcdef01234567:catalogs/v7/aws/vms.csv" ||
			o.Attrs["original_source"] != "https://github.com/skypilot-org/skypilot-catalog.git" || o.Attrs["catalog_version"] != "v7" {
			t.Errorf("row fields: %+v", o)
		}
	}
	want := []string{
		"aws|p3.2xlarge|us-east-1||on_demand|3.06|1|V100|16",
		"aws|p3.2xlarge|us-east-1|use1-az1|spot|1.0012|1|V100|16",
		"aws|p3.2xlarge|us-east-1|use1-az2|spot|0.9543|1|V100|16",
		"aws|p4d.24xlarge|us-east-1||on_demand|32.7726|8|A100|40",
		"aws|g5.xlarge|us-west-2||on_demand|1.006|1|A10G|24",
		"aws|g5.xlarge|us-west-2|usw2-az1|spot|0.4217|1|A10G|24",
		"aws|p5.48xlarge|us-east-1||on_demand|98.32|8|H100|80",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(rejects) != 1 || !strings.Contains(rejects[0].Reason, `SpotPrice "x.y" is not a number`) || !strings.Contains(rejects[0].Raw, "p5.48xlarge") {
		t.Errorf("rejects %+v", rejects)
	}
	if st.Lines != 6 || st.NoGPU != 1 || st.NoPrice != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestParseOtherLayouts(t *testing.T) {
	rows, rejects, st := parseFile(t, "gcp_v1.csv", "gcp")
	if len(rows) != 2 || rows[0].SKU != "T4:1" || rows[0].Attrs["gpu_only"] != "true" || rows[1].Zone != "us-central1-a" ||
		len(rejects) != 1 || !strings.Contains(rejects[0].Reason, `AcceleratorCount "four"`) || st.NoGPU != 1 {
		t.Errorf("gcp: rows %+v rejects %+v stats %+v", rows, rejects, st)
	}
	rows, _, _ = parseFile(t, "runpod_v1.csv", "runpod")
	if len(rows) != 1 || key(rows[0]) != "runpod|1x_H100-80GB_SECURE|CA||on_demand|2.99|1|H100-80GB|80" {
		t.Errorf("runpod: %+v", rows)
	}
	rows, _, st = parseFile(t, "lambda_v1.csv", "lambda")
	if len(rows) != 5 || st.NoGPU != 1 || st.NoPrice != 5 || key(rows[0]) != "lambda|gpu_8x_v100|us-east-1||on_demand|4.4|8|V100|16" {
		t.Errorf("lambda: %d rows %+v, stats %+v", len(rows), rows, st)
	}
	if _, _, _, err := Parse(strings.NewReader("InstanceType,Price\nx,1\n"), Snapshot{Path: "p", Commit: "c"}, ""); err == nil {
		t.Error("header without AcceleratorName accepted")
	}
}

type memSink struct {
	rows map[string]schemas.Observation
	quar []schemas.Quarantined
	runs []schemas.Run
}

func newMemSink() *memSink { return &memSink{rows: map[string]schemas.Observation{}} }

func (m *memSink) WriteObservations(_ context.Context, obs []schemas.Observation) error {
	for _, o := range obs {
		m.rows[o.SeriesKey()+"|"+o.EffectiveAt.String()] = o
	}
	return nil
}
func (m *memSink) WriteQuarantine(_ context.Context, q []schemas.Quarantined) error {
	m.quar = append(m.quar, q...)
	return nil
}
func (m *memSink) WriteRun(_ context.Context, r schemas.Run) error {
	m.runs = append(m.runs, r)
	return nil
}

// dump lists a sink's rows without run ids, sorted.
func (m *memSink) dump() string {
	var out []string
	for k, o := range m.rows {
		out = append(out, fmt.Sprintf("%s %s %v %s", k, o.GPU, o.PriceUSDGPUHour, o.SourceURL))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func importer(t *testing.T, repo string, sink *memSink, cpPath string) *Importer {
	cat, err := schemas.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	run := &ingest.Run{Sink: sink, Normalizer: &ingest.Normalizer{GPUs: cat, Providers: schemas.DefaultProviders()},
		Source: "import:skypilot-catalog", RunID: "r", SourceKind: schemas.SourceImport}
	return &Importer{Repo: repo, Run: run, Checkpoint: resumable.Checkpoint{Path: cpPath}}
}

func TestImportResumesAndIsIdempotent(t *testing.T) {
	repo := buildRepo(t)
	ctx := context.Background()

	// Uninterrupted.
	full := newMemSink()
	im := importer(t, repo, full, filepath.Join(t.TempDir(), "cp.json"))
	res, err := im.Import(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Snapshots != 7 || res.Imported != 7 || len(full.rows) == 0 {
		t.Fatalf("full import: %+v, %d rows", res, len(full.rows))
	}
	if len(full.quar) != 2 {
		t.Errorf("quarantined %d rows, want 2 (aws x.y, gcp four): %+v", len(full.quar), full.quar)
	}
	// Imported again: the checkpoint skips everything.
	again, err := im.Import(ctx)
	if err != nil || again.Imported != 0 || again.Skipped != 7 {
		t.Fatalf("second import: %+v, %v", again, err)
	}
	// From scratch into the same store: nothing new either.
	before := full.dump()
	im.Restart = true
	if _, err := im.Import(ctx); err != nil || full.dump() != before {
		t.Fatalf("restarted import changed the store (%v)", err)
	}

	// Interrupted after 3 snapshots, then resumed.
	part := newMemSink()
	cp := filepath.Join(t.TempDir(), "cp.json")
	im = importer(t, repo, part, cp)
	cctx, cancel := context.WithCancel(ctx)
	im.Progress = func(done, total int, s Snapshot, rows int) {
		if done == 3 {
			cancel()
		}
	}
	res, err = im.Import(cctx)
	if !errors.Is(err, context.Canceled) || res.Imported != 3 {
		t.Fatalf("interrupted import: %+v, %v", res, err)
	}
	im = importer(t, repo, part, cp)
	res, err = im.Import(ctx)
	if err != nil || res.Skipped != 3 || res.Imported != 4 {
		t.Fatalf("resumed import: %+v, %v", res, err)
	}
	if got := part.dump(); got != before {
		t.Errorf("interrupted+resumed differs from uninterrupted:\n%s\n---\n%s", got, before)
	}

	// Canonical GPUs (names without a form factor that the catalog cannot place stay
	// "unknown": Lambda's A100 and V100, RunPod's H100) and the Lambda price change.
	var a6000 []float64
	gpus := map[string]string{}
	for _, o := range full.rows {
		if o.Provider == "lambda" && o.SKU == "gpu_1x_a6000" {
			a6000 = append(a6000, o.PriceUSDHour)
		}
		gpus[o.Provider+" "+o.SKU] = o.GPU
	}
	sort.Float64s(a6000)
	if fmt.Sprint(a6000) != "[0.5 0.8]" {
		t.Errorf("gpu_1x_a6000 prices %v, want [0.5 0.8] (one per snapshot)", a6000)
	}
	for sku, want := range map[string]string{
		"aws p5.48xlarge": "H100-SXM-80GB", "aws p4d.24xlarge": "A100-SXM-40GB", "aws g5.xlarge": "A10G-PCIE-24GB",
		"gcp T4:1": "T4-PCIE-16GB", "lambda gpu_2x_a6000": "RTXA6000-PCIE-48GB", "lambda gpu_8x_a100": schemas.UnknownGPU,
	} {
		if gpus[sku] != want {
			t.Errorf("%s: gpu %q, want %q", sku, gpus[sku], want)
		}
	}
}

func TestImportFilters(t *testing.T) {
	repo := buildRepo(t)
	sink := newMemSink()
	im := importer(t, repo, sink, filepath.Join(t.TempDir(), "cp.json"))
	im.Clouds, im.Versions = []string{"lambda"}, []string{"v7"}
	res, err := im.Import(context.Background())
	if err != nil || res.Snapshots != 2 || res.Imported != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	for _, o := range sink.rows {
		if o.Provider != "lambda" || !strings.Contains(o.SourceURL, "catalogs/v7/") {
			t.Errorf("row outside the filters: %+v", o)
		}
	}
}

func TestPendingWhenCommitLeftHistory(t *testing.T) {
	snaps := []Snapshot{{Commit: "a", Time: day(1, 1), Path: "p"}, {Commit: "b", Time: day(2, 1), Path: "p"}, {Commit: "c", Time: day(3, 1), Path: "q"}}
	got := Pending(snaps, Checkpoint{Files: map[string]Snapshot{"p": {Commit: "gone", Time: day(1, 15)}}})
	if len(got) != 2 || got[0].Commit != "b" || got[1].Commit != "c" {
		t.Errorf("Pending = %+v", got)
	}
}

func TestSample(t *testing.T) {
	at := func(d, h int) time.Time { return time.Date(2026, 1, d, h, 0, 0, 0, time.UTC) }
	var snaps []Snapshot
	for d := 1; d <= 9; d++ {
		for _, h := range []int{1, 9, 17} {
			snaps = append(snaps, Snapshot{Commit: fmt.Sprintf("a%d-%d", d, h), Time: at(d, h), Path: "aws"})
		}
		if d%2 == 1 {
			snaps = append(snaps, Snapshot{Commit: fmt.Sprintf("g%d", d), Time: at(d, 12), Path: "gcp"})
		}
	}
	var got []string
	for _, s := range Sample(snaps, 72*time.Hour) {
		got = append(got, s.Commit)
	}
	// 3-day periods from the epoch: 2026-01-01 is day 20454, a multiple of 3, so the
	// periods start on Jan 1, 4 and 7.
	if want := "[a1-1 g1 a4-1 g5 a7-1 g7]"; fmt.Sprint(got) != want {
		t.Errorf("Sample 3d = %v, want %s", got, want)
	}
	if n := len(Sample(snaps, 24*time.Hour)); n != 9+5 {
		t.Errorf("Sample 1d kept %d, want 14 (one a day per file)", n)
	}
	if n := len(Sample(snaps, 0)); n != len(snaps) {
		t.Errorf("Sample 0 kept %d of %d", n, len(snaps))
	}
}

func TestImportWindowSampleRegions(t *testing.T) {
	repo := buildRepo(t)
	sink := newMemSink()
	im := importer(t, repo, sink, filepath.Join(t.TempDir(), "cp.json"))
	im.Since, im.Until = day(2, 1), day(4, 1)
	im.Every = 60 * 24 * time.Hour
	im.Regions = []string{"us-east-1"}
	res, err := im.Import(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The snapshots of Feb and Mar: lambda and gcp on Feb 5, aws and runpod on Mar 5,
	// one per file in its 60-day period.
	if res.Snapshots != 4 || res.Imported != 4 || res.Stats.OtherRegion == 0 {
		t.Fatalf("%+v", res)
	}
	for _, o := range sink.rows {
		if o.Region != "us-east-1" || o.ObservedAt.Before(day(2, 1)) || !o.ObservedAt.Before(day(4, 1)) {
			t.Errorf("row outside the window or regions: %+v", o)
		}
	}
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// gitHistory makes a repository in a temporary directory: put writes a file (nil
// data removes it) and stages it; commit commits what was staged at the committer
// and author time date.
func gitHistory(t *testing.T) (dir string, put func(path string, data []byte), commit func(date string)) {
	t.Helper()
	dir = t.TempDir()
	git := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git(nil, "init", "-q", "-b", "master")
	git(nil, "config", "user.email", "catalog@example.com")
	git(nil, "config", "user.name", "catalog")
	put = func(path string, data []byte) {
		t.Helper()
		if data == nil {
			git(nil, "rm", "-q", path)
			return
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, path), data, 0o644); err != nil {
			t.Fatal(err)
		}
		git(nil, "add", path)
	}
	commit = func(date string) {
		t.Helper()
		git([]string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, "commit", "-q", "-m", "update "+date)
	}
	return dir, put, commit
}

// skypilotRepo builds a catalog repository with three commits from the fixtures of
// ingest/skypilot (the layout of skypilot-org/skypilot-catalog).
func skypilotRepo(t *testing.T) string {
	t.Helper()
	dir, putData, commit := gitHistory(t)
	put := func(path, fixture string) {
		data, err := os.ReadFile(filepath.Join("..", "..", "ingest", "skypilot", "testdata", fixture))
		if err != nil {
			t.Fatal(err)
		}
		putData(path, data)
	}
	put("catalogs/v7/lambda/vms.csv", "lambda_v1.csv")
	put("catalogs/v7/aws/vms.csv", "aws_v1.csv")
	commit("2026-01-05T10:00:00Z")
	put("catalogs/v7/lambda/vms.csv", "lambda_v2.csv")
	commit("2026-02-05T10:00:00Z")
	put("catalogs/v7/aws/vms.csv", "aws_v2.csv")
	put("catalogs/v7/runpod/vms.csv", "runpod_v1.csv")
	commit("2026-03-05T10:00:00Z")
	return dir
}

func TestImportSkyPilotCatalog(t *testing.T) {
	repo := skypilotRepo(t)
	cfg, _ := backfillConfig(t, "http://127.0.0.1:1")
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "sky.duckdb")
	out, errOut, code := runCtx(context.Background(), "--config", cfg, "--store", dsn, "import", "skypilot-catalog", repo)
	if code != 0 {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	// 5 Lambda rows twice, 6 AWS rows at the first commit and 7 at the third (p5's
	// spot price is quarantined), 1 RunPod row.
	if !regexp.MustCompile(`(?m)^import:skypilot-catalog\s+degraded\s+24\s+1\s+`).MatchString(out) {
		t.Errorf("summary:\n%s", out)
	}
	for _, line := range []string{"[1/5 snapshots] catalogs/v7/aws/vms.csv @ ", "[5/5 snapshots] catalogs/v7/runpod/vms.csv"} {
		if !strings.Contains(errOut, line) {
			t.Errorf("progress line %q missing:\n%s", line, errOut)
		}
	}
	assertBarsCover(t, dsn, "import skypilot-catalog")
	first, _ := run(t, "--config", cfg, "--store", dsn, "export", "--format", "csv")
	recs := parseCSV(t, first)
	if len(recs) != 25 {
		t.Fatalf("%d rows exported, want 24", len(recs)-1)
	}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		if r[11] != "import" || !strings.HasPrefix(r[20], "skypilot-catalog:") || r[0] != r[12] {
			t.Errorf("row %v: want source_kind import, a skypilot-catalog source_url, observed_at = effective_at", r)
		}
		seen[r[1]+" "+r[3]+" "+r[4]+" "+r[8]+" "+r[12]+" "+r[9]] = true
	}
	for _, want := range []string{
		"lambda gpu_1x_a6000 RTXA6000-PCIE-48GB on_demand 2026-01-05T10:00:00Z 0.8",
		"lambda gpu_1x_a6000 RTXA6000-PCIE-48GB on_demand 2026-02-05T10:00:00Z 0.5",
		"aws p5.48xlarge H100-SXM-80GB on_demand 2026-03-05T10:00:00Z 98.32",
		"aws p3.2xlarge V100-SXM-16GB spot 2026-03-05T10:00:00Z 1.0012",
	} {
		if !seen[want] {
			t.Errorf("no row %q", want)
		}
	}

	// Importing again adds nothing, and says so.
	out, errOut, code = runCtx(context.Background(), "--config", cfg, "--store", dsn, "import", "skypilot-catalog", repo)
	if code != 0 || !regexp.MustCompile(`(?m)^import:skypilot-catalog\s+ok\s+0\s+0\s+.*nothing new`).MatchString(out) {
		t.Errorf("second import: exit %d\n%s\n%s", code, out, errOut)
	}
	// So does reading the whole history again.
	if _, _, code := runCtx(context.Background(), "--config", cfg, "--store", dsn, "import", "skypilot-catalog", "--restart", repo); code != 0 {
		t.Fatal("restarted import failed")
	}
	if again, _ := run(t, "--config", cfg, "--store", dsn, "export", "--format", "csv"); again != first {
		t.Errorf("importing twice changed the store:\n%s\n---\n%s", again, first)
	}

	if _, errOut, code := runCtx(context.Background(), "--config", cfg, "--store", dsn, "import", "skypilot-catalog", t.TempDir()); code == 0 ||
		!strings.Contains(errOut, "not a git repository") {
		t.Errorf("a directory that is no repository: exit %d %s", code, errOut)
	}
}

// TestImportSkyPilotSampled builds a history the way deploy/build-history.sh does
// (window, sampling, regions, manifest, Parquet) and reads it back into a new store.
func TestImportSkyPilotSampled(t *testing.T) {
	repo := skypilotRepo(t)
	cfg, _ := backfillConfig(t, "http://127.0.0.1:1")
	dir := t.TempDir()
	dsn := "duckdb://" + filepath.Join(dir, "sky.duckdb")
	manifest := filepath.Join(dir, "commits.csv")
	_, errOut, code := runCtx(context.Background(), "--config", cfg, "--store", dsn, "import", "skypilot-catalog", repo,
		"--since", "2026-01-20", "--until", "2026-04-01", "--every", "60d", "--regions", "us-east-1", "--manifest", manifest)
	if code != 0 && code != 3 {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	// Lambda's Feb 5 snapshot, AWS's and RunPod's of Mar 5; Jan 5 is before --since.
	if len(lines) != 4 || lines[0] != "commit,committed_at,path,cloud,version,rows" ||
		!strings.Contains(lines[1], ",2026-02-05T10:00:00Z,catalogs/v7/lambda/vms.csv,lambda,v7,") ||
		!strings.Contains(lines[2], ",2026-03-05T10:00:00Z,catalogs/v7/aws/vms.csv,aws,v7,") {
		t.Fatalf("manifest:\n%s", data)
	}
	commits := map[string]bool{}
	for _, l := range lines[1:] {
		commits[strings.Split(l, ",")[0]] = true
	}
	pq := filepath.Join(dir, "history.parquet")
	run(t, "--config", cfg, "--store", dsn, "export", "--format", "parquet", "--out", pq)
	fresh := "duckdb://" + filepath.Join(dir, "fresh.duckdb")
	if out, errOut, code := runCtx(context.Background(), "--config", cfg, "--store", fresh, "import", "parquet", pq); code != 0 {
		t.Fatalf("import parquet: exit %d\n%s\n%s", code, out, errOut)
	}
	// The commit each row was read from stays with it (attrs.original_source_url;
	// source_url is now the Parquet file), and so does its commit time.
	back, _ := run(t, "--config", cfg, "--store", fresh, "export", "--format", "jsonl")
	rows := strings.Split(strings.TrimSpace(back), "\n")
	if len(rows) < 5 {
		t.Fatalf("%d rows read back:\n%s", len(rows), back)
	}
	for _, line := range rows {
		var o struct {
			ObservedAt  time.Time         `json:"observed_at"`
			EffectiveAt time.Time         `json:"effective_at"`
			Region      string            `json:"region"`
			SourceKind  string            `json:"source_kind"`
			Attrs       map[string]string `json:"attrs"`
		}
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		src := o.Attrs["original_source_url"]
		commit := strings.Split(strings.TrimPrefix(src, "skypilot-catalog:"), ":")[0]
		at := o.ObservedAt.UTC().Format(time.RFC3339)
		if o.SourceKind != "import" || !strings.HasPrefix(src, "skypilot-catalog:") || !commits[commit] ||
			!o.ObservedAt.Equal(o.EffectiveAt) || o.Region != "us-east-1" ||
			(at != "2026-02-05T10:00:00Z" && at != "2026-03-05T10:00:00Z") {
			t.Errorf("row %s: want an import row of a manifest commit, at its commit time, in us-east-1", line)
		}
	}
	if _, errOut, code := runCtx(context.Background(), "--config", cfg, "--store", dsn, "import", "skypilot-catalog", repo,
		"--since", "last year"); code != 2 || !strings.Contains(errOut, "--since") {
		t.Errorf("--since last year: exit %d %s", code, errOut)
	}
}

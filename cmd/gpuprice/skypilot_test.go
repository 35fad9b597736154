package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// skypilotRepo builds a catalog repository with three commits from the fixtures of
// ingest/skypilot (the layout of skypilot-org/skypilot-catalog).
func skypilotRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git := func(env []string, args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	put := func(path, fixture string) {
		data, err := os.ReadFile(filepath.Join("..", "..", "ingest", "skypilot", "testdata", fixture))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, path), data, 0o644); err != nil {
			t.Fatal(err)
		}
		git(nil, "add", path)
	}
	commit := func(date string) {
		git([]string{"GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}, "commit", "-q", "-m", "update "+date)
	}
	git(nil, "init", "-q", "-b", "master")
	git(nil, "config", "user.email", "catalog@example.com")
	git(nil, "config", "user.name", "catalog")
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

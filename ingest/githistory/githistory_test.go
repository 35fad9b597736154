package githistory

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitRepo makes a repository in a temporary directory; commit writes (or, for an
// empty content, removes) files and commits them at the given committer time.
func gitRepo(t *testing.T) (dir string, commit func(at string, files map[string]string)) {
	t.Helper()
	dir = t.TempDir()
	g := func(env []string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	g(nil, "init", "-q")
	return dir, func(at string, files map[string]string) {
		t.Helper()
		for p, content := range files {
			full := filepath.Join(dir, p)
			if content == "" {
				g(nil, "rm", "-q", p)
				continue
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			g(nil, "add", p)
		}
		env := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=" + at, "GIT_COMMITTER_DATE=" + at}
		g(env, "commit", "-q", "-m", at)
	}
}

// TestVersions: a file added, changed, moved to another folder and deleted has
// three versions, oldest first, at their committer times in UTC; a commit that
// touched only another file is none; the deletion is none. Each version reads back
// as committed.
func TestVersions(t *testing.T) {
	ctx := context.Background()
	dir, commit := gitRepo(t)
	commit("2021-02-10T13:17:16+02:00", map[string]string{"public/data.json": "one\n", "README": "r"})
	commit("2021-03-01T00:00:00Z", map[string]string{"README": "r2"})
	commit("2021-03-31T12:33:17+03:00", map[string]string{"public/data.json": "two"})
	commit("2025-06-28T13:10:57+03:00", map[string]string{"public/data.json": "", "internal/data.json": "three"})
	commit("2025-07-01T00:00:00Z", map[string]string{"internal/data.json": ""})

	vs, err := Versions(ctx, dir, ":(glob)**/data.json")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ path, at, content string }{
		{"public/data.json", "2021-02-10T11:17:16Z", "one\n"},
		{"public/data.json", "2021-03-31T09:33:17Z", "two"},
		{"internal/data.json", "2025-06-28T10:10:57Z", "three"},
	}
	if len(vs) != len(want) {
		t.Fatalf("versions %+v, want %d", vs, len(want))
	}
	blobs, err := OpenBlobs(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	for i, w := range want {
		v := vs[i]
		if v.Path != w.path || v.Time.Format(time.RFC3339) != w.at || len(v.Commit) != 40 || v.Short() != v.Commit[:12] {
			t.Errorf("version %d: %+v, want %s at %s", i, v, w.path, w.at)
		}
		data, err := blobs.Read(v.Commit, v.Path)
		if err != nil || string(data) != w.content {
			t.Errorf("version %d reads %q, %v; want %q", i, data, err, w.content)
		}
	}
	// A path not at that commit is an error naming it, and the reader goes on.
	if _, err := blobs.Read(vs[0].Commit, "internal/data.json"); err == nil || !strings.Contains(err.Error(), "internal/data.json") {
		t.Errorf("missing blob: %v", err)
	}
	if data, err := blobs.Read(vs[2].Commit, vs[2].Path); err != nil || string(data) != "three" {
		t.Errorf("after a missing blob: %q, %v", data, err)
	}
	if got := Origin(ctx, dir); got != dir {
		t.Errorf("origin without a remote: %q, want the path", got)
	}
}

// TestVersionsNotRepo: a directory that is not a repository is ErrNotRepo; a
// repository without commits has no versions.
func TestVersionsNotRepo(t *testing.T) {
	ctx := context.Background()
	if _, err := Versions(ctx, t.TempDir(), "x"); !errors.Is(err, ErrNotRepo) {
		t.Errorf("plain directory: %v, want ErrNotRepo", err)
	}
	dir, _ := gitRepo(t)
	if vs, err := Versions(ctx, dir, "x"); err != nil || len(vs) != 0 {
		t.Errorf("empty repository: %v, %v", vs, err)
	}
}

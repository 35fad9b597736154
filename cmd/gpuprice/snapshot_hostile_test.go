package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics/publish"
)

// rehash re-writes a self-hashed snapshot file the way publish does (the hash of the
// JSON with its own hash emptied), as anyone can who changes a value.
func rehash(t *testing.T, v any, set func(string)) ([]byte, string) {
	t.Helper()
	set("")
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(append(b, '\n'))
	h := hex.EncodeToString(sum[:])
	set(h)
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n'), h
}

// copyTree copies the regular files of src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	for rel, body := range tree(t, src) {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// verifyFast runs verify with args and fails the test when it takes over 20 s.
func verifyFast(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	start := time.Now()
	stdout, stderr, code := runCtx(ctx, append([]string{"verify"}, args...)...)
	if ctx.Err() != nil {
		t.Fatalf("verify %v did not finish in %v", args, time.Since(start))
	}
	return code, stdout + stderr
}

// TestSnapshotHostileDirectory reruns findings 7, 8 and 9 of issue 29: a re-hashed
// snapshot passes verify without a key and fails with the publisher's; a catalog
// that is a link to /dev/zero, a 100 MiB catalog, a FIFO and a link out as data
// files are refused at once; publish refuses to write through a linked index/.
func TestSnapshotHostileDirectory(t *testing.T) {
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	dsn := "duckdb://" + filepath.Join(dir, "a.duckdb")
	importFile(t, cfg, filepath.Join(dir, "input.csv"), dsn, publishInput)
	keys := filepath.Join(t.TempDir(), "snap")
	if out, code := run(t, "publish", "keygen", "--out", keys); code != 0 {
		t.Fatalf("keygen: %s", out)
	}
	if out, code := run(t, "publish", "keygen", "--out", keys); code == 0 {
		t.Fatalf("keygen overwrote its keys: %s", out)
	}
	snap := filepath.Join(t.TempDir(), "snap")
	days := []string{"--day", "2026-10-01", "--day", "2026-10-02", "--sign", keys + ".key"}
	if code, res := publishJSON(t, cfg, dsn, snap, days...); code != 0 || len(res) != 2 {
		t.Fatalf("publish --sign: exit %d: %+v", code, res)
	}
	if code, out := verifyFast(t, snap, "--key", keys+".pub"); code != 0 {
		t.Fatalf("verify --key of a signed snapshot: exit %d\n%s", code, out)
	}
	cat, err := publish.ReadCatalog(snap)
	if err != nil {
		t.Fatal(err)
	}
	if code, out := verifyFast(t, snap, "--expect", cat.Days[0].ManifestSHA256); code != 0 {
		t.Fatalf("verify --expect a manifest's hash: exit %d\n%s", code, out)
	}
	if code, out := verifyFast(t, snap, "--expect", strings.Repeat("ab", 32)); code == 0 || !strings.Contains(out, "--expect") {
		t.Fatalf("verify --expect another hash: exit %d\n%s", code, out)
	}
	if _, err := publish.Verify(canceled(), snap, publish.VerifyOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("verify with its context done: %v, want context.Canceled (SIGINT/SIGTERM)", err)
	}

	t.Run("rehashed", func(t *testing.T) {
		d := filepath.Join(t.TempDir(), "snap")
		copyTree(t, snap, d)
		e := cat.Days[0]
		m, err := publish.ReadManifest(d, e.Manifest)
		if err != nil {
			t.Fatal(err)
		}
		f := &m.Files[1] // the index CSV
		p := filepath.Join(d, filepath.FromSlash(f.Path))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		lines[1] = strings.Replace(lines[1], ",", ",9", 1) // the day's first value changed
		b = []byte(strings.Join(lines, "\n"))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		f.SHA256, f.Bytes = hex.EncodeToString(sum[:]), int64(len(b))
		mb, mh := rehash(t, m, func(h string) { m.ManifestSHA256 = h })
		if err := os.WriteFile(filepath.Join(d, e.Manifest), mb, 0o644); err != nil {
			t.Fatal(err)
		}
		c := *cat
		c.Days = append([]publish.Entry(nil), cat.Days...)
		c.Days[0].ManifestSHA256 = mh
		cb, _ := rehash(t, &c, func(h string) { c.CatalogSHA256 = h })
		if err := os.WriteFile(filepath.Join(d, publish.CatalogFile), cb, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out := verifyFast(t, d); code != 0 {
			t.Fatalf("the re-hashed copy should pass verify without a key (what finding 9 showed): %d\n%s", code, out)
		}
		code, out := verifyFast(t, d, "--key", keys+".pub")
		if code == 0 || !strings.Contains(out, "does not match") || !strings.Contains(out, e.Manifest) {
			t.Fatalf("verify --key of a re-hashed snapshot: exit %d\n%s", code, out)
		}
	})

	hostile := []struct {
		name, want string
		make       func(t *testing.T, d string, data string)
	}{
		{"catalog is a link to /dev/zero", "symbolic link", func(t *testing.T, d, _ string) {
			replace(t, filepath.Join(d, publish.CatalogFile), func(p string) error { return os.Symlink("/dev/zero", p) })
		}},
		{"catalog of 100 MiB", "more than", func(t *testing.T, d, _ string) {
			if err := os.Truncate(filepath.Join(d, publish.CatalogFile), 100<<20); err != nil {
				t.Fatal(err)
			}
		}},
		{"data file is a FIFO", "FIFO", func(t *testing.T, d, data string) {
			replace(t, filepath.Join(d, data), func(p string) error { return syscall.Mkfifo(p, 0o644) })
		}},
		{"data file links out", "symbolic link", func(t *testing.T, d, data string) {
			outside := filepath.Join(t.TempDir(), "same-bytes")
			copyFile(t, filepath.Join(d, data), outside)
			replace(t, filepath.Join(d, data), func(p string) error { return os.Symlink(outside, p) })
		}},
		{"index/ links out", "symbolic link", func(t *testing.T, d, _ string) {
			outside := filepath.Join(t.TempDir(), "index")
			if err := os.Rename(filepath.Join(d, "index"), outside); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(d, "index")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	m, err := publish.ReadManifest(snap, cat.Days[0].Manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			d := filepath.Join(t.TempDir(), "snap")
			copyTree(t, snap, d)
			h.make(t, d, m.Files[0].Path)
			if code, out := verifyFast(t, d); code == 0 || !strings.Contains(out, h.want) {
				t.Fatalf("verify: exit %d, want a failure saying %q:\n%s", code, h.want, out)
			}
		})
	}

	t.Run("publish through a linked index/", func(t *testing.T) {
		d := filepath.Join(t.TempDir(), "snap")
		outside := t.TempDir()
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(d, "index")); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runCtx(t.Context(), "--config", cfg, "--store", dsn, "publish", "--out", d,
			"--day", "2026-10-01")
		if code == 0 || !strings.Contains(stdout+stderr, "publish writes only inside") {
			t.Fatalf("publish through a linked index/: exit %d\n%s%s", code, stdout, stderr)
		}
		if left, _ := os.ReadDir(outside); len(left) != 0 {
			t.Fatalf("publish wrote %d entries outside its directory", len(left))
		}
	})
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// replace removes p and makes something else there.
func replace(t *testing.T, p string, make func(string) error) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := make(p); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

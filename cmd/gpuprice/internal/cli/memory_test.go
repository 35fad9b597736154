package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/config"
)

func TestWithDuckDBDefaults(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"duckdb:///var/lib/gpuprice/g.duckdb", "duckdb:///var/lib/gpuprice/g.duckdb?threads=1"},
		{"duckdb:///var/lib/gpuprice/g.duckdb?threads=4", "duckdb:///var/lib/gpuprice/g.duckdb?threads=4"},
		{"duckdb:///x.duckdb?memory_limit=1GB", "duckdb:///x.duckdb?memory_limit=1GB&threads=1"},
		{"clickhouse://localhost:9000/gpuprice", "clickhouse://localhost:9000/gpuprice"},
	} {
		if got := withDuckDBDefaults(c.dsn, collectDuckDB); got != c.want {
			t.Errorf("%s: got %s, want %s", c.dsn, got, c.want)
		}
	}
	a := &app{storeDSN: "duckdb:///tmp/g.duckdb"}
	for cmd, want := range map[string]string{"collect": "duckdb:///tmp/g.duckdb?threads=1", "reparse": "duckdb:///tmp/g.duckdb?threads=1",
		"serve": "duckdb:///tmp/g.duckdb", "import": "duckdb:///tmp/g.duckdb"} {
		a.command = cmd
		if got, err := a.writeDSN(); err != nil || got != want {
			t.Errorf("%s: DSN %s (%v), want %s", cmd, got, err, want)
		}
	}
}

// TestMemoryLimit: collect and reparse run under collectMemoryLimit by default, the
// other commands under none; memory_limit sets it for every command; GOMEMLIMIT wins.
func TestMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	for _, c := range []struct {
		cfg, command string
		want         int64
	}{
		{"", "collect", collectMemoryLimit},
		{"", "reparse", collectMemoryLimit},
		{"", "serve", 0},
		{"96MiB", "serve", 96 << 20},
		{"1GiB", "collect", 1 << 30},
		{"off", "collect", 0},
	} {
		a := &app{cfg: config.Config{MemoryLimit: c.cfg}}
		got, err := a.applyMemoryLimit(c.command)
		if err != nil || got != c.want {
			t.Errorf("memory_limit %q, %s: %d (%v), want %d", c.cfg, c.command, got, err, c.want)
		}
		if c.want > 0 && debug.SetMemoryLimit(-1) != c.want {
			t.Errorf("memory_limit %q, %s: the runtime's limit is %d", c.cfg, c.command, debug.SetMemoryLimit(-1))
		}
	}
	t.Setenv("GOMEMLIMIT", "40MiB")
	if got, _ := (&app{cfg: config.Config{MemoryLimit: "1GiB"}}).applyMemoryLimit("collect"); got != 0 {
		t.Errorf("with GOMEMLIMIT set, memory_limit was applied: %d", got)
	}
}

// TestProfiles: --cpu-profile and --mem-profile write a CPU profile, a heap profile
// (gzip'd protobuf, as go tool pprof reads) and the memory breakdown beside it.
func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"--cpu-profile", cpu, "--mem-profile", mem, "version"}, &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: not a profile (%v, %d bytes)", p, err, len(b))
		}
	}
	txt, err := os.ReadFile(mem + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"at the RSS peak", "RssAnon", "RssFile", "heap/objects:bytes", "total:bytes"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("%s lacks %q:\n%s", mem+".txt", want, txt)
		}
	}
	if code := Main(context.Background(), []string{"--cpu-profile", filepath.Join(dir, "no", "such", "dir"), "version"}, &out, &errb); code == ExitOK {
		t.Errorf("an unwritable --cpu-profile: exit 0")
	}
}

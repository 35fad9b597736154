package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var sink [][]byte

// A command's profiles are written where the flags say: a CPU profile, the heap
// profile of the peak (gzip'd pprof) and, on Linux, where the RSS was at its peak.
func TestProfilesWriteTheirFiles(t *testing.T) {
	dir := t.TempDir()
	p := Profiles{CPUPath: filepath.Join(dir, "cpu.pprof"), MemPath: filepath.Join(dir, "mem.pprof")}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	for range 64 {
		sink = append(sink, make([]byte, 1<<20)) // 64 MB held: a peak to catch
	}
	sink = nil
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p.CPUPath, p.MemPath} {
		b, err := os.ReadFile(f)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes, %v: not a gzip'd pprof profile", filepath.Base(f), len(b), err)
		}
	}
	if _, err := os.Stat("/proc/self/status"); err == nil {
		b, err := os.ReadFile(p.MemPath + ".txt")
		if err != nil || !strings.HasPrefix(string(b), "at the RSS peak (") {
			t.Errorf("mem.pprof.txt: %q, %v", b, err)
		}
	}
}

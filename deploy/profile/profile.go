// Package profile writes the peak profiles of one gpuprice command (--cpu-profile,
// --mem-profile): a CPU profile of the whole command and the heap profile taken at
// the Go heap's peak, with where the RSS was at its peak; the measurements of
// BENCHMARKS.md are taken with them, as the serve benchmarks' load with loadgen.
package profile

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Profiles are the --cpu-profile and --mem-profile files of one command: a CPU
// profile of the whole command, and the heap profile taken when the Go heap was at its
// largest (so that it shows what held the memory at the peak, not at exit), with, in
// FILE.txt, where the process's memory was at its RSS peak: the resident pages of
// files (the binary) and anonymous ones, and of those the Go runtime's by class
// (runtime/metrics); the rest is C's (DuckDB, malloc).
type Profiles struct {
	// CPUPath and MemPath are the files to write; empty: none.
	CPUPath, MemPath string

	cpuFile *os.File
	stop    chan struct{}
	done    chan struct{}

	mu       sync.Mutex
	peak     uint64 // the largest live Go heap seen, bytes
	peakProf []byte // the heap profile taken then
	peakRSS  uint64 // the largest RSS seen, bytes
	atRSS    string // the breakdown then
}

// heapMetric is the live Go heap: the bytes of objects not yet swept as dead.
const heapMetric = "/memory/classes/heap/objects:bytes"

// profileEvery is how often the heap and the RSS are looked at for a new peak.
const profileEvery = 50 * time.Millisecond

// Start starts the CPU profile and the watch of the heap and the RSS.
func (p *Profiles) Start() error {
	if p.CPUPath != "" {
		f, err := os.Create(p.CPUPath)
		if err != nil {
			return fmt.Errorf("--cpu-profile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpu-profile: %w", err)
		}
		p.cpuFile = f
	}
	if p.MemPath != "" {
		// One allocation in 64 KB is sampled (Go's default is 512 KB): finer sizes for
		// the small objects of a collection, at little cost.
		runtime.MemProfileRate = 64 << 10
		p.stop, p.done = make(chan struct{}), make(chan struct{})
		go p.watch()
	}
	return nil
}

// watch takes a heap profile each time the live heap passes its last peak by 5 %.
func (p *Profiles) watch() {
	defer close(p.done)
	sample := []metrics.Sample{{Name: heapMetric}}
	tick := time.NewTicker(profileEvery)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		p.sampleRSS()
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		live := sample[0].Value.Uint64()
		p.mu.Lock()
		grew := live > p.peak+p.peak/20
		p.mu.Unlock()
		if !grew {
			continue
		}
		// The heap profile is as of the last GC: collect first, so it is this peak's.
		runtime.GC()
		var buf bytes.Buffer
		if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
			continue
		}
		p.mu.Lock()
		p.peak, p.peakProf = live, buf.Bytes()
		p.mu.Unlock()
	}
}

// sampleRSS keeps the memory breakdown when the RSS is at a new peak.
func (p *Profiles) sampleRSS() {
	rss, status := procStatus()
	if rss == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if rss > p.peakRSS {
		p.peakRSS, p.atRSS = rss, status+goMemory()
	}
}

// Finish stops the profiles and writes their files.
func (p *Profiles) Finish() error {
	var errs []error
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--cpu-profile: %w", err))
		}
		p.cpuFile = nil
	}
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
		p.sampleRSS()
		prof := p.peakProf
		if prof == nil {
			var buf bytes.Buffer
			_ = pprof.Lookup("heap").WriteTo(&buf, 0)
			prof = buf.Bytes()
		}
		if err := os.WriteFile(p.MemPath, prof, 0o644); err != nil {
			errs = append(errs, fmt.Errorf("--mem-profile: %w", err))
		}
		if p.atRSS != "" {
			text := fmt.Sprintf("at the RSS peak (%.1f MB):\n%s", float64(p.peakRSS)/(1<<20), p.atRSS)
			if err := os.WriteFile(p.MemPath+".txt", []byte(text), 0o644); err != nil {
				errs = append(errs, fmt.Errorf("--mem-profile: %w", err))
			}
		}
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// procStatus returns the process's RSS in bytes and its RSS lines from
// /proc/self/status (Linux); 0 elsewhere.
func procStatus() (uint64, string) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, ""
	}
	var rss uint64
	var out strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(k, "Rss") && k != "VmRSS" {
			continue
		}
		fmt.Fprintf(&out, "%-12s %s\n", k, strings.TrimSpace(v))
		if k == "VmRSS" {
			if kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
				rss = kb << 10
			}
		}
	}
	return rss, out.String()
}

// goMemory is the Go runtime's memory by class (runtime/metrics /memory/classes),
// in MB: what it has mapped and not released, and what it has released.
func goMemory() string {
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if strings.HasPrefix(d.Name, "/memory/classes/") && d.Kind == metrics.KindUint64 {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	var out strings.Builder
	out.WriteString("Go runtime, MB:\n")
	for _, s := range samples {
		fmt.Fprintf(&out, "  %-50s %8.1f\n", strings.TrimPrefix(s.Name, "/memory/classes/"),
			float64(s.Value.Uint64())/(1<<20))
	}
	return out.String()
}

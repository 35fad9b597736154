// Command gencsv writes the SYNTHETIC price history of the benchmarks
// (storetest.GenerateCSV) as the CSV `gpuprice import csv` reads: the file
// BenchmarkImportCSV times and deploy/import-cpu.sh imports. Its prices are made
// up, for benchmarks only, never presented as prices.
//
//	go run ./deploy/gencsv -series 1000 -steps 2000 -step 5m -out prices.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/gpuprice/gpuprice/store/storetest"
)

func main() {
	series := flag.Int("series", 1000, "series")
	steps := flag.Int("steps", 2000, "observations per series")
	step := flag.Duration("step", 5*time.Minute, "time between a series' observations")
	start := flag.String("start", "2025-01-01T00:00:00Z", "the first observation's time (RFC 3339)")
	seed := flag.Uint64("seed", 1, "random seed")
	out := flag.String("out", "", "the file to write (required)")
	flag.Parse()
	if err := run(*out, *start, storetest.GenSpec{Series: *series, Steps: *steps, Step: *step, Seed: *seed}); err != nil {
		fmt.Fprintln(os.Stderr, "gencsv:", err)
		os.Exit(1)
	}
}

func run(out, start string, spec storetest.GenSpec) error {
	if out == "" {
		return fmt.Errorf("-out is required")
	}
	t, err := time.Parse(time.RFC3339, start)
	if err != nil {
		return fmt.Errorf("-start: %w", err)
	}
	spec.Start = t.UTC()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := storetest.GenerateCSV(w, spec)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d rows\n", out, n)
	return nil
}

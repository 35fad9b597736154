package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// hostileValues are what a careless script or an attacker may pass as a filter.
var hostileValues = []string{
	`'`,
	`"`,
	`'; DROP TABLE observations; --`,
	`H100-SXM-80GB' OR '1'='1`,
	`\`,
	`\'; SELECT 1; --`,
	"nul\x00byte",
	"Ｈ１００ 🚀 \u202e\u200b",
	"%",
	"_",
	"line\nbreak",
	strings.Repeat("A'\\", 3414), // 10 KB
}

// filterFlag is a command (with its subcommand path) and one of its filter flags.
type filterFlag struct {
	cmd  []string
	flag string
}

var (
	commandLine  = regexp.MustCompile(`^  ([a-z][a-z0-9-]*)\s{2,}\S`)
	filterOption = regexp.MustCompile(`^\s+(?:-\w, )?--(gpu|provider|pricing|region|tier|source|currency|sku|zone)\s`)
)

// filterFlags finds every filter flag of every command from the help output, so that
// a command added later is covered without editing this test.
func filterFlags(t *testing.T, path []string) []filterFlag {
	t.Helper()
	var out bytes.Buffer
	cli.Main(context.Background(), append(append([]string{}, path...), "--help"), &out, &out)
	var found []filterFlag
	inCommands := false
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "Available Commands:"):
			inCommands = true
			continue
		case line == "" || !strings.HasPrefix(line, " "):
			inCommands = false
		}
		if inCommands {
			if m := commandLine.FindStringSubmatch(line); m != nil {
				switch m[1] {
				case "serve", "completion", "help":
				default:
					found = append(found, filterFlags(t, append(append([]string{}, path...), m[1]))...)
				}
			}
			continue
		}
		if m := filterOption.FindStringSubmatch(line); m != nil && len(path) > 0 {
			found = append(found, filterFlag{cmd: path, flag: m[1]})
		}
	}
	return found
}

func hostileFilters(t *testing.T, dsn string) {
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	if out, code := run(t, "--config", cfg, "--store", dsn, "collect"); !collected(code) {
		t.Fatalf("seeding: %s", out)
	}
	before, _ := run(t, "--config", cfg, "--store", dsn, "prices", "--format", "csv")
	recs := parseCSV(t, before)
	var skus []string
	for _, r := range recs[1:] {
		skus = append(skus, r[3])
	}
	flags := filterFlags(t, nil)
	seen := map[string]bool{}
	for _, f := range flags {
		seen[strings.Join(f.cmd, " ")+" --"+f.flag] = true
	}
	for _, must := range []string{"prices --gpu", "prices --provider", "prices --pricing", "prices --region", "prices --tier", "runs --source"} {
		if !seen[must] {
			t.Fatalf("filter %s not found in the help output; found %v", must, seen)
		}
	}
	for _, f := range flags {
		for _, v := range hostileValues {
			args := append(append([]string{"--config", cfg, "--store", dsn}, f.cmd...), "--"+f.flag, v)
			var out, errb bytes.Buffer
			code := func() (code int) {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s --%s %q panicked: %v", strings.Join(f.cmd, " "), f.flag, short(v), r)
						code = -1
					}
				}()
				return cli.Main(context.Background(), args, &out, &errb)
			}()
			where := fmt.Sprintf("%s --%s %q", strings.Join(f.cmd, " "), f.flag, short(v))
			if code != 0 && !strings.HasPrefix(errb.String(), "gpuprice: ") {
				t.Errorf("%s: exit %d without a clear error: %q", where, code, short(errb.String()))
			}
			if strings.Contains(out.String()+errb.String(), "panic") {
				t.Errorf("%s: %s", where, short(out.String()+errb.String()))
			}
			for _, sku := range skus {
				if strings.Contains(out.String(), sku) {
					t.Errorf("%s matched stored rows (%s): a hostile value must match nothing", where, sku)
					break
				}
			}
		}
	}
	t.Logf("%d filter flags × %d hostile values", len(flags), len(hostileValues))
	after, _ := run(t, "--config", cfg, "--store", dsn, "prices", "--format", "csv")
	if after != before {
		t.Fatalf("stored prices changed after hostile filters:\n--- before ---\n%s\n--- after ---\n%s", before, after)
	}
}

func short(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func TestHostileFiltersDuckDB(t *testing.T) {
	hostileFilters(t, "duckdb://"+filepath.Join(t.TempDir(), "hostile.duckdb"))
}

func TestIntegrationClickHouseHostileFilters(t *testing.T) {
	dsn := chtest.FreshDSN(t, "hostile")
	hostileFilters(t, dsn)
}

// One hanging source is cut at its timeout and delays no other; a 429 with
// Retry-After is waited out before the next try.
func TestHangingSourceAndRetryAfter(t *testing.T) {
	azure1, azure2 := readFixture(t, "azure/testdata/page1/input.json"), readFixture(t, "azure/testdata/page2/input.json")
	vast := readFixture(t, "vast/testdata/mixed_gpus/input.json")
	var mu sync.Mutex
	var vastAt []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/retail/prices" && r.URL.Query().Get("$skip") != "":
			w.Write(azure2)
		case r.URL.Path == "/api/retail/prices":
			w.Write(azure1)
		case r.URL.Path == "/api/v0/bundles/":
			mu.Lock()
			vastAt = append(vastAt, time.Now())
			first := len(vastAt) == 1
			mu.Unlock()
			if first {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.Write(vast)
		default: // the lambda page and its robots.txt hang until the client gives up
			<-r.Context().Done()
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := fmt.Sprintf("data_dir: %s\nhttp: {timeout: 3s, retries: 2}\ningest: {source_timeout: 5s}\nsources:\n"+
		"  fx: {enabled: false}\n  azure: {endpoint: %s/api/retail/prices}\n  vast: {endpoint: %s/api/v0/bundles/}\n"+
		"  lambda: {endpoint: %s/service/gpu-cloud}\n", dir, srv.URL, srv.URL, srv.URL)
	for _, other := range disabledOthers() {
		cfg += "  " + other + ": {enabled: false}\n"
	}
	cfgPath := filepath.Join(dir, "gpuprice.yaml")
	os.WriteFile(cfgPath, []byte(cfg), 0o600)
	dsn := "duckdb://" + filepath.Join(dir, "x.duckdb")
	out, code := run(t, "--config", cfgPath, "--store", dsn, "collect")
	if !collected(code) {
		t.Fatalf("collect: %s", out)
	}
	durations := map[string]time.Duration{}
	for _, m := range regexp.MustCompile(`(?m)^(azure|vast|lambda)\s+(\w+)\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+(\S+)`).FindAllStringSubmatch(out, -1) {
		d, err := time.ParseDuration(m[3])
		if err != nil {
			t.Fatalf("%s duration %q: %v", m[1], m[3], err)
		}
		durations[m[1]] = d
		if failed := m[2] == "failed"; failed != (m[1] == "lambda") {
			t.Errorf("%s: status %s (only the hanging lambda should fail):\n%s", m[1], m[2], out)
		}
	}
	if len(durations) != 3 {
		t.Fatalf("summary:\n%s", out)
	}
	// Ordering, not wall-clock bounds: the hanging source took longer than each
	// other one, so none of them waited for it.
	for _, src := range []string{"azure", "vast"} {
		if durations[src] >= durations["lambda"] {
			t.Errorf("%s took %v, the hanging lambda %v: it waited for the hanging source", src, durations[src], durations["lambda"])
		}
	}
	runs, _ := run(t, "--config", cfgPath, "--store", dsn, "runs", "--source", "lambda")
	if !strings.Contains(runs, "failed") || !(strings.Contains(runs, "deadline") || strings.Contains(runs, "Timeout") || strings.Contains(runs, "timeout")) {
		t.Errorf("the hanging source's run does not say it timed out:\n%s", runs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(vastAt) != 2 || vastAt[1].Sub(vastAt[0]) < time.Second {
		t.Errorf("vast requests at %v: want a retry at least Retry-After (1s) after the 429", vastAt)
	}
}

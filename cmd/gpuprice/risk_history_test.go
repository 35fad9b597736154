package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// TestRiskSpotAdvisorHistoryDuckDB: the Spot Advisor backfill over a repository laid
// out as alexei-led/spotinfo's history is: its real copy of 2021-02-10 at
// public/spot/data/ (commit 364abc3), a commit holding a truncated copy (constructed:
// a copy that cannot be parsed is listed and the others are stored), then its real
// copy of 2025-06-28 at internal/spot/data/ (5eedf20), at those commits' times.
// The two real copies hold 243 and 682 GPU bands; 131 of the (region, type) pairs in
// both moved between them (counted from the two files independently, with a script
// over their spot_advisor sections for the 55 GPU types stored). Hand-checked moves:
// p4d.24xlarge us-east-1 r 0 → 2 (<5% → 10-15%), us-west-2 r 0 → 4 (<5% → >20%),
// both rises.
func TestRiskSpotAdvisorHistoryDuckDB(t *testing.T) {
	testRiskSpotAdvisorHistory(t, "duckdb://"+filepath.Join(t.TempDir(), "risk.duckdb"))
}

// TestIntegrationClickHouseRiskSpotAdvisorHistory runs the same backfill on ClickHouse.
func TestIntegrationClickHouseRiskSpotAdvisorHistory(t *testing.T) {
	testRiskSpotAdvisorHistory(t, chtest.FreshDSN(t, "riskhist"))
}

func testRiskSpotAdvisorHistory(t *testing.T, dsn string) {
	old, cur := spotAdvisorFile(t, "spotinfo_2021-02-10.json.gz"), spotAdvisorFile(t, "input.json.gz")
	repo, put, commit := gitHistory(t)
	put("public/spot/data/spot-advisor-data.json", old)
	commit("2021-02-10T13:17:16+02:00")
	put("public/spot/data/spot-advisor-data.json", old[:1000])
	commit("2021-03-01T00:00:00Z")
	put("public/spot/data/spot-advisor-data.json", nil)
	put("internal/spot/data/spot-advisor-data.json", cur)
	commit("2025-06-28T13:10:57+03:00")

	out, errb, code := runErr("--store", dsn, "risk", "import-spot-advisor-history", repo)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 3 || len(lines) < 4 ||
		!strings.Contains(lines[1], "2021-02-10T11:17:16Z  public/spot/data/spot-advisor-data.json    243    ok") ||
		!strings.Contains(lines[2], "unparsable") ||
		!strings.Contains(lines[3], "2025-06-28T10:10:57Z  internal/spot/data/spot-advisor-data.json  682    ok") ||
		!strings.Contains(errb, "1 of the 3 copies could not be stored") {
		t.Fatalf("backfill: exit %d:\n%s\nstderr: %s", code, out, errb)
	}
	type change struct {
		SKU, Region string
		At          string `json:"at"`
		FromLabel   string `json:"from_label"`
		ToLabel     string `json:"to_label"`
		Rise        int    `json:"rise"`
	}
	moves := func() []change {
		var m struct{ Changes []change }
		runJSON(t, &m, "--store", dsn, "risk", "--changes", "--since", "2021-01-01", "--format", "json")
		return m.Changes
	}
	check := func(when string) {
		t.Helper()
		got := moves()
		if len(got) != 131 {
			t.Fatalf("%s: %d band moves, want 131", when, len(got))
		}
		want := map[string]change{
			"us-east-1": {SKU: "p4d.24xlarge", Region: "us-east-1", At: "2025-06-28T10:10:57Z", FromLabel: "<5%", ToLabel: "10-15%", Rise: 1},
			"us-west-2": {SKU: "p4d.24xlarge", Region: "us-west-2", At: "2025-06-28T10:10:57Z", FromLabel: "<5%", ToLabel: ">20%", Rise: 1},
		}
		for _, c := range got {
			if w, ok := want[c.Region]; ok && c.SKU == w.SKU {
				if c != w {
					t.Errorf("%s: %+v, want %+v", when, c, w)
				}
				delete(want, c.Region)
			}
		}
		if len(want) > 0 {
			t.Errorf("%s: moves missing: %+v", when, want)
		}
	}
	check("after the backfill")
	// Again, only the copies of 2025 on (--since): the same history, nothing twice.
	if out, code := run(t, "--store", dsn, "risk", "import-spot-advisor-history", repo, "--since", "2025-01-01"); code != 0 ||
		strings.Count(strings.TrimSpace(out), "\n") != 1 {
		t.Fatalf("second backfill: exit %d:\n%s", code, out)
	}
	check("after importing again")
	if _, errb, code := runErr("--store", dsn, "risk", "import-spot-advisor-history", t.TempDir()); code != 1 ||
		!strings.Contains(errb, "not a git repository") {
		t.Errorf("not a repository: exit %d: %s", code, errb)
	}
}

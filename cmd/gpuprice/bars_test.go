package main

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// assertBarsCover fails unless the store at dsn holds observations and, for every
// one of them, the hourly and the daily bar of its series that it falls in: the bars
// analytics read were rebuilt over what the command wrote. It returns the number of
// observations.
func assertBarsCover(t *testing.T, dsn, after string) int {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obs, err := st.Observations(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) == 0 {
		t.Fatalf("after %s: no observations", after)
	}
	r, ok := st.(store.Rollups)
	if !ok {
		t.Fatalf("store %T keeps no bars", st)
	}
	for _, w := range store.Widths {
		bars, err := r.Bars(ctx, store.BarQuery{Width: w})
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		for _, b := range bars {
			have[b.SeriesKey()+"|"+b.Start.UTC().Format(time.RFC3339)] = true
		}
		missing := 0
		for _, o := range obs {
			k := o.SeriesKey() + "|" + o.EffectiveAt.UTC().Truncate(w).Format(time.RFC3339)
			if !have[k] {
				if missing < 3 {
					t.Errorf("after %s: no %v bar for %s", after, w, k)
				}
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("after %s: %d of %d observations have no %v bar (%d bars)", after, missing, len(obs), w, len(bars))
		}
	}
	return len(obs)
}

// pipelineConfig runs the three replayed sources, the ECB rates of srv and the aws
// source in API mode (spot history and the Price List API) against aws.
func pipelineConfig(t *testing.T, srv, aws *httptest.Server) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`data_dir: %s
http: {timeout: 5s, retries: 2, min_interval: 1ms}
sources:
  azure: {endpoint: %[2]s/api/retail/prices}
  vast: {endpoint: %[2]s/api/v0/bundles/}
  lambda: {endpoint: %[2]s/service/gpu-cloud}
  fx: {endpoint: %[2]s/stats/eurofxref/eurofxref-hist-90d.xml}
  aws:
    endpoint: %[3]s/offers/v1.0/aws/AmazonEC2/current/region_index.json
    options: {mode: api, regions: [us-east-1], since: 3h, pricing_endpoint: %[3]s, ec2_endpoint: %[3]s, spot_feed: %[3]s/spot.js, spot_advisor: "off"}
`, dir, srv.URL, aws.URL)
	for _, n := range disabledOthers() {
		if n != "aws" {
			cfg += "  " + n + ": {enabled: false}\n"
		}
	}
	p := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordArchive collects the replayed sources and AWS with --record and returns the
// config and the archive; both fakes are closed when it returns: from then on only
// the archive answers.
func recordArchive(t *testing.T) (cfg, arc string) {
	t.Helper()
	archiveAWSEnv(t)
	srv := replay(t)
	aws, _ := archiveFakeAWS(t)
	cfg = pipelineConfig(t, srv, aws)
	arc = filepath.Join(t.TempDir(), "archive")
	live := "duckdb://" + filepath.Join(t.TempDir(), "live.duckdb")
	if out, code := run(t, "--config", cfg, "--store", live, "collect", "--record", arc); !collected(code) {
		t.Fatalf("collect --record: exit %d\n%s", code, out)
	}
	assertBarsCover(t, live, "collect --record")
	srv.Close()
	aws.Close()
	return cfg, arc
}

func TestReparseThenAnalyticsDuckDB(t *testing.T) {
	cfg, arc := recordArchive(t)
	testReparseThenAnalytics(t, cfg, arc, "duckdb://"+filepath.Join(t.TempDir(), "fresh.duckdb"))
}

func TestIntegrationClickHouseReparseThenAnalytics(t *testing.T) {
	dsn := chtest.FreshDSN(t, "reparse")
	cfg, arc := recordArchive(t)
	testReparseThenAnalytics(t, cfg, arc, dsn)
}

// testReparseThenAnalytics reparses the archive into the empty store at dsn and reads
// volatility and spreads right away, with no `gpuprice rollup`.
func testReparseThenAnalytics(t *testing.T, cfg, arc, dsn string) {
	if out, code := run(t, "--config", cfg, "--store", dsn, "reparse", arc); !collected(code) {
		t.Fatalf("reparse: exit %d\n%s", code, out)
	}
	assertBarsCover(t, dsn, "reparse")

	// The recorded spot history (scrapers/aws/testdata/spot_history) has p5.48xlarge
	// in us-east-1a at $32.5401 (09:58) and $32.7128 (11:42) per instance-hour on
	// 2026-11-01: two hourly bars of 8 GPUs.
	var vol []struct {
		Provider, SKU, Zone, GPU string
		Bars, Returns, Changes   int
		CV, Range, Min, Max      float64
		Close                    float64
	}
	runJSON(t, &vol, "--config", cfg, "--store", dsn, "volatility", "--provider", "aws", "--pricing", "spot",
		"--bar", "1h", "--window", "7d", "--at", "2026-11-02T00:00:00Z", "--format", "json")
	lo, hi := 32.5401/8, 32.7128/8
	mean := (lo + hi) / 2
	sd := math.Sqrt(((lo-mean)*(lo-mean) + (hi-mean)*(hi-mean)) / 1) // sample SD, n−1 = 1
	found := false
	for _, v := range vol {
		if v.SKU != "p5.48xlarge" || v.Zone != "us-east-1a" {
			continue
		}
		found = true
		if v.GPU != "H100-SXM-80GB" || v.Bars != 2 || v.Returns != 1 || v.Changes != 1 ||
			math.Abs(v.Min-lo) > 1e-6 || math.Abs(v.Max-hi) > 1e-6 || math.Abs(v.Close-hi) > 1e-6 ||
			math.Abs(v.Range-(hi/lo-1)) > 1e-6 || math.Abs(v.CV-sd/mean) > 1e-6 {
			t.Errorf("volatility of p5.48xlarge us-east-1a: %+v; want 2 bars %.6f → %.6f, range %.6f, cv %.6f", v, lo, hi, hi/lo-1, sd/mean)
		}
	}
	if !found || len(vol) < 3 {
		t.Fatalf("volatility right after reparse: %+v", vol)
	}

	// Spreads of today: the median latest price of each tier's series, computed here
	// from the raw observations.
	var sp struct {
		Days []struct {
			GPU, Pricing            string
			Day                     time.Time
			Hyperscaler, Specialist float64
			Ratio                   float64
		}
	}
	runJSON(t, &sp, "--config", cfg, "--store", dsn, "spreads", "--gpu", "H100-SXM-80GB", "--pricing", "on_demand",
		"--since", "7d", "--format", "json")
	if len(sp.Days) == 0 {
		t.Fatal("spreads right after reparse: no day")
	}
	last := sp.Days[len(sp.Days)-1]
	h, s := tierMedians(t, dsn, "H100-SXM-80GB", schemas.OnDemand)
	if last.GPU != "H100-SXM-80GB" || last.Specialist == 0 || last.Hyperscaler == 0 ||
		math.Abs(last.Hyperscaler-h) > 1e-6 || math.Abs(last.Specialist-s) > 1e-6 || math.Abs(last.Ratio-h/s) > 1e-6 {
		t.Errorf("spreads of %s: %+v; want hyperscaler %.4f, specialist %.4f, ratio %.4f", last.Day, last, h, s, h/s)
	}
}

// tierMedians is the median of the latest $/GPU-hour of the hyperscaler and of the
// specialist series of gpu and pricing, read from the raw observations.
func tierMedians(t *testing.T, dsn, gpu, pricing string) (hyperscaler, specialist float64) {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rows, err := st.Latest(context.Background(), store.Filter{GPU: gpu, Pricing: pricing})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]float64{}
	for _, o := range rows {
		by[o.Tier] = append(by[o.Tier], o.PriceUSDGPUHour)
	}
	median := func(v []float64) float64 {
		if len(v) == 0 {
			return 0
		}
		sort.Float64s(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return median(by[schemas.TierHyperscaler]), median(by[schemas.TierSpecialist])
}

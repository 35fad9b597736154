package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"gopkg.in/yaml.v3"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/aws"
	"github.com/gpuprice/gpuprice/scrapers/runpod"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/clickhouse/clustertest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// testDB returns the DSN of a new database on the server of GPUPRICE_CLICKHOUSE_DSN
// (dropped at cleanup, chtest.FreshDSN) and an admin connection. Without the variable
// the test is skipped loudly, except under CI, where it fails.
func testDB(t *testing.T) (string, driver.Conn) {
	t.Helper()
	dsn := chtest.FreshDSN(t, "grafana")
	conn := chtest.Admin(t, chtest.ServerDSN(t))
	t.Cleanup(func() { conn.Close() })
	return dsn, conn
}

// historyCSV is a SYNTHETIC price history (storetest.Generate: test data, never
// presented as prices) over the last 14 days, every 6 hours, in the CSV of
// `gpuprice prices --format csv`, with two rows the gates must quarantine.
func historyCSV(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"observed_at", "effective_at", "provider", "tier", "sku", "gpu", "gpu_count", "region", "zone",
		"pricing", "price_usd_hour", "interconnect", "source_kind"})
	start := time.Now().UTC().Truncate(24 * time.Hour).Add(-14 * 24 * time.Hour)
	err := storetest.Generate(storetest.GenSpec{Series: 112, Steps: 56, Start: start, Step: 6 * time.Hour, Seed: 3}, 500,
		func(obs []schemas.Observation) error {
			for _, o := range obs {
				at := o.ObservedAt.Format(time.RFC3339)
				_ = w.Write([]string{at, at, o.Provider, o.Tier, o.SKU, o.GPU, strconv.FormatFloat(o.GPUCount, 'f', -1, 64),
					o.Region, o.Zone, o.Pricing, strconv.FormatFloat(o.PriceUSDHour, 'f', -1, 64), o.Interconnect, "import"})
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)
	_ = w.Write([]string{now, now, "aws", "hyperscaler", "p5.48xlarge", "H100-SXM-80GB", "8", "us-east-1", "", "on_demand", "-3", "efa", "import"})
	_ = w.Write([]string{now, now, "aws", "hyperscaler", "p5.48xlarge", "H100-SXM-80GB", "8", "us-east-1", "", "on_demand", "50000", "efa", "import"})
	w.Flush()
	return buf.Bytes()
}

// brokenSource fails every run, as a provider that is down does.
type brokenSource struct{}

func (brokenSource) Collect(context.Context, scrapers.Emitter) error {
	return errors.New("GET https://example.invalid/prices: 503 Service Unavailable")
}

// fill writes the history through the pipeline (ingest.Runner: normalisation, gates,
// quarantine, run records, batching, then the bars' rollup), twice, as a repeated
// import does, alongside a source that fails.
func fill(t *testing.T, st store.Store) {
	t.Helper()
	cat, err := schemas.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	body := historyCSV(t)
	runner := &ingest.Runner{Store: st, GPUs: cat, Providers: schemas.DefaultProviders(), Bounds: ingest.DefaultBounds()}
	for range 2 {
		src := &ingest.CSVSource{
			Open:   func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
			Origin: "file:///synthetic/history.csv",
			Known:  func(g string) bool { _, ok := cat.Lookup(g); return ok },
		}
		res := runner.Collect(t.Context(), []ingest.Job{{Name: "csv", Source: src}, {Name: "broken", Source: brokenSource{}}},
			ingest.Options{FX: ingest.FXLazy, SourceKind: schemas.SourceImport})
		if res[0].RowsAccepted < 3000 || res[0].RowsQuarantine != 2 || res[1].Status != schemas.RunFailed {
			t.Fatalf("import: %+v / %+v", res[0].Run, res[1].Run)
		}
	}
	// Interruption bands (the risk dashboard): the real Spot Advisor file of
	// 2025-06-28, stored as copies of 10 days and 2 days ago.
	gz, err := os.ReadFile(filepath.Join("..", "..", "..", "scrapers", "aws", "testdata", "spot_advisor", "input.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	advisor, err := fetch.Gunzip(gz, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	// Stock (the risk dashboard's stock panels): RunPod's recorded gpuTypes answer
	// collected through the pipeline three times, 3, 2 and 1 hours ago.
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{"/graphql": {{
		File:   filepath.Join("..", "..", "..", "scrapers", "runpod", "testdata", "api_full", "input.json"),
		Header: map[string]string{"Content-Type": "application/json"}}}})
	for _, back := range []time.Duration{3 * time.Hour, 2 * time.Hour, time.Hour} {
		cfg := scrapertest.Config(t, runpod.Name, srv.URL+"/graphql", nil)
		at := time.Now().UTC().Add(-back).Truncate(time.Second)
		cfg.Now = func() time.Time { return at }
		cfg.Secrets = map[string]string{runpod.EnvAPIKey: "test-key"}
		src, err := runpod.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		res := runner.Collect(t.Context(), []ingest.Job{{Name: runpod.Name, Source: src}},
			ingest.Options{FX: ingest.FXLazy})
		if res[0].Status != schemas.RunOK {
			t.Fatalf("runpod: %+v", res[0].Run)
		}
	}
	for _, back := range []time.Duration{10 * 24 * time.Hour, 2 * 24 * time.Hour} {
		res, err := aws.ParseSpotAdvisor(bytes.NewReader(advisor), time.Now().UTC().Add(-back))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ingest.ImportSignals(t.Context(), st, "import:"+aws.SourceSpotAdvisor, res.Signals, res.Rejects,
			time.Now()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIntegrationClickHouseDashboardSQL runs every ClickHouse query of every committed
// dashboard — each variable's query, then each panel's SQL with the variables and
// macros substituted as Grafana and the plugin do — on a ClickHouse filled through
// the pipeline, with all values selected and with a selection: each must return
// rows with the columns its panel reads, in order, a time first for time series.
func TestIntegrationClickHouseDashboardSQL(t *testing.T) {
	dsn, _ := testDB(t)
	dashboardSQL(t, dsn, nil)
}

// TestIntegrationClickHouseClusterDashboardSQL runs the same on the ClickHouse
// cluster of deploy/clickhouse-cluster/local.sh (gpuprice migrate --cluster: the
// views over Distributed tables), with the plugin connected to node 1.
func TestIntegrationClickHouseClusterDashboardSQL(t *testing.T) {
	c := clustertest.Get(t)
	dashboardSQL(t, c.DSN(t, 0), c)
}

// dashboardSQL fills the store of dsn and runs the dashboards' SQL on it; given a
// cluster, it migrates through the cluster's Migrate, which resumes a migration a
// node restarted by the cluster's watch cut off.
func dashboardSQL(t *testing.T, dsn string, cluster *clustertest.Cluster) {
	ctx := t.Context()
	st, err := clickhouse.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	migrate := st.Migrate
	if cluster != nil {
		migrate = func(context.Context) ([]int, error) { return cluster.Migrate(t, st) }
	}
	if _, err := migrate(ctx); err != nil {
		t.Fatal(err)
	}
	fill(t, st)

	// The plugin connects with the datasource's defaultDatabase (unqualified names
	// resolve to the store's database) and the provisioned custom settings; the
	// store's cluster parameter is not a server setting.
	plain, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := plain.Query()
	q.Del(clickhouse.ClusterParam)
	plain.RawQuery = q.Encode()
	conn := chtest.Conn(t, plain.String(), provisionedSettings(t))
	defer conn.Close()

	gen := map[string]Dashboard{}
	for _, d := range dashboards() {
		gen[d.UID] = d
	}
	panels := 0
	ran := map[string]bool{}
	for _, d := range loadDashboards(t) {
		g := gen[d.UID]
		// Each variable's options, from its query (or its custom values).
		vars := map[string]selection{}
		for _, v := range g.Variables {
			s := selection{multi: v.Multi}
			if v.Query != "" {
				s.options = column(t, conn, v.Query)
				if len(s.options) == 0 {
					t.Fatalf("%s: variable %s: no options", d.UID, v.Name)
				}
			} else {
				s.options = v.Values
			}
			vars[v.Name] = s
		}
		if len(vars) != len(d.Templating.List) {
			t.Fatalf("%s: %d variables in the JSON, %d generated", d.UID, len(d.Templating.List), len(vars))
		}
		to := time.Now().UTC()
		days, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(d.Time.From, "now-"), "d"))
		if err != nil {
			t.Fatalf("%s: time %q", d.UID, d.Time.From)
		}
		from := to.Add(-time.Duration(days) * 24 * time.Hour)

		for _, sel := range []string{"all", "some", "spot"} {
			cur := map[string]selection{}
			for name, s := range vars {
				switch {
				case s.multi && sel == "some" && name == "gpu":
					s.values = []string{"H100-SXM-80GB", "A100-SXM-80GB"}
				case s.multi:
					s.all = true
				case name == "kind" && sel == "spot":
					s.values = []string{"spot"}
				default:
					s.values = s.options[:1] // the default
				}
				cur[name] = s
			}
			for i, p := range d.Panels {
				sql := p.Targets[0].RawSQL
				if sql == "" {
					continue
				}
				want := g.Panels[i]
				q, err := interpolate(sql, cur, from, to)
				if err != nil {
					t.Fatalf("%s / %s: %v", d.UID, p.Title, err)
				}
				if ran[q] {
					continue // a selection this panel does not read
				}
				ran[q] = true
				names, types, n, err := run(ctx, conn, q)
				if err != nil {
					t.Errorf("%s / %s (%s): %v\n%.2000s", d.UID, p.Title, sel, err, q)
					continue
				}
				if n == 0 {
					t.Errorf("%s / %s (%s): no rows\n%.2000s", d.UID, p.Title, sel, q)
				}
				if strings.Join(names, ",") != strings.Join(want.Columns, ",") {
					t.Errorf("%s / %s: columns %v, the panel reads %v", d.UID, p.Title, names, want.Columns)
				}
				if p.Type == kindTimeSeries && !strings.HasPrefix(types[0], "DateTime") {
					t.Errorf("%s / %s: first column is %s, a time series needs a time", d.UID, p.Title, types[0])
				}
				panels++
			}
		}
	}
	if panels == 0 {
		t.Fatal("no ClickHouse panel ran")
	}
	t.Logf("%d distinct panel queries run", len(ran))
	// The datasource's readonly = 2 refuses writes and DDL.
	if err := conn.Exec(ctx, "DROP TABLE v_index"); err == nil {
		t.Error("the datasource's settings let Grafana drop a view")
	}
	t.Run("TokensMatchAnalytics", func(t *testing.T) { tokensMatchAnalytics(t, st, plain.String()) })
	t.Run("TermCurveMatchesAnalytics", func(t *testing.T) { termCurveMatchesAnalytics(t, st, plain.String()) })
}

// termCurveMatchesAnalytics checks the term curve panel against analytics.TermCurve
// on the same offers (the series on offer, listed instance prices): per GPU and
// pricing kind, the term in months, the number of offers, the lowest and the median.
func termCurveMatchesAnalytics(t *testing.T, st store.Store, dsn string) {
	ctx := t.Context()
	latest, err := st.Latest(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	byGPU := map[string]map[string][]analytics.Offer{}
	for _, o := range analytics.CurrentOnly(latest, 24*time.Hour) {
		if o.GPU == schemas.UnknownGPU || !o.Comparable() || schemas.ScopeOf(o.PriceScope) != schemas.ScopeInstance {
			continue
		}
		if byGPU[o.GPU] == nil {
			byGPU[o.GPU] = map[string][]analytics.Offer{}
		}
		byGPU[o.GPU][o.Pricing] = append(byGPU[o.GPU][o.Pricing], analytics.Offer{Provider: o.Provider, SKU: o.SKU,
			Region: o.Region, Zone: o.Zone, Pricing: o.Pricing, Price: o.PriceUSDGPUHour})
	}
	want := map[string]analytics.TermPoint{}
	terms := 0
	for gpu, kinds := range byGPU {
		market, _ := analytics.TermCurve(kinds)
		for _, p := range market {
			want[gpu+"|"+p.Pricing] = p
			if p.Hours > 0 {
				terms++
			}
		}
	}
	if terms == 0 {
		t.Fatal("no reservation or commitment on offer: the test proves little")
	}
	var sql string
	for _, d := range dashboards() {
		for _, p := range d.Panels {
			if p.Title == TermCurveTitle {
				sql = p.SQL
			}
		}
	}
	q, err := interpolate(sql, map[string]selection{"gpu": {multi: true, all: true}, "region": {multi: true, all: true}},
		time.Now().Add(-7*24*time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conn := chtest.Conn(t, dsn, nil)
	defer conn.Close()
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var (
			gpu, pricing           string
			months, lowest, median float64
			offers                 uint64
		)
		if err := rows.Scan(&gpu, &pricing, &months, &offers, &lowest, &median); err != nil {
			t.Fatal(err)
		}
		n++
		w, ok := want[gpu+"|"+pricing]
		if !ok || w.Months != months || uint64(w.Offers) != offers || math.Abs(w.Min-lowest) > 1e-6 || math.Abs(w.Median-median) > 1e-6 {
			t.Errorf("%s %s: dashboard %v months, %d offers, lowest %v, median %v; analytics %+v", gpu, pricing, months, offers,
				lowest, median, w)
		}
	}
	if n != len(want) {
		t.Errorf("%d GPU × pricing rows, analytics has %d", n, len(want))
	}
}

func column(t *testing.T, conn driver.Conn, q string) []string {
	t.Helper()
	rows, err := conn.Query(t.Context(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// run executes q and returns its column names and types and its number of rows.
func run(ctx context.Context, conn driver.Conn, q string) ([]string, []string, int, error) {
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return nil, nil, 0, err
	}
	defer rows.Close()
	var types []string
	for _, c := range rows.ColumnTypes() {
		types = append(types, c.DatabaseTypeName())
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		return nil, nil, 0, fmt.Errorf("reading rows: %w", err)
	}
	return rows.Columns(), types, n, nil
}

// tokensMatchAnalytics checks the $ per 1B tokens table against the
// analytics package on the same store: per GPU and provider, the cheapest current
// offering's cost with its MFU band's midpoint (analytics.MFUFor) and the catalog's
// dense peak (analytics.PeakTFLOPS), as `gpuprice tokens` computes it.
// It runs inside TestIntegrationClickHouseDashboardSQL, on its store.
func tokensMatchAnalytics(t *testing.T, st store.Store, dsn string) {
	ctx := t.Context()
	cat, err := schemas.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	const params = 7e9
	latest, err := st.Latest(ctx, store.Filter{Pricing: schemas.OnDemand})
	if err != nil {
		t.Fatal(err)
	}
	// The job in one node (the default) and across nodes: MFU by the job's shape.
	for job, shape := range map[string]analytics.Job{"one_node": {}, "multi_node": {Nodes: 2}} {
		tokensMatchJob(t, st, dsn, cat, latest, params, job, shape)
	}
}

// tokensMatchJob is tokensMatchAnalytics for one job shape.
func tokensMatchJob(t *testing.T, st store.Store, dsn string, cat *schemas.Catalog, latest []schemas.Observation,
	params float64, job string, shape analytics.Job) {
	ctx := t.Context()
	want := map[string]float64{}
	for _, o := range analytics.CurrentOnly(latest, 24*time.Hour) {
		g, ok := cat.Lookup(o.GPU)
		if !ok {
			continue
		}
		band, _, err := analytics.MFUForJob(g, o.Interconnect, o.GPUCount, shape)
		if err != nil {
			continue // no band: left out
		}
		peak, err := analytics.PeakTFLOPS(g, analytics.BF16)
		if err != nil {
			continue
		}
		c, err := analytics.Tokens(o.PriceUSDGPUHour, params, peak, band.Mid(), 0)
		if err != nil {
			t.Fatal(err)
		}
		k := o.GPU + "|" + o.Provider
		if v, ok := want[k]; !ok || c.USDPer1BTokens < v {
			want[k] = c.USDPer1BTokens
		}
	}
	if len(want) < 4 {
		t.Fatalf("only %d GPU × provider pairs with a band: the test proves little", len(want))
	}

	var sql string
	for _, d := range dashboards() {
		if d.UID == "gpuprice-tokens" {
			sql = d.Panels[1].SQL
		}
	}
	q, err := interpolate(sql, map[string]selection{
		"gpu": {multi: true, all: true}, "kind": {values: []string{schemas.OnDemand}},
		"params": {values: []string{"7e9"}}, "mfu": {values: []string{"band"}}, "job": {values: []string{job}},
	}, time.Now().Add(-7*24*time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	conn := chtest.Conn(t, dsn, nil)
	defer conn.Close()
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]float64{}
	for rows.Next() {
		var (
			gpu, provider, ic           string
			usd, price, mfu, tflops, gh float64
		)
		if err := rows.Scan(&gpu, &provider, &usd, &price, &mfu, &ic, &tflops, &gh); err != nil {
			t.Fatal(err)
		}
		got[gpu+"|"+provider] = usd
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d GPU × provider rows, analytics has %d:\n got  %v\n want %v", job, len(got), len(want), got, want)
	}
	for k, w := range want {
		// analytics.Tokens rounds $ per 1B tokens to 6 decimals (no float noise).
		if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-6+1e-9*w {
			t.Errorf("%s, %s: dashboard %v, analytics %v", job, k, g, w)
		}
	}
}

// provisionedSettings are the customSettings of the provisioned ClickHouse datasource.
func provisionedSettings(t *testing.T) ch.Settings {
	t.Helper()
	var prov struct {
		Datasources []struct {
			Type     string `yaml:"type"`
			JSONData struct {
				CustomSettings []struct {
					Setting string `yaml:"setting"`
					Value   string `yaml:"value"`
				} `yaml:"customSettings"`
			} `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	b, err := os.ReadFile("../provisioning/datasources/gpuprice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &prov); err != nil {
		t.Fatal(err)
	}
	out := ch.Settings{}
	for _, d := range prov.Datasources {
		if d.Type == clickhouseType {
			for _, s := range d.JSONData.CustomSettings {
				// The plugin sends the value as a string, which servers since 19.x
				// take as the setting's text; 18.16's protocol carries integers only.
				if n, err := strconv.Atoi(s.Value); err == nil {
					out[s.Setting] = n
				} else {
					out[s.Setting] = s.Value
				}
			}
		}
	}
	if out["readonly"] != 2 {
		t.Fatalf("the ClickHouse datasource does not set readonly = 2: %v", out)
	}
	return out
}

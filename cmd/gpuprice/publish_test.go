package main

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/publish"
	"github.com/gpuprice/gpuprice/ingest/parquetio"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// publishInput holds four days of H100 prices from every tier: 2026-10-01, 10-02
// and 10-04 have observations, 10-03 none (the prices in force carry over, but
// nothing was observed on it: it is not published), and 09-30 precedes everything.
const publishInput = `observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind,effective_at,gpu_name,gpu_memory_gb,currency,price_native,unit,fx_rate,interconnect,source_url
2026-10-01T06:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,,on_demand,98.32,12.29,api,2026-10-01T06:00:00Z,NVIDIA H100 SXM,80,USD,98.32,hour,1,efa,https://pricing.us-east-1.amazonaws.com
2026-10-02T06:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,,on_demand,96,12,api,2026-10-02T06:00:00Z,NVIDIA H100 SXM,80,USD,96,hour,1,efa,https://pricing.us-east-1.amazonaws.com
2026-10-04T06:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,,on_demand,94,11.75,api,2026-10-04T06:00:00Z,NVIDIA H100 SXM,80,USD,94,hour,1,efa,https://pricing.us-east-1.amazonaws.com
2026-10-01T00:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,us-east-1a,spot,32.7128,4.0891,api,2026-10-01T00:00:00Z,NVIDIA H100 SXM,80,USD,32.7128,hour,1,efa,https://ec2.us-east-1.amazonaws.com
2026-10-01T12:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,us-east-1a,spot,31.9864,3.9983,api,2026-10-01T12:00:00Z,NVIDIA H100 SXM,80,USD,31.9864,hour,1,efa,https://ec2.us-east-1.amazonaws.com
2026-10-02T00:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,us-east-1a,spot,32.5401,4.0675,api,2026-10-02T00:00:00Z,NVIDIA H100 SXM,80,USD,32.5401,hour,1,efa,https://ec2.us-east-1.amazonaws.com
2026-10-04T00:00:00Z,aws,hyperscaler,p5.48xlarge,H100-SXM-80GB,8,us-east-1,us-east-1a,spot,30.1,3.7625,api,2026-10-04T00:00:00Z,NVIDIA H100 SXM,80,USD,30.1,hour,1,efa,https://ec2.us-east-1.amazonaws.com
2026-10-01T06:00:00Z,azure,hyperscaler,Standard_ND96isr_H100_v5,H100-SXM-80GB,8,eastus,,on_demand,98.32,12.29,api,2026-10-01T06:00:00Z,NVIDIA H100 80GB HBM3,80,USD,98.32,hour,1,infiniband,https://prices.azure.com/api/retail/prices
2026-10-04T06:00:00Z,azure,hyperscaler,Standard_ND96isr_H100_v5,H100-SXM-80GB,8,eastus,,on_demand,90,11.25,api,2026-10-04T06:00:00Z,NVIDIA H100 80GB HBM3,80,USD,90,hour,1,infiniband,https://prices.azure.com/api/retail/prices
2026-10-01T06:00:00Z,lambda,specialist,gpu_8x_h100_sxm5,H100-SXM-80GB,8,us-east-1,,on_demand,23.92,2.99,scrape,2026-10-01T06:00:00Z,H100 SXM,80,USD,23.92,hour,1,infiniband,https://lambda.ai/service/gpu-cloud
2026-10-02T06:00:00Z,lambda,specialist,gpu_8x_h100_sxm5,H100-SXM-80GB,8,us-east-1,,on_demand,23.12,2.89,scrape,2026-10-02T06:00:00Z,H100 SXM,80,USD,23.12,hour,1,infiniband,https://lambda.ai/service/gpu-cloud
2026-10-04T06:00:00Z,lambda,specialist,gpu_8x_h100_sxm5,H100-SXM-80GB,8,us-east-1,,on_demand,23.92,2.99,scrape,2026-10-04T06:00:00Z,H100 SXM,80,USD,23.92,hour,1,infiniband,https://lambda.ai/service/gpu-cloud
2026-10-01T06:00:00Z,lambda,specialist,gpu_1x_h100_sxm5,H100-SXM-80GB,1,us-east-1,,on_demand,3.29,3.29,scrape,2026-10-01T06:00:00Z,H100 SXM,80,USD,3.29,hour,1,,https://lambda.ai/service/gpu-cloud
2026-10-01T06:00:00Z,vast,marketplace,offer-7,H100-SXM-80GB,1,US,,on_demand,1.8,1.8,api,2026-10-01T06:00:00Z,H100 SXM,80,USD,1.8,hour,1,,https://console.vast.ai/api/v0/bundles/
2026-10-01T18:00:00Z,vast,marketplace,offer-7,H100-SXM-80GB,1,US,,on_demand,1.85,1.85,api,2026-10-01T18:00:00Z,H100 SXM,80,USD,1.85,hour,1,,https://console.vast.ai/api/v0/bundles/
2026-10-02T06:00:00Z,vast,marketplace,offer-7,H100-SXM-80GB,1,US,,on_demand,1.75,1.75,api,2026-10-02T06:00:00Z,H100 SXM,80,USD,1.75,hour,1,,https://console.vast.ai/api/v0/bundles/
`

// publishRows are the observations of publishInput per day.
var publishRows = map[string]int64{"2026-10-01": 8, "2026-10-02": 4, "2026-10-04": 4}

// importFile writes body to the file at path and imports it into the store at dsn
// (imported rows keep the file as their source_url).
func importFile(t *testing.T, cfg, path, dsn, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "--config", cfg, "--store", dsn, "import", "csv", path); code != 0 {
		t.Fatalf("import csv failed:\n%s", out)
	}
}

// publishJSON runs publish --format json and returns its exit status and results.
func publishJSON(t *testing.T, cfg, dsn, out string, args ...string) (int, map[string]publish.DayResult) {
	t.Helper()
	stdout, _, code := runCtx(t.Context(), append([]string{"--config", cfg, "--store", dsn, "publish", "--out", out, "--format", "json"}, args...)...)
	var res []publish.DayResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("publish --format json (exit %d): %v\n%s", code, err, stdout)
	}
	m := map[string]publish.DayResult{}
	for _, r := range res {
		m[r.Day] = r
	}
	return code, m
}

// tree reads every file under dir, by slash path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d files, then %d", what, len(a), len(b))
	}
	for p, v := range a {
		if w, ok := b[p]; !ok || v != w {
			t.Errorf("%s: %s differs (present: %v)", what, p, ok)
		}
	}
}

// verifyOut runs verify on dir and returns its exit status and output.
func verifyOut(t *testing.T, dir string) (int, string) {
	t.Helper()
	stdout, stderr, code := runCtx(t.Context(), "verify", dir)
	return code, stdout + stderr
}

// readCSVFile reads a CSV file of the snapshot.
func readCSVFile(t *testing.T, p string) [][]string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestPublishDuckDB(t *testing.T) {
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	dsn := "duckdb://" + filepath.Join(dir, "a.duckdb")
	in := filepath.Join(dir, "input.csv")
	importFile(t, cfg, in, dsn, publishInput)
	snap := filepath.Join(t.TempDir(), "snap")
	days := []string{"--since", "2026-09-30", "--until", "2026-10-05"}

	code, res := publishJSON(t, cfg, dsn, snap, days...)
	if code != 0 || len(res) != 5 {
		t.Fatalf("publish: exit %d, %d days: %+v", code, len(res), res)
	}
	if r := res["2026-09-30"]; r.Status != publish.StatusEmpty {
		t.Errorf("2026-09-30 precedes every price: %+v", r)
	}
	// 10-03 has prices in force only as carried from 10-02's sightings: not a citable day.
	if r := res["2026-10-03"]; r.Status != publish.StatusNotObserved || r.LastSeen != "2026-10-02T06:00:00Z" || r.Version != 0 {
		t.Errorf("2026-10-03 (nothing observed): %+v, want not_observed, last seen 2026-10-02T06:00:00Z", r)
	}
	for _, d := range []string{"2026-10-01", "2026-10-02", "2026-10-04"} {
		r := res[d]
		if r.Status != publish.StatusPublished || r.Version != 1 || r.Rows.Prices != publishRows[d] || r.Rows.Index == 0 || r.Rows.Spreads == 0 {
			t.Errorf("%s: %+v, want published v1 with %d prices and index and spreads rows", d, r, publishRows[d])
		}
	}
	if _, err := os.Stat(filepath.Join(snap, "prices", "dt=2026-09-30")); err == nil {
		t.Error("an empty day was written")
	}
	if code, out := verifyOut(t, snap); code != 0 || !strings.Contains(out, "ok: ") {
		t.Fatalf("verify of a fresh snapshot: exit %d\n%s", code, out)
	}
	published := tree(t, snap)

	// The same store gives the same bytes, and publishing again writes nothing.
	other := filepath.Join(t.TempDir(), "other")
	if code, _ := publishJSON(t, cfg, dsn, other, days...); code != 0 {
		t.Fatal("second publish failed")
	}
	sameTree(t, "a second directory from the same store", published, tree(t, other))
	code, res = publishJSON(t, cfg, dsn, snap, days...)
	for d, r := range res {
		if want := publish.StatusUnchanged; d != "2026-09-30" && d != "2026-10-03" && r.Status != want {
			t.Errorf("re-publish %s: %s, want %s", d, r.Status, want)
		}
	}
	if code != 0 {
		t.Errorf("re-publish exit %d", code)
	}
	text, _, _ := runCtx(t.Context(), "--config", cfg, "--store", dsn, "publish", "--out", snap, "--day", "2026-10-02")
	if !strings.Contains(text, "2026-10-02  unchanged") || !strings.Contains(text, "nothing written") {
		t.Errorf("re-publish does not say so:\n%s", text)
	}
	sameTree(t, "re-publish", published, tree(t, snap))
	// Without flags: the days after the last published one through yesterday.
	if _, stderr, code := runCtx(t.Context(), "--config", cfg, "--store", dsn, "publish", "--out", other, "--until", "2026-10-05"); code != 0 ||
		!strings.Contains(stderr, "every day through 2026-10-04 is published") {
		t.Errorf("publish with nothing left: exit %d\n%s", code, stderr)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if _, _, code := runCtx(t.Context(), "--config", cfg, "--store", dsn, "publish", "--out", snap, "--day", today); code != 2 {
		t.Errorf("--day today (not over): exit %d, want 2", code)
	}

	// A run stopped after writing manifests but before the catalog: the next run takes
	// them in; one stopped before a day's manifest left files the next run replaces.
	crash := filepath.Join(t.TempDir(), "crash")
	if code, _ := publishJSON(t, cfg, dsn, crash, "--day", "2026-10-01"); code != 0 {
		t.Fatal("publish of one day failed")
	}
	early, _ := os.ReadFile(filepath.Join(crash, publish.CatalogFile))
	if err := os.CopyFS(filepath.Join(crash, "x"), os.DirFS(snap)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"prices", "index", "spreads", "manifests"} {
		os.RemoveAll(filepath.Join(crash, d))
		if err := os.Rename(filepath.Join(crash, "x", d), filepath.Join(crash, d)); err != nil {
			t.Fatal(err)
		}
	}
	os.RemoveAll(filepath.Join(crash, "x"))
	os.WriteFile(filepath.Join(crash, publish.CatalogFile), early, 0o644)
	os.Remove(filepath.Join(crash, "manifests", "2026-10-04.json")) // stopped before 10-04's manifest
	os.WriteFile(filepath.Join(crash, "index", "dt=2026-10-04", "part-00000.csv"), []byte("half a file"), 0o644)
	if code, out := verifyOut(t, crash); code != 1 || !strings.Contains(out, "FAIL manifests/2026-10-02.json: is listed in no manifest") {
		t.Errorf("verify after a stopped run: exit %d\n%s", code, out)
	}
	code, res2 := publishJSON(t, cfg, dsn, crash, days...)
	if code != 0 || res2["2026-10-02"].Status != publish.StatusUnchanged || res2["2026-10-04"].Status != publish.StatusPublished {
		t.Errorf("publish after a stopped run: exit %d, %+v", code, res2)
	}
	sameTree(t, "after recovering a stopped run", published, tree(t, crash))

	if _, _, code := runCtx(t.Context(), "--config", cfg, "--store", dsn, "publish", "--out", snap, "--since", "2026-10-05", "--until", "2026-10-01"); code != 2 {
		t.Errorf("--since after --until: exit %d, want 2", code)
	}

	// An independent reader: DuckDB reads the dataset with Hive partitioning.
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	glob := filepath.Join(snap, "prices", "*", "*.parquet")
	types := map[string]string{}
	var names []string
	rows, err := db.Query(fmt.Sprintf(`DESCRIBE SELECT * FROM read_parquet('%s', hive_partitioning = true)`, glob))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, typ string
		var null, key, def, extra sql.NullString
		if err := rows.Scan(&name, &typ, &null, &key, &def, &extra); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		types[name] = typ
	}
	rows.Close()
	if want := append(slices.Clone(parquetio.Columns), "dt"); !slices.Equal(names, want) {
		t.Errorf("columns %v\nwant %v", names, want)
	}
	for col, want := range map[string]string{"observed_at": "TIMESTAMP WITH TIME ZONE", "effective_at": "TIMESTAMP WITH TIME ZONE",
		"price_usd_gpu_hour": "DOUBLE", "gpu_count": "DOUBLE", "provider": "VARCHAR", "pricing": "VARCHAR", "dt": "DATE"} {
		if types[col] != want {
			t.Errorf("column %s is %s, want %s", col, types[col], want)
		}
	}
	got := map[string]int64{}
	rows, err = db.Query(fmt.Sprintf(`SELECT strftime(dt, '%%Y-%%m-%%d'), count(*), bool_and(CAST(effective_at AS DATE) = dt)
		FROM read_parquet('%s', hive_partitioning = true) GROUP BY dt ORDER BY dt`, glob))
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var d string
		var n int64
		var inDay bool
		if err := rows.Scan(&d, &n, &inDay); err != nil {
			t.Fatal(err)
		}
		if !inDay {
			t.Errorf("dt=%s holds rows of another day", d)
		}
		got[d] = n
	}
	rows.Close()
	if fmt.Sprint(got) != fmt.Sprint(publishRows) {
		t.Errorf("duckdb reads %v rows per day, want %v", got, publishRows)
	}
	var sum float64
	if err := db.QueryRow(fmt.Sprintf(`SELECT sum(price_usd_gpu_hour) FROM read_parquet('%s', hive_partitioning = true)
		WHERE dt = DATE '2026-10-01' AND provider = 'vast'`, glob)).Scan(&sum); err != nil || math.Abs(sum-3.65) > 1e-9 {
		t.Errorf("vast on 2026-10-01: sum %v, %v", sum, err)
	}
	var indexRows int64
	if err := db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM read_csv('%s', hive_partitioning = true, header = true)`,
		filepath.Join(snap, "index", "*", "*.csv"))).Scan(&indexRows); err != nil {
		t.Fatal(err)
	}
	var wantIndex int64
	for _, r := range res {
		if r.Status != publish.StatusNotObserved { // not written
			wantIndex += r.Rows.Index
		}
	}
	if indexRows != wantIndex {
		t.Errorf("duckdb reads %d index rows, the manifests say %d", indexRows, wantIndex)
	}

	// gpuprice's own Parquet import reads a day back as the store holds it.
	back := "duckdb://" + filepath.Join(t.TempDir(), "back.duckdb")
	if out, code := run(t, "--config", cfg, "--store", back, "import", "parquet", filepath.Join(snap, "prices", "dt=2026-10-01", "part-00000.parquet")); code != 0 {
		t.Fatalf("import parquet of a published day failed:\n%s", out)
	}
	day := []string{"--format", "csv", "--since", "2026-10-01", "--until", "2026-10-02"}
	if a, b := dropColumns(parseCSV(t, exportOut(t, cfg, back, day...)), 20), dropColumns(parseCSV(t, exportOut(t, cfg, dsn, day...)), 20); a != b || strings.Count(a, "\n") != 8 {
		t.Errorf("a published day imported back differs (source_url aside):\n%s\n---\n%s", a, b)
	}

	// The series are the numbers `gpuprice index` and `spreads` give for the day.
	idx := readCSVFile(t, filepath.Join(snap, "index", "dt=2026-10-02", "part-00000.csv"))
	if !slices.Equal(idx[0], publish.IndexColumns) {
		t.Fatalf("index header %v", idx[0])
	}
	cliIdx, _, _ := runCtx(t.Context(), "--config", cfg, "--store", dsn, "index", "--gpu", "H100-SXM-80GB", "--since", "1d",
		"--at", "2026-10-02T12:00:00Z", "--format", "json")
	var points []analytics.IndexPoint
	if err := json.Unmarshal([]byte(cliIdx), &points); err != nil {
		t.Fatalf("index --format json: %v\n%s", err, cliIdx)
	}
	matched := 0
	for _, p := range points {
		for _, rec := range idx[1:] {
			if rec[0] == p.GPU && rec[1] == p.Pricing && rec[2] == p.Group {
				matched++
				if v, _ := strconv.ParseFloat(rec[4], 64); math.Abs(v-p.Price) > 1e-9 || rec[5] != strconv.Itoa(p.Offers) {
					t.Errorf("index %v: %s, offers %s; `gpuprice index` says %v, %d", rec[:3], rec[4], rec[5], p.Price, p.Offers)
				}
			}
		}
	}
	if matched != len(points) || matched != len(idx)-1 {
		t.Errorf("index lines: %d matched, cli %d, file %d", matched, len(points), len(idx)-1)
	}
	for _, rec := range idx[1:] {
		// aws 12.29 → 12.00 and azure 12.29 carried: the link is their geometric mean.
		if rec[1] == "on_demand" && rec[2] == analytics.GroupHyperscaler {
			if v, _ := strconv.ParseFloat(rec[8], 64); math.Abs(v-math.Sqrt(12/12.29)) > 1e-6 || rec[9] != "2" {
				t.Errorf("hyperscaler on-demand chain link %s over %s series, want %.6f over 2", rec[8], rec[9], math.Sqrt(12/12.29))
			}
		}
	}
	for _, kind := range []string{"prices", "index", "spreads"} {
		if _, err := os.Stat(filepath.Join(snap, kind, "dt=2026-10-03")); err == nil {
			t.Errorf("%s of 2026-10-03, a day nothing was observed on, was written", kind)
		}
	}
	text, _, _ = runCtx(t.Context(), "--config", cfg, "--store", dsn, "publish", "--out", snap, "--day", "2026-10-03")
	if !strings.Contains(text, "2026-10-03  not observed") || !strings.Contains(text, "last seen 2026-10-02T06:00:00Z") {
		t.Errorf("publish of a day nothing was observed on does not say so:\n%s", text)
	}

	// Tampering with any byte fails verify, naming the file.
	for _, c := range []struct{ file, want string }{
		{"prices/dt=2026-10-02/part-00000.parquet", "prices/dt=2026-10-02/part-00000.parquet: sha256"},
		{"index/dt=2026-10-04/part-00000.csv", "index/dt=2026-10-04/part-00000.csv: sha256"},
		{"manifests/2026-10-01.json", "manifests/2026-10-01.json: "},
		{"catalog.json", "catalog.json: "},
	} {
		bad := filepath.Join(t.TempDir(), "bad")
		if err := os.CopyFS(bad, os.DirFS(snap)); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(bad, filepath.FromSlash(c.file))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		i := len(b) / 2
		if strings.HasSuffix(c.file, ".json") { // a digit of a row count
			i = strings.Index(string(b), `"prices": `) + len(`"prices": `)
		}
		b[i] ^= 0x01
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out := verifyOut(t, bad); code != 1 || !strings.Contains(out, "FAIL "+c.want) {
			t.Errorf("verify after changing a byte of %s: exit %d\n%s", c.file, code, out)
		}
	}
	stray := filepath.Join(t.TempDir(), "stray")
	if err := os.CopyFS(stray, os.DirFS(snap)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(stray, "prices", "dt=2026-10-02", "part-00001.parquet"), []byte("PAR1"), 0o644)
	os.Remove(filepath.Join(stray, "spreads", "dt=2026-10-01", "part-00000.csv"))
	if code, out := verifyOut(t, stray); code != 1 || !strings.Contains(out, "FAIL prices/dt=2026-10-02/part-00001.parquet: is listed in no manifest") ||
		!strings.Contains(out, "FAIL spreads/dt=2026-10-01/part-00000.csv: missing") {
		t.Errorf("verify with a stray file and a missing one: exit %d\n%s", code, out)
	}

	// A price seen again (same identity, later observed_at) changes no snapshot.
	lines := strings.SplitN(publishInput, "\n", 3)
	importFile(t, cfg, in, dsn, lines[0]+"\n"+strings.Replace(lines[1], "2026-10-01T06:00:00Z", "2026-10-02T09:00:00Z", 1)+"\n")
	if out := exportOut(t, cfg, dsn, "--format", "csv", "--provider", "aws", "--pricing", "on_demand", "--until", "2026-10-02"); !strings.Contains(out, "2026-10-02T09:00:00Z,aws") {
		t.Fatalf("the re-sighting did not move observed_at:\n%s", out)
	}
	if code, res := publishJSON(t, cfg, dsn, snap, "--day", "2026-10-01"); code != 0 || res["2026-10-01"].Status != publish.StatusUnchanged {
		t.Errorf("after a re-sighting: exit %d, %+v", code, res["2026-10-01"])
	}

	// A late observation changes 2026-10-02 (and the days its price carries into):
	// reported, left as published; --republish writes v2 beside v1.
	late := lines[0] + "\n" +
		"2026-10-02T18:00:00Z,lambda,specialist,gpu_8x_h100_sxm5,H100-SXM-80GB,8,us-east-1,,on_demand,22.32,2.79,scrape,2026-10-02T18:00:00Z,H100 SXM,80,USD,22.32,hour,1,infiniband,https://lambda.ai/service/gpu-cloud\n"
	importFile(t, cfg, filepath.Join(dir, "late.csv"), dsn, late)
	code, res = publishJSON(t, cfg, dsn, snap, days...)
	if r := res["2026-10-02"]; code != 1 || r.Status != publish.StatusChanged || r.Version != 1 || len(r.Changes) == 0 || r.Rows.Prices != 5 {
		t.Errorf("changed day: exit %d, %+v", code, r)
	}
	if r := res["2026-10-01"]; r.Status != publish.StatusUnchanged {
		t.Errorf("2026-10-01 after a change on 10-02: %+v", r)
	}
	sameTree(t, "publish of changed days without --republish", published, tree(t, snap))
	code, res = publishJSON(t, cfg, dsn, snap, append(days, "--republish")...)
	if r := res["2026-10-02"]; code != 0 || r.Status != publish.StatusRepublished || r.Version != 2 || r.Manifest != "manifests/2026-10-02.v2.json" {
		t.Errorf("--republish: exit %d, %+v", code, r)
	}
	if code, out := verifyOut(t, snap); code != 0 {
		t.Errorf("verify after --republish: exit %d\n%s", code, out)
	}
	now := tree(t, snap)
	for p, v := range published {
		if p != publish.CatalogFile && now[p] != v {
			t.Errorf("--republish changed %s", p)
		}
	}
	var v1, v2 int64
	db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s', hive_partitioning = true) WHERE dt = DATE '2026-10-02'`, glob)).Scan(&v1)
	db.QueryRow(fmt.Sprintf(`SELECT count(*) FROM read_parquet('%s', hive_partitioning = true) WHERE dt = DATE '2026-10-02'`,
		filepath.Join(snap, "revisions", "v2", "prices", "*", "*.parquet"))).Scan(&v2)
	if v1 != 4 || v2 != 5 {
		t.Errorf("2026-10-02: %d rows as first published, %d in v2; want 4 and 5", v1, v2)
	}

	// A citation names the newest version of each day of a span.
	cite, err := publish.Cite(snap, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if len(cite.Days) != 3 || cite.Days[1].Version != 2 || !slices.Equal(cite.Missing, []string{"2026-10-03", "2026-10-05"}) ||
		cite.Complete() || !strings.HasPrefix(cite.ID, "sha256:") || !strings.Contains(cite.String(), "3 of 5 days published") {
		t.Errorf("citation %+v\n%s", cite, cite)
	}
	again, _ := publish.Cite(snap, time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 10, 4, 0, 0, 0, 0, time.UTC))
	// The same days cited; 10-03, nothing observed on it, is missing.
	if again.ID != cite.ID || again.Complete() || len(again.Days) != 3 || !slices.Equal(again.Missing, []string{"2026-10-03"}) {
		t.Errorf("citation of 10-01..10-04: %+v", again)
	}
	if _, err := publish.Cite(filepath.Join(t.TempDir(), "none"), time.Now(), time.Now()); err == nil {
		t.Error("citing a directory with no catalog succeeded")
	}
}

// ClickHouse publishes the same bytes as DuckDB from the same input.
func TestIntegrationClickHousePublish(t *testing.T) {
	ch := chtest.FreshDSN(t, "publish")
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	duck := "duckdb://" + filepath.Join(dir, "d.duckdb")
	in := filepath.Join(dir, "input.csv") // one file for both, so source_url is the same
	importFile(t, cfg, in, ch, publishInput)
	if out, code := run(t, "--config", cfg, "--store", duck, "import", "csv", in); code != 0 {
		t.Fatalf("import into duckdb failed:\n%s", out)
	}
	a, b := filepath.Join(t.TempDir(), "ch"), filepath.Join(t.TempDir(), "duck")
	days := []string{"--since", "2026-10-01", "--until", "2026-10-05"}
	if code, res := publishJSON(t, cfg, ch, a, days...); code != 0 || len(res) != 4 || res["2026-10-01"].Rows.Prices != 8 {
		t.Fatalf("publish from clickhouse: exit %d, %+v", code, res)
	}
	if code, _ := publishJSON(t, cfg, duck, b, days...); code != 0 {
		t.Fatal("publish from duckdb failed")
	}
	sameTree(t, "clickhouse vs duckdb", tree(t, b), tree(t, a))
	if code, out := verifyOut(t, a); code != 0 {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
	if code, res := publishJSON(t, cfg, ch, a, days...); code != 0 || res["2026-10-04"].Status != publish.StatusUnchanged {
		t.Errorf("re-publish from clickhouse: exit %d, %+v", code, res)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/analytics/figurestest"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/clickhouse/clustertest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// clusterHistory writes a CSV of a 10-day hourly history of 112 series
// (storetest.Generate: SYNTHETIC prices, for tests only) and returns its path and
// number of rows.
func clusterHistory(t *testing.T, start time.Time) (string, int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind,interconnect\n")
	n := 0
	err := storetest.Generate(storetest.GenSpec{Series: 112, Steps: 240, Start: start, Step: time.Hour, Seed: 11}, 10000,
		func(obs []schemas.Observation) error {
			for _, o := range obs {
				fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%g,%s,%s,%s,%g,%g,import,%s\n", o.ObservedAt.Format(time.RFC3339), o.Provider,
					o.Tier, o.SKU, o.GPU, o.GPUCount, o.Region, o.Zone, o.Pricing, o.PriceUSDHour, o.PriceUSDGPUHour, o.Interconnect)
				n++
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "history.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, n
}

// TestIntegrationClickHouseClusterImport imports a history into the cluster of
// deploy/clickhouse-cluster/local.sh through its Distributed tables (migrated with
// migrate --cluster) and into one ClickHouse server. Mid-import it SIGKILLs node 3,
// the replica of shard 2 the writes go to: the import completes, every analytic
// still answers through the cluster while the node is down, and after the node is
// restarted it catches up with its shard's other replica. In the end no row is
// lost or counted twice, and every analytic (prices, tokens, volatility, spreads,
// history, index) and the dashboard views give the single server's answer.
func TestIntegrationClickHouseClusterImport(t *testing.T) {
	c := clustertest.GetExclusive(t) // it kills a node: no other test on the cluster meanwhile
	control := clustertest.Control(t)
	single := chtest.FreshDSN(t, "single") // the one server it compares with (deploy/test.sh sets both)

	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	at := start.Add(10 * 24 * time.Hour).Format(time.RFC3339)
	csvPath, rows := clusterHistory(t, start)

	clusterDSN := c.DSN(t) // every node, node 1 first
	db := strings.TrimPrefix(regexp.MustCompile(`/[A-Za-z0-9_]+\?`).FindString(clusterDSN), "/")
	db = strings.TrimSuffix(db, "?")
	dataDir := t.TempDir()
	cfgPath := filepath.Join(dataDir, "gpuprice.yaml")
	cfg := fmt.Sprintf("data_dir: %s\ningest: {batch_size: 500, flush_interval: 1h}\nsources:\n  fx: {enabled: false}\n", dataDir)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	gp := func(dsn string, args ...string) (string, int) {
		return run(t, append([]string{"--config", cfgPath, "--store", dsn}, args...)...)
	}

	// One server.
	t0 := time.Now()
	if out, code := gp(single, "import", "csv", csvPath); code != 0 {
		t.Fatalf("import into one server: %s", out)
	}
	t.Logf("one server: imported %d rows in %v", rows, time.Since(t0).Round(time.Millisecond))

	// The cluster, made by migrate --cluster from a DSN without the parameter.
	plain := strings.Replace(clusterDSN, "cluster="+c.Name, "", 1)
	// As clustertest's Migrate does: a node the cluster's watch restarts cuts the
	// migration off (unavailable), and migrate run again resumes it.
	for attempt := 1; ; attempt++ {
		var out, errb strings.Builder
		code := cli.Main(context.Background(), []string{"--config", cfgPath, "--store", plain, "migrate", "--cluster", c.Name},
			&out, &errb)
		if code == 0 && strings.Contains(out.String(), "applied migrations") {
			break
		}
		if attempt == 3 || !strings.Contains(errb.String(), "store: unavailable") {
			t.Fatalf("migrate --cluster, attempt %d: exit %d: %s%s", attempt, code, out.String(), errb.String())
		}
		t.Logf("migrate --cluster, attempt %d: %s; again once the cluster answers", attempt, errb.String())
		if err := c.Check(t.Context(), clustertest.DDLTimeout); err != nil {
			t.Logf("cluster check: %v", err)
		}
	}
	const victim = 2 // node 3: shard 2's first replica, where node 1 sends shard 2's rows
	var killedAt atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn := c.Conn(t, 0)
		defer conn.Close()
		for i := 0; i < 20000; i++ {
			var n uint64
			if err := conn.QueryRow(context.Background(), "SELECT count() FROM "+db+".observations_local").Scan(&n); err == nil && n >= 3000 {
				killedAt.Store(int64(n))
				clustertest.Kill(t, control, victim)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			clustertest.Start(t, control, victim)
		}
	})
	t0 = time.Now()
	out, code := gp(clusterDSN, "import", "csv", csvPath)
	importTime := time.Since(t0)
	<-done
	if killedAt.Load() == 0 {
		t.Fatalf("the import ended before node 3 could be killed mid-import:\n%s", out)
	}
	if code != 0 {
		t.Fatalf("import into the cluster with node 3 killed: exit %d\n%s", code, out)
	}
	t.Logf("cluster: imported %d rows in %v, node 3 SIGKILLed after %d rows reached shard 1's replica:\n%s", rows, importTime.Round(time.Millisecond), killedAt.Load(), out)
	m := regexp.MustCompile(`(?m)^import:csv\s+(\w+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s+(\d+)\s+\S+\s*(.*)$`).FindStringSubmatch(out)
	if m == nil || (m[1] != "ok" && m[1] != "degraded") || atoi(m[2]) != rows || atoi(m[3]) != 0 || (m[1] == "ok") != (m[4] == "0") {
		t.Fatalf("import summary: %q, want ok (or degraded with rows spooled), %d accepted, 0 quarantined:\n%s", m, rows, out)
	}
	// Rows the kill made unwritable were spooled: write them now (shard 2 answers
	// through node 4).
	if out, code := gp(clusterDSN, "spool", "replay"); code != 0 {
		t.Fatalf("spool replay with node 3 down: %s", out)
	}

	analytics := [][]string{
		{"prices", "--format", "csv"},
		{"tokens", "--params", "7e9", "--format", "json"},
		{"volatility", "--window", "7d", "--bar", "1h", "--pricing", "spot", "--at", at, "--format", "json"},
		{"volatility", "--window", "10d", "--bar", "24h", "--at", at, "--format", "json"},
		{"spreads", "--pricing", "on_demand", "--since", "10d", "--at", at, "--format", "json"},
		{"history", "--gpu", "H100-SXM-80GB", "--since", "10d", "--at", at, "--format", "json"},
		{"index", "--since", "10d", "--at", at, "--format", "json"},
	}
	// Reads keep answering while node 3 is down.
	for _, a := range analytics {
		if out, code := gp(clusterDSN, a...); code != 0 || len(out) < 10 {
			t.Fatalf("%v with node 3 down: exit %d\n%s", a, code, out)
		}
	}

	clustertest.Start(t, control, victim)
	restarted = true
	t0 = time.Now()
	// The restarted replica catches up: it holds what its shard's other replica
	// holds. Right after the restart it may still wait for its old ZooKeeper session
	// to expire and have nothing queued yet, so SYSTEM SYNC REPLICA alone can return
	// early: compare the replicas until they agree.
	sums := make([]string, len(c.Nodes))
	for {
		// A replica still read-only may refuse SYSTEM SYNC REPLICA: try again.
		err := trySyncReplicas(c, db, "observations_local", "bars_local", "runs_local")
		for n := range c.Nodes {
			conn := c.Conn(t, n)
			var cnt, sum uint64
			if err := conn.QueryRow(context.Background(), `SELECT count(), sum(cityHash64(provider, sku, region, zone, pricing,
				effective_at, version, price_usd_gpu_hour)) FROM `+db+`.observations_local`).Scan(&cnt, &sum); err != nil {
				t.Fatalf("node %d: %v", n+1, err)
			}
			conn.Close()
			sums[n] = fmt.Sprintf("%d rows, hash %d", cnt, sum)
		}
		if err == nil && sums[2] == sums[3] && sums[0] == sums[1] {
			break
		}
		if time.Since(t0) > 2*time.Minute {
			t.Fatalf("replicas still differ 2 minutes after the restart: %q (last sync: %v)", sums, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("node 3 caught up %v after its restart: %q", time.Since(t0).Round(time.Millisecond), sums)

	// 0 rows lost, 0 counted twice; the same observations as on one server.
	read := func(dsn string) []schemas.Observation {
		st, err := store.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		obs, err := st.Observations(context.Background(), store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range obs {
			obs[i] = storetest.Normalize(obs[i])
			obs[i].RunID = ""
		}
		return obs
	}
	onCluster, onSingle := read(clusterDSN), read(single)
	ids := map[string]bool{}
	for _, o := range onCluster {
		ids[o.SeriesKey()+"@"+o.EffectiveAt.String()] = true
	}
	if len(onCluster) != rows || len(ids) != rows {
		t.Fatalf("cluster holds %d observations of %d identities, want each of %d once", len(onCluster), len(ids), rows)
	}
	if !reflect.DeepEqual(onCluster, onSingle) {
		t.Fatal("the cluster's observations differ from one server's")
	}

	// Every analytic gives the single server's answer (bars rebuilt over everything
	// on both, as a rollup after the spool replay would).
	for _, dsn := range []string{single, clusterDSN} {
		if out, code := gp(dsn, "rollup"); code != 0 {
			t.Fatalf("rollup: %s", out)
		}
	}
	for _, a := range analytics {
		t0 := time.Now()
		want, code := gp(single, a...)
		ts := time.Since(t0)
		if code != 0 {
			t.Fatalf("%v on one server: exit %d", a, code)
		}
		t0 = time.Now()
		got, code := gp(clusterDSN, a...)
		tc := time.Since(t0)
		if code != 0 {
			t.Fatalf("%v on the cluster: exit %d", a, code)
		}
		if d := sameAnswer(got, want); d != "" {
			t.Errorf("%v: the cluster's answer differs from one server's: %s\n--- cluster ---\n%.3000s\n--- one server ---\n%.3000s", a, d, got, want)
		}
		t.Logf("%-10s one server %6v  cluster %6v  (%d bytes)", a[0], ts.Round(time.Millisecond), tc.Round(time.Millisecond), len(got))
	}

	// The dashboard views give the same rows on both.
	for _, q := range []string{
		`SELECT count(), round(sum(price_usd_gpu_hour), 4) FROM v_observations`,
		`SELECT provider, sku, region, zone, pricing, effective_at, price_usd_gpu_hour, on_offer FROM v_latest ORDER BY provider, sku, region, zone, pricing`,
		`SELECT width, count(), round(sum(close), 4), sum(count) FROM v_bars GROUP BY width ORDER BY width`,
		`SELECT gpu, pricing, day, round(hyperscaler, 6), round(specialist, 6), round(marketplace, 6) FROM v_spreads WHERE day < '2025-06-12 00:00:00' ORDER BY gpu, pricing, day`,
		`SELECT gpu, pricing, group_name, day, round(price, 6), offers FROM v_index WHERE day < '2025-06-12 00:00:00' ORDER BY gpu, pricing, group_name, day`,
	} {
		if got, want := viewRows(t, clusterDSN, q), viewRows(t, single, q); got != want {
			t.Errorf("%s: cluster\n%.2000s\none server\n%.2000s", q, got, want)
		} else if got == "" {
			t.Errorf("%s: no rows", q)
		}
	}
}

// sameAnswer compares two outputs of a command: text exactly, JSON value by value
// with numbers equal to within figurestest.Nearly. A mean is a sum whose order depends on the
// order rows arrive in (from two shards on a cluster, from parts on one server), so
// figures derived from means may differ in their last bits; nothing else may.
func sameAnswer(got, want string) string {
	var g, w any
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		if got != want {
			return "text differs"
		}
		return ""
	}
	return figurestest.JSONDiff("$", g, w)
}

// viewRows runs q in the DSN's database and renders its rows as text.
func viewRows(t *testing.T, dsn, q string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	vals := u.Query()
	vals.Del("cluster")
	u.RawQuery = vals.Encode()
	conn := openCH(t, u.String())
	defer conn.Close()
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var b strings.Builder
	types := rows.ColumnTypes()
	for rows.Next() {
		vals := make([]any, len(types))
		for i, ct := range types {
			vals[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if i > 0 {
				b.WriteByte('\t')
			}
			fmt.Fprint(&b, reflect.ValueOf(v).Elem().Interface())
		}
		b.WriteByte('\n')
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// trySyncReplicas waits until every replica fetched what its shard holds, as far
// as each replica knows, and returns the first error.
func trySyncReplicas(c *clustertest.Cluster, db string, tables ...string) error {
	for n := range c.Nodes {
		conn, err := c.Open(n)
		if err != nil {
			return err
		}
		for _, tbl := range tables {
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			err := conn.Exec(ctx, "SYSTEM SYNC REPLICA "+db+"."+tbl)
			cancel()
			if err != nil {
				conn.Close()
				return fmt.Errorf("node %d: SYSTEM SYNC REPLICA %s.%s: %w", n+1, db, tbl, err)
			}
		}
		conn.Close()
	}
	return nil
}

// openCH opens a plain clickhouse-go connection.
func openCH(t *testing.T, dsn string) ch.Conn {
	t.Helper()
	opts, err := ch.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ch.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// TestMigrateClusterFlag: --cluster needs a ClickHouse DSN, and one whose cluster
// parameter (if any) names the same cluster.
func TestMigrateClusterFlag(t *testing.T) {
	t.Setenv("GPUPRICE_DATA_DIR", t.TempDir())
	for _, tc := range []struct{ dsn, cluster, want string }{
		{"duckdb://" + filepath.Join(t.TempDir(), "x.duckdb"), "gpuprice", "--cluster needs a ClickHouse store"},
		{"clickhouse://127.0.0.1:1/x?cluster=gpuprice", "other", "--cluster other but the DSN says cluster=gpuprice"},
		{"clickhouse://127.0.0.1:1/x", "bad-name", `cluster parameter "bad-name"`},
	} {
		var out, errb strings.Builder
		code := cli.Main(context.Background(), []string{"--store", tc.dsn, "migrate", "--cluster", tc.cluster}, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("migrate --cluster with %s: exit %d, %q; want an error saying %q", tc.dsn, code, errb.String(), tc.want)
		}
	}
}

package clickhouse_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/clustertest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestIntegrationClickHouseCluster migrates a database on the cluster and checks
// what every node holds: Replicated local tables and Distributed tables, the views;
// rows written twice through node 1 read back once each from every node, with
// the last write; bars rolled up on the cluster equal the ones computed here; every
// series lives on exactly one shard, both replicas of a shard hold the same rows.
func TestIntegrationClickHouseCluster(t *testing.T) {
	c := clustertest.Get(t)
	ctx := t.Context()
	dsn := c.DSN(t)
	st, err := clickhouse.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	applied, err := c.Migrate(t, st)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := schemas.Migrations(schemas.BackendClickHouse)
	if len(applied) != len(ms) {
		t.Fatalf("applied %v, want all %d migrations", applied, len(ms))
	}
	if again, err := st.Migrate(ctx); err != nil || len(again) != 0 {
		t.Fatalf("second Migrate: %v, %v", again, err)
	}
	db := strings.TrimPrefix(mustPath(t, dsn), "/")

	// Every node has every table, local and Distributed, and the views.
	for n := range c.Nodes {
		conn := c.Conn(t, n)
		rows, err := conn.Query(ctx, `SELECT name, engine FROM system.tables WHERE database = ?`, db)
		if err != nil {
			t.Fatal(err)
		}
		engines := map[string]string{}
		for rows.Next() {
			var name, engine string
			if err := rows.Scan(&name, &engine); err != nil {
				t.Fatal(err)
			}
			engines[name] = engine
		}
		rows.Close()
		conn.Close()
		for table := range schemas.ShardingKeys {
			if engines[table] != "Distributed" || !strings.HasPrefix(engines[table+"_local"], "Replicated") {
				t.Errorf("node %d: %s is %q, %s_local is %q", n+1, table, engines[table], table, engines[table+"_local"])
			}
		}
		for name, e := range engines {
			if strings.HasPrefix(name, "v_") && e != "View" {
				t.Errorf("node %d: %s is %s", n+1, name, e)
			}
		}
	}

	// Many series, each written twice (the second write wins).
	var obs []schemas.Observation
	if err := storetest.Generate(storetest.GenSpec{Series: 60, Steps: 30, Start: time.Date(2025, 2, 27, 0, 0, 0, 0, time.UTC),
		Step: 2 * time.Hour, Seed: 7}, 100000, func(b []schemas.Observation) error {
		obs = append(obs, b...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stale := make([]schemas.Observation, len(obs))
	for i, o := range obs {
		o.PriceUSDGPUHour, o.PriceUSDHour = o.PriceUSDGPUHour+100, o.PriceUSDHour+100
		stale[i] = o
	}
	for _, batch := range [][]schemas.Observation{stale, obs} {
		if err := st.WriteObservations(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	want := storetest.WantObservations(obs, store.Filter{})
	for n := range c.Nodes {
		other, err := clickhouse.Open(ctx, c.DatabaseDSN(db, n))
		if err != nil {
			t.Fatal(err)
		}
		// Through another node the other shard's rows may come from the replica the
		// write did not go to: wait for replication.
		syncReplicas(t, c, db, "observations_local")
		got, err := other.Observations(ctx, store.Filter{})
		other.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("through node %d: %d observations, want %d", n+1, len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(storetest.Normalize(got[i]), storetest.Normalize(want[i])) {
				t.Fatalf("through node %d: row %d is %+v, want %+v", n+1, i, got[i], want[i])
			}
		}
	}

	// Bars rolled up on the cluster.
	if err := st.(store.Rollups).Rollup(ctx, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range store.Widths {
		got, err := st.(store.Rollups).Bars(ctx, store.BarQuery{Width: w})
		if err != nil {
			t.Fatal(err)
		}
		if d := storetest.BarsDiff(got, storetest.WantBars(obs, w)); d != "" {
			t.Errorf("%v bars on the cluster: %s", w, d)
		}
	}

	// Where the rows are: each series on one shard, both shards used, replicas equal.
	syncReplicas(t, c, db, "observations_local", "bars_local")
	shardOf := map[string]int{}
	perNode := make([]string, len(c.Nodes))
	for n := range c.Nodes {
		conn := c.Conn(t, n)
		var shard uint32
		if err := conn.QueryRow(ctx, `SELECT toUInt32(substitution) FROM system.macros WHERE macro = 'shard'`).Scan(&shard); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, `SELECT provider, sku, region, zone, pricing, count() FROM `+db+`.observations_local
			GROUP BY provider, sku, region, zone, pricing ORDER BY provider, sku, region, zone, pricing`)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for rows.Next() {
			var p, k, r, z, pr string
			var cnt uint64
			if err := rows.Scan(&p, &k, &r, &z, &pr, &cnt); err != nil {
				t.Fatal(err)
			}
			key := p + "|" + k + "|" + r + "|" + z + "|" + pr
			if s, ok := shardOf[key]; ok && s != int(shard) {
				t.Errorf("series %s on shards %d and %d", key, s, shard)
			}
			shardOf[key] = int(shard)
			fmt.Fprintf(&b, "%s %d\n", key, cnt)
		}
		rows.Close()
		conn.Close()
		perNode[n] = b.String()
	}
	if perNode[0] != perNode[1] || perNode[2] != perNode[3] {
		t.Errorf("replicas differ:\nnode 1:\n%s\nnode 2:\n%s\nnode 3:\n%s\nnode 4:\n%s", perNode[0], perNode[1], perNode[2], perNode[3])
	}
	if perNode[0] == "" || perNode[2] == "" {
		t.Errorf("a shard holds nothing: shard 1 %d bytes, shard 2 %d bytes", len(perNode[0]), len(perNode[2]))
	}
	if len(shardOf) != 60 {
		t.Errorf("%d series stored, want 60", len(shardOf))
	}
}

// TestIntegrationClickHouseClusterMismatch: a cluster DSN on one server's tables
// and a plain DSN on a cluster's tables are refused with what to do.
func TestIntegrationClickHouseClusterMismatch(t *testing.T) {
	c := clustertest.Get(t)
	ctx := t.Context()
	clusterDSN := c.DSN(t)
	st, err := clickhouse.Open(ctx, clusterDSN)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Migrate(t, st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	plain := strings.Replace(clusterDSN, "cluster="+c.Name, "", 1)
	st, err = clickhouse.Open(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Migrate(ctx)
	st.Close()
	if err == nil || !strings.Contains(err.Error(), "add ?cluster=NAME to the DSN") {
		t.Fatalf("plain DSN on a cluster database: %v", err)
	}

	// One server's tables (made without the cluster parameter on node 1 only).
	single := c.DSN(t, 0)
	st, err = clickhouse.Open(ctx, strings.Replace(single, "cluster="+c.Name, "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = clickhouse.Open(ctx, single)
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Migrate(ctx)
	st.Close()
	if err == nil || !strings.Contains(err.Error(), "holds one server's tables") {
		t.Fatalf("cluster DSN on one server's database: %v", err)
	}

	for _, bad := range []string{"cluster=a-b", "cluster=a&cluster=b", "cluster="} {
		if _, err := clickhouse.Open(ctx, "clickhouse://127.0.0.1:1/db?"+bad); err == nil {
			t.Errorf("DSN with %s accepted", bad)
		}
	}
	st, err = clickhouse.Open(ctx, strings.Replace(clusterDSN, "cluster="+c.Name, "cluster=nosuchcluster", 1))
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Migrate(ctx)
	st.Close()
	if err == nil || !strings.Contains(err.Error(), `knows no cluster "nosuchcluster"`) {
		t.Fatalf("unknown cluster: %v", err)
	}
}

func mustPath(t *testing.T, dsn string) string {
	t.Helper()
	i := strings.Index(dsn, "://")
	rest := dsn[i+3:]
	j := strings.IndexByte(rest, '/')
	k := strings.IndexByte(rest, '?')
	if k < 0 {
		k = len(rest)
	}
	return rest[j:k]
}

// syncReplicas waits until every replica of every node fetched what its shard holds.
func syncReplicas(t *testing.T, c *clustertest.Cluster, db string, tables ...string) {
	t.Helper()
	sort.Strings(tables)
	for n := range c.Nodes {
		conn := c.Conn(t, n)
		for _, tbl := range tables {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			err := conn.Exec(ctx, "SYSTEM SYNC REPLICA "+db+"."+tbl)
			cancel()
			if err != nil {
				t.Fatalf("node %d: SYSTEM SYNC REPLICA %s.%s: %v", n+1, db, tbl, err)
			}
		}
		conn.Close()
	}
}

// TestClusterDDLHint: the errors ClickHouse 18.16 gave a migrate --cluster here, when
// a node had lost its ZooKeeper session or was down (recorded in CI and in runs that
// stopped ZooKeeper mid-migrate), get the operator's next step; other errors are
// left alone, and what the error wraps stays reachable.
func TestClusterDDLHint(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		hint bool
	}{
		{"code: 159, message: Watching task /clickhouse/task_queue/ddl/query-0000000085 is executing longer than distributed_ddl_task_timeout (=180) seconds. There are 1 unfinished hosts (1 of them are currently active), they are going to execute the query in background", true},
		{"code: 48, message: There was an error on [127.0.0.1:19104]: Cannot enqueue replicated DDL query for a replicated shard", true},
		{"code: 341, message: There was an error on [127.0.0.1:19103]: Alter is not finished because timeout when waiting for some replicas: node4 (replication_alter_columns_timeout = 60). Alter will be done asynchronously.", true},
		{"code: 999, message: Connection loss, path: /clickhouse/task_queue/ddl/query-0000000282", false},
		{"code: 44, message: Cannot add column price_scope: column with this name already exists", false},
	} {
		base := fmt.Errorf("clickhouse: migration 0005_price_scope_basis on cluster gpuprice statement 3: %w: %s", store.ErrUnavailable, tc.msg)
		got := clickhouse.ClusterDDLHint(base)
		hinted := strings.Contains(got.Error(), `"A ZooKeeper session lost" in docs/clickhouse-cluster.md`) && strings.Contains(got.Error(), "run migrate again")
		if hinted != tc.hint {
			t.Errorf("%s:\nhint %v, want %v: %v", tc.msg, hinted, tc.hint, got)
		}
		if !errors.Is(got, store.ErrUnavailable) || !strings.HasPrefix(got.Error(), base.Error()) {
			t.Errorf("%s: the hinted error lost what it wraps: %v", tc.msg, got)
		}
	}
}

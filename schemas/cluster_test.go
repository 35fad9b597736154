package schemas

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestClusterMigrations translates every ClickHouse migration: a new migration whose
// statements have no cluster form, or a new table without a sharding key, fails here.
func TestClusterMigrations(t *testing.T) {
	ms, err := Migrations(BackendClickHouse)
	if err != nil {
		t.Fatal(err)
	}
	cms, err := ClusterMigrations("gpuprice", "prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(cms) != len(ms) {
		t.Fatalf("%d cluster migrations for %d migrations", len(cms), len(ms))
	}
	unqualified := regexp.MustCompile(`(?i)\b(?:FROM|JOIN|TABLE|VIEW|EXISTS|AS)\s+(observations|bars|day_series|runs|quarantine|fx_rates|alert_episodes|schema_migrations|v_[a-z_]+)\b`)
	tables := map[string]bool{}
	for i, cm := range cms {
		if cm.Version != ms[i].Version || cm.Name != ms[i].Name {
			t.Errorf("cluster migration %d is %04d_%s, want %04d_%s", i, cm.Version, cm.Name, ms[i].Version, ms[i].Name)
		}
		for _, st := range cm.Statements {
			// A backfill (INSERT … SELECT) runs once, through the Distributed tables.
			if !strings.Contains(st.SQL, " ON CLUSTER gpuprice") && !strings.HasPrefix(st.SQL, "INSERT INTO prod.") {
				t.Errorf("%04d: not ON CLUSTER: %s", cm.Version, st.SQL)
			}
			if m := unqualified.FindString(st.SQL); m != "" {
				t.Errorf("%04d: %q names an object without its database: %s", cm.Version, m, st.SQL)
			}
			if g := regexp.MustCompile(`^CREATE TABLE IF NOT EXISTS prod\.(\w+) ON CLUSTER gpuprice AS prod\.(\w+) ENGINE = Distributed\(gpuprice, prod, (\w+), (.+)\)$`).FindStringSubmatch(st.SQL); g != nil {
				if g[2] != g[1]+"_local" || g[3] != g[2] || g[4] != ShardingKeys[g[1]] {
					t.Errorf("Distributed table: %s", st.SQL)
				}
				tables[g[1]] = true
			}
		}
	}
	for _, want := range []string{"schema_migrations", "observations", "runs", "quarantine", "fx_rates", "bars", "alert_episodes", "day_series"} {
		if !tables[want] {
			t.Errorf("no Distributed table %s", want)
		}
	}
	// Observations and bars shard by series: every version of a row, and every row
	// of a series, on one shard.
	for _, tbl := range []string{"observations", "bars", "day_series"} {
		if ShardingKeys[tbl] != "cityHash64(provider, sku, region, zone, pricing)" {
			t.Errorf("%s sharded by %s, want the series hash", tbl, ShardingKeys[tbl])
		}
	}
}

func TestClusterTranslation(t *testing.T) {
	ShardingKeys["t"] = "cityHash64(a)"
	defer delete(ShardingKeys, "t")
	tr := translator{cluster: "c1", db: "db", objects: map[string]bool{"t": true, "v": true}}
	for _, tc := range []struct {
		in   string
		want []ClusterStatement
	}{
		{"CREATE TABLE IF NOT EXISTS t (\n  a String,\n  d DateTime('UTC'),\n  version UInt64\n) ENGINE = ReplacingMergeTree(version)\nPARTITION BY toYYYYMM(d)\nORDER BY (a, d)", []ClusterStatement{
			{SQL: "CREATE TABLE IF NOT EXISTS db.t_local ON CLUSTER c1 (\n  a String,\n  d DateTime('UTC'),\n  version UInt64\n) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/db/t_local', '{replica}', version)\nPARTITION BY toYYYYMM(d)\nORDER BY (a, d)"},
			{SQL: "CREATE TABLE IF NOT EXISTS db.t ON CLUSTER c1 AS db.t_local ENGINE = Distributed(c1, db, t_local, cityHash64(a))"},
		}},
		{"CREATE TABLE IF NOT EXISTS t (a String) ENGINE = MergeTree() ORDER BY a", []ClusterStatement{
			{SQL: "CREATE TABLE IF NOT EXISTS db.t_local ON CLUSTER c1 (a String) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/db/t_local', '{replica}') ORDER BY a"},
			{SQL: "CREATE TABLE IF NOT EXISTS db.t ON CLUSTER c1 AS db.t_local ENGINE = Distributed(c1, db, t_local, cityHash64(a))"},
		}},
		{"INSERT INTO t (a, b)\nSELECT a, max(b) FROM t JOIN v USING a WHERE a IN (SELECT a FROM other.t) GROUP BY a", []ClusterStatement{
			{SQL: "INSERT INTO db.t (a, b) SELECT a, max(b) FROM db.t JOIN db.v USING a WHERE a IN (SELECT a FROM other.t) GROUP BY a"},
		}},
		{"ALTER TABLE t ADD COLUMN h UInt64 MATERIALIZED cityHash64(a)", []ClusterStatement{
			{SQL: "ALTER TABLE db.t_local ON CLUSTER c1 ADD COLUMN h UInt64 DEFAULT cityHash64(a)", Table: "t_local", Column: "h"},
		}},
		{"ALTER TABLE t ADD COLUMN b DateTime('UTC') AFTER a", []ClusterStatement{
			{SQL: "ALTER TABLE db.t_local ON CLUSTER c1 ADD COLUMN b DateTime('UTC') AFTER a", Table: "t_local", Column: "b"},
		}},
		{"CREATE VIEW IF NOT EXISTS v AS\nSELECT a FROM (SELECT a FROM t GROUP BY a) ANY LEFT JOIN t USING a\nWHERE a IN (SELECT a FROM numbers(3)) AND a IN (SELECT a FROM other.t) AND a IN (SELECT a FROM unknown)", []ClusterStatement{
			{SQL: "CREATE VIEW IF NOT EXISTS db.v ON CLUSTER c1 AS SELECT a FROM (SELECT a FROM db.t GROUP BY a) ANY LEFT JOIN db.t USING a\nWHERE a IN (SELECT a FROM numbers(3)) AND a IN (SELECT a FROM other.t) AND a IN (SELECT a FROM unknown)"},
		}},
		{"DROP VIEW IF EXISTS v", []ClusterStatement{{SQL: "DROP VIEW IF EXISTS db.v ON CLUSTER c1"}}},
		{"DROP TABLE IF EXISTS t", []ClusterStatement{{SQL: "DROP TABLE IF EXISTS db.t ON CLUSTER c1"}, {SQL: "DROP TABLE IF EXISTS db.t_local ON CLUSTER c1"}}},
	} {
		got, err := tr.statement(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\n got  %q\n want %q", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{
		"INSERT INTO t (a) VALUES ('x')",
		"CREATE TABLE t (a String) ENGINE = MergeTree() ORDER BY a", // not IF NOT EXISTS
		"CREATE TABLE IF NOT EXISTS u (a String) ENGINE = MergeTree() ORDER BY a",
		"CREATE TABLE IF NOT EXISTS t (a String) ENGINE = Log",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS m AS SELECT a FROM t",
		"ALTER TABLE t DROP COLUMN a",
	} {
		if got, err := tr.statement(bad); err == nil {
			t.Errorf("%q translated to %q, want an error", bad, got)
		}
	}
}

// TestClusterAlters: a run of ALTERs changes the local tables, then each altered
// table's Distributed table is made again once, before the next other statement.
func TestClusterAlters(t *testing.T) {
	ShardingKeys["t"] = "cityHash64(a)"
	defer delete(ShardingKeys, "t")
	ms := []Migration{
		{Version: 1, Name: "init", Statements: []string{"CREATE TABLE IF NOT EXISTS t (a String) ENGINE = MergeTree() ORDER BY a"}},
		{Version: 2, Name: "more", Statements: []string{
			"ALTER TABLE t ADD COLUMN b String AFTER a",
			"ALTER TABLE t ADD COLUMN c String AFTER b",
			"CREATE VIEW IF NOT EXISTS v AS SELECT a, b, c FROM t",
			"ALTER TABLE t ADD COLUMN d String AFTER c",
		}},
	}
	cms, err := translateMigrations(ms, "c1", "db")
	if err != nil {
		t.Fatal(err)
	}
	want := []ClusterStatement{
		{SQL: "ALTER TABLE db.t_local ON CLUSTER c1 ADD COLUMN b String AFTER a", Table: "t_local", Column: "b"},
		{SQL: "ALTER TABLE db.t_local ON CLUSTER c1 ADD COLUMN c String AFTER b", Table: "t_local", Column: "c"},
		{SQL: "DROP TABLE IF EXISTS db.t ON CLUSTER c1"},
		{SQL: "CREATE TABLE IF NOT EXISTS db.t ON CLUSTER c1 AS db.t_local ENGINE = Distributed(c1, db, t_local, cityHash64(a))"},
		{SQL: "CREATE VIEW IF NOT EXISTS db.v ON CLUSTER c1 AS SELECT a, b, c FROM db.t"},
		{SQL: "ALTER TABLE db.t_local ON CLUSTER c1 ADD COLUMN d String AFTER c", Table: "t_local", Column: "d"},
		{SQL: "DROP TABLE IF EXISTS db.t ON CLUSTER c1"},
		{SQL: "CREATE TABLE IF NOT EXISTS db.t ON CLUSTER c1 AS db.t_local ENGINE = Distributed(c1, db, t_local, cityHash64(a))"},
	}
	if !reflect.DeepEqual(cms[1].Statements, want) {
		t.Errorf("migration 2:\n got  %q\n want %q", cms[1].Statements, want)
	}
}

func TestClusterNames(t *testing.T) {
	for _, tc := range [][2]string{{"", "db"}, {"c-1", "db"}, {"c", "d;DROP"}, {"c", ""}, {"c1 ON", "db"}} {
		if _, err := ClusterMigrations(tc[0], tc[1]); err == nil {
			t.Errorf("cluster %q database %q accepted", tc[0], tc[1])
		}
	}
}

package schemas

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A ClickHouse cluster keeps the same schema as one server, translated statement by
// statement from schemas/ddl/clickhouse (so a new migration needs no cluster twin):
//
//   - CREATE TABLE t (…) ENGINE = XMergeTree(args) … becomes a local table t_local
//     with ENGINE = ReplicatedXMergeTree('/clickhouse/tables/{shard}/<db>/t_local',
//     '{replica}', args) on every node, and a Distributed table t over it, sharded by
//     ShardingKeys[t]. Readers and writers keep using t: every query of the
//     single-node store runs unchanged through the Distributed tables.
//   - ALTER TABLE t ADD COLUMN … alters t_local (replicated ALTER), a MATERIALIZED
//     column becoming DEFAULT (ClickHouse 18.16 refuses an insert into a
//     Distributed table with a MATERIALIZED column: "Cannot insert column"; a
//     DEFAULT one is computed where the insert starts and sent to the shards, and
//     writers name their columns, so both hold the same values); after a run of
// ALTERs the Distributed t is dropped and created again (ClickHouse 18.16 refuses ALTER ON CLUSTER on a Distributed
// table
//     of a cluster with replicated shards; a Distributed table holds no data when
//     inserts are synchronous, as the store's are).
//   - CREATE VIEW v AS SELECT … becomes a view on every node whose FROM and JOIN name
//     the database's tables and views explicitly.
//   - DROP TABLE/VIEW IF EXISTS … drops on every node.
//   - INSERT INTO t (…) SELECT … (a backfill) runs once, not ON CLUSTER, into the
//     Distributed t from the database's Distributed tables and views.
//   - SELECT 1 (a step that only keeps the versions in step with DuckDB's) runs
//     nowhere.
//
// Every statement runs ON CLUSTER with names qualified by the database: ON CLUSTER
// DDL runs on each node in its default database, not the client's. Anything else
// is an error, so that a migration the translation does not understand fails its
// test (TestClusterMigrations) rather than a deployment.

// LocalSuffix ends the name of a Distributed table's local (replicated) table.
const LocalSuffix = "_local"

// seriesShardKey hashes a series' identity: every observation and bar of a series
// lives on one shard, so deduplication by identity (argMax by version) and per-series
// arithmetic never need rows of another shard, and FINAL on a Distributed table sees
// every version of a row together.
const seriesShardKey = "cityHash64(provider, sku, region, zone, pricing)"

// ShardingKeys is the sharding expression of each table's Distributed table. A new
// table needs one here (TestClusterMigrations fails otherwise).
var ShardingKeys = map[string]string{
	"schema_migrations": "version",
	"observations":      seriesShardKey,
	"bars":              seriesShardKey,
	"day_series":        seriesShardKey,
	"volatility_days":   seriesShardKey,
	"runs":              "cityHash64(source, run_id)",
	"quarantine":        "cityHash64(source, run_id)",
	"fx_rates":          "cityHash64(currency)",
	"alert_episodes":    "cityHash64(rule, subject)",
	"leases":            "cityHash64(name)",
	"signals":           "cityHash64(provider, sku, region, zone, kind)",
}

// ClusterStatement is one statement of a cluster migration.
type ClusterStatement struct {
	SQL string
	// When Column is set, the statement adds that column to Table (a local table,
	// unqualified): the migrator skips it when the column exists already, since
	// ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS.
	Table, Column string
}

// ClusterMigration is a Migration translated for a cluster.
type ClusterMigration struct {
	Version    int
	Name       string
	Statements []ClusterStatement
}

var (
	identRe       = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	createTableRe = regexp.MustCompile(
		`(?is)^CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)` +
			`\s*ENGINE\s*=\s*([A-Za-z]*MergeTree)\s*\(([^)]*)\)(.*)$`,
	)
	createViewRe = regexp.MustCompile(
		`(?is)^CREATE\s+VIEW\s+IF\s+NOT\s+EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)\s+AS\s+(.*)$`,
	)
	noopRe         = regexp.MustCompile(`(?i)^SELECT\s+1$`)
	dropRe         = regexp.MustCompile(`(?is)^DROP\s+(TABLE|VIEW)\s+IF\s+EXISTS\s+([A-Za-z_][A-Za-z0-9_]*)\s*$`)
	alterAddRe     = regexp.MustCompile(`(?is)^ALTER\s+TABLE\s+([A-Za-z_][A-Za-z0-9_]*)\s+(ADD\s+COLUMN\s+.*)$`)
	materializedRe = regexp.MustCompile(`(?i)(\s)MATERIALIZED(\s)`)
	insertRe       = regexp.MustCompile(`(?is)^INSERT\s+INTO\s+([A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))\s*(SELECT\s.*)$`)
	fromJoinRe     = regexp.MustCompile(`(?i)\b(FROM|JOIN)(\s+)([A-Za-z_][A-Za-z0-9_]*)\b(\s*[.(])?`)
)

// ClusterMigrations returns the ClickHouse migrations translated for the cluster
// named cluster, with every object in database (see above).
func ClusterMigrations(cluster, database string) ([]ClusterMigration, error) {
	ms, err := Migrations(BackendClickHouse)
	if err != nil {
		return nil, err
	}
	return translateMigrations(ms, cluster, database)
}

func translateMigrations(ms []Migration, cluster, database string) ([]ClusterMigration, error) {
	if !identRe.MatchString(cluster) {
		return nil, fmt.Errorf("schemas: cluster name %q: use letters, digits and _", cluster)
	}
	if !identRe.MatchString(database) {
		return nil, fmt.Errorf("schemas: database name %q: use letters, digits and _", database)
	}
	// Every table and view any migration creates: the names view bodies may read.
	objects := map[string]bool{}
	for _, m := range ms {
		for _, s := range m.Statements {
			if g := createTableRe.FindStringSubmatch(s); g != nil {
				objects[g[1]] = true
			} else if g := createViewRe.FindStringSubmatch(s); g != nil {
				objects[g[1]] = true
			}
		}
	}
	tr := translator{cluster: cluster, db: database, objects: objects}
	out := make([]ClusterMigration, 0, len(ms))
	for _, m := range ms {
		cm := ClusterMigration{Version: m.Version, Name: m.Name}
		// After a run of ALTERs, the Distributed table of each altered table is made
		// again, once, before the next other statement (a view may read the new
		// columns) or at the migration's end.
		var altered []string
		flush := func() error {
			for _, name := range altered {
				dist, err := tr.distributed(name)
				if err != nil {
					return fmt.Errorf("schemas: cluster translation of migration %04d_%s: %w", m.Version, m.Name, err)
				}
				cm.Statements = append(
					cm.Statements,
					ClusterStatement{SQL: "DROP TABLE IF EXISTS " + tr.q(name) + tr.on()},
					ClusterStatement{SQL: dist},
				)
			}
			altered = altered[:0]
			return nil
		}
		for i, s := range m.Statements {
			stmts, err := tr.statement(s)
			if err != nil {
				return nil, fmt.Errorf(
					"schemas: cluster translation of migration %04d_%s statement %d: %w",
					m.Version,
					m.Name,
					i+1,
					err,
				)
			}
			if len(stmts) == 1 && stmts[0].Column != "" {
				if name := strings.TrimSuffix(stmts[0].Table, LocalSuffix); !slices.Contains(altered, name) {
					altered = append(altered, name)
				}
			} else if err := flush(); err != nil {
				return nil, err
			}
			cm.Statements = append(cm.Statements, stmts...)
		}
		if err := flush(); err != nil {
			return nil, err
		}
		out = append(out, cm)
	}
	return out, nil
}

type translator struct {
	cluster, db string
	objects     map[string]bool
}

func (t translator) q(name string) string { return t.db + "." + name }

func (t translator) on() string { return " ON CLUSTER " + t.cluster }

// distributed creates the Distributed table name over name_local.
func (t translator) distributed(name string) (string, error) {
	key, ok := ShardingKeys[name]
	if !ok {
		known := make([]string, 0, len(ShardingKeys))
		for k := range ShardingKeys {
			known = append(known, k)
		}
		sort.Strings(known)
		return "", fmt.Errorf(
			"table %s has no sharding key: add one to schemas.ShardingKeys (has %s)",
			name,
			strings.Join(known, ", "),
		)
	}
	return "CREATE TABLE IF NOT EXISTS " + t.q(name) + t.on() + " AS " + t.q(name+LocalSuffix) +
		" ENGINE = Distributed(" + t.cluster + ", " + t.db + ", " + name + LocalSuffix + ", " + key + ")", nil
}

func (t translator) statement(s string) ([]ClusterStatement, error) {
	s = strings.TrimSpace(s)
	if g := createTableRe.FindStringSubmatch(s); g != nil {
		name, cols, engine, args, rest := g[1], g[2], g[3], strings.TrimSpace(g[4]), g[5]
		local := name + LocalSuffix
		rargs := "'/clickhouse/tables/{shard}/" + t.db + "/" + local + "', '{replica}'"
		if args != "" {
			rargs += ", " + args
		}
		dist, err := t.distributed(name)
		if err != nil {
			return nil, err
		}
		return []ClusterStatement{
			{
				SQL: "CREATE TABLE IF NOT EXISTS " + t.q(
					local,
				) + t.on() + " (" + cols + ") ENGINE = Replicated" + engine + "(" + rargs + ")" + rest,
			},
			{SQL: dist},
		}, nil
	}
	if g := alterAddRe.FindStringSubmatch(s); g != nil {
		name, clause := g[1], g[2]
		table, column, ok := AddedColumn(s)
		if !ok {
			return nil, fmt.Errorf("ADD COLUMN IF NOT EXISTS is not on ClickHouse 18.16: %q", s)
		}
		if _, err := t.distributed(name); err != nil {
			return nil, err
		}
		clause = materializedRe.ReplaceAllString(clause, "${1}DEFAULT${2}")
		// The migration recreates the Distributed table once, after its last ALTER.
		return []ClusterStatement{
			{
				SQL:    "ALTER TABLE " + t.q(name+LocalSuffix) + t.on() + " " + clause,
				Table:  table + LocalSuffix,
				Column: column,
			},
		}, nil
	}
	if g := createViewRe.FindStringSubmatch(s); g != nil {
		return []ClusterStatement{
			{SQL: "CREATE VIEW IF NOT EXISTS " + t.q(g[1]) + t.on() + " AS " + t.qualify(g[2])},
		}, nil
	}
	if noopRe.MatchString(s) {
		return nil, nil
	}
	if g := dropRe.FindStringSubmatch(s); g != nil {
		kind, name := strings.ToUpper(g[1]), g[2]
		out := []ClusterStatement{{SQL: "DROP " + kind + " IF EXISTS " + t.q(name) + t.on()}}
		if kind == "TABLE" {
			out = append(out, ClusterStatement{SQL: "DROP TABLE IF EXISTS " + t.q(name+LocalSuffix) + t.on()})
		}
		return out, nil
	}
	if g := insertRe.FindStringSubmatch(s); g != nil {
		if _, err := t.distributed(g[1]); err != nil {
			return nil, err
		}
		return []ClusterStatement{{SQL: "INSERT INTO " + t.q(g[1]) + " " + g[2] + " " + t.qualify(g[3])}}, nil
	}
	first := s
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	return nil, fmt.Errorf(
		"no cluster form for %q (known: CREATE TABLE IF NOT EXISTS … ENGINE = …MergeTree, ALTER TABLE … ADD COLUMN, CREATE "+
			"VIEW IF NOT EXISTS, DROP TABLE|VIEW IF EXISTS, INSERT INTO … (…) SELECT)",
		first,
	)
}

// qualify names the database in every FROM and JOIN of a known table or view.
// Names followed by "." (already qualified) or "(" (a table function) are left.
func (t translator) qualify(sel string) string {
	return fromJoinRe.ReplaceAllStringFunc(sel, func(m string) string {
		g := fromJoinRe.FindStringSubmatch(m)
		if g[4] != "" || !t.objects[g[3]] {
			return m
		}
		return g[1] + g[2] + t.q(g[3])
	})
}

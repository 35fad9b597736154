package clickhouse

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/schemas"
)

// On a cluster (the DSN's cluster parameter, e.g.
// clickhouse://host:9000/gpuprice?cluster=gpuprice), Migrate creates every table
// ON CLUSTER as a Replicated*MergeTree local table (name_local) and a Distributed
// table under the single-node name over it (schemas.ClusterMigrations), so every
// read and write of this package runs unchanged through the Distributed tables.
// Observations and bars are sharded by a hash of their series, so each series, and
// every version of each row, lives on one shard. Inserts are synchronous
// (insert_distributed_sync=1): a write returns once every shard it touches has
// stored its rows, or fails and is spooled like a write to a server that is down,
// so reads right after a write see it and no row waits in a Distributed table's
// queue on one node. Any node of the cluster serves as the DSN's host; list
// several (host1:9000,host2:9000) to fail over between them.

// ClusterParam is the DSN parameter that names the ClickHouse cluster.
const ClusterParam = "cluster"

// clusterParam returns the DSN without its cluster parameter (which is not a server
// setting), and that parameter.
func clusterParam(u *url.URL) (string, string, error) {
	q := u.Query()
	if !q.Has(ClusterParam) {
		return u.String(), "", nil
	}
	vals := q[ClusterParam]
	if len(vals) != 1 || !identifier.MatchString(vals[0]) {
		return "", "", fmt.Errorf(
			"cluster parameter %q: give one cluster name of letters, digits and _",
			q.Get(ClusterParam),
		)
	}
	q.Del(ClusterParam)
	v := *u
	v.RawQuery = q.Encode()
	return v.String(), vals[0], nil
}

// clusterSettings are the settings of every query on a cluster, unless the DSN
// sets them:
//
//   - insert_distributed_sync=1: an insert returns once every shard it touches
//     stored its rows (on one replica; replication copies them to the others).
//   - max_replica_delay_for_distributed_queries=5: a replica more than 5 s behind
//     (one restarted after a crash and still fetching what it missed) is read only
//     when no replica of its shard is fresher.
func clusterSettings(o *ch.Options) {
	if o.Settings == nil {
		o.Settings = ch.Settings{}
	}
	for k, v := range map[string]any{
		"insert_distributed_sync":                   1,
		"max_replica_delay_for_distributed_queries": 5,
	} {
		if _, ok := o.Settings[k]; !ok {
			o.Settings[k] = v
		}
	}
}

// consistentBalancing are the load_balancing values under which reads and writes
// through a Distributed table go to the first live replica of each shard (the local
// one first), so that a client reads its own writes before replication copied them
// to the other replica: a Rollup right after a write must see it. Under the
// default (random) a read may go to the replica that has not fetched the write yet.
// ClickHouse 18.16 takes string settings only from the server's profile (the
// native protocol of that release sends numbers), so the cluster's default profile
// sets it (deploy/clickhouse-cluster); on current releases ?load_balancing=in_order
// in the DSN does too.
var consistentBalancing = map[string]bool{"in_order": true, "first_or_random": true}

// checkBalancing fails unless the session's load_balancing is consistent.
func (s *Store) checkBalancing(ctx context.Context) error {
	var lb string
	if err := s.conn.QueryRow(ctx,
		`SELECT value FROM system.settings WHERE name = 'load_balancing'`).Scan(&lb); err != nil {
		return s.wrap("cluster settings", err)
	}
	if !consistentBalancing[lb] {
		return fmt.Errorf("clickhouse: cluster %s: load_balancing is %q: set it to in_order in the users' profile "+
			"(deploy/clickhouse-cluster/config/users.d/gpuprice.xml) or the DSN (?load_balancing=in_order, ClickHouse 19+), "+
			"or a read may miss a write not yet replicated", s.cluster, lb)
	}
	return nil
}

// Cluster is the cluster the store's tables live on, "" for one server.
func (s *Store) Cluster() string { return s.cluster }

// migrateCluster is Migrate on a cluster: the database ON CLUSTER, then the pending
// migrations translated by schemas.ClusterMigrations, each recorded through the
// Distributed schema_migrations once its statements ran on every node. A node that
// is down makes the DDL wait (distributed_ddl_task_timeout, 180 s by default) and
// fail as unavailable; ClickHouse still runs the queued DDL on it when it returns,
// and the next Migrate completes the migration.
func (s *Store) migrateCluster(ctx context.Context) ([]int, error) {
	ms, err := schemas.ClusterMigrations(s.cluster, s.database)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: %w", err)
	}
	created, err := s.ensureClusterDatabase(ctx, false)
	if err != nil {
		return nil, err
	}
	if err := s.checkBalancing(ctx); err != nil {
		return nil, err
	}
	applied, err := s.applied(ctx)
	if err != nil {
		return nil, err
	}
	var done []int
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		if !created {
			// A node added to the cluster since may lack the database.
			if created, err = s.ensureClusterDatabase(ctx, true); err != nil {
				return done, err
			}
		}
		op := fmt.Sprintf("migration %04d_%s on cluster %s", m.Version, m.Name, s.cluster)
		for i, st := range m.Statements {
			if st.Column != "" {
				exists, err := s.hasColumn(ctx, st.Table, st.Column)
				if err != nil {
					return done, s.wrap(fmt.Sprintf("%s statement %d", op, i+1), err)
				}
				if exists {
					continue
				}
			}
			if err := s.clusterDDL(ctx, s.conn, fmt.Sprintf("%s statement %d", op, i+1), st.SQL); err != nil {
				return done, err
			}
		}
		if f := afterMigration[m.Name]; f != nil {
			if err := f(s, ctx); err != nil {
				return done, fmt.Errorf("%s: %w", op, err)
			}
		}
		if err := s.record(ctx, schemas.Migration{Version: m.Version, Name: m.Name}); err != nil {
			return done, s.wrap(op+": record", err)
		}
		done = append(done, m.Version)
	}
	return done, nil
}

// hasColumn reports whether this node's table has the column. A replicated ALTER
// reaches every replica of a shard, and ON CLUSTER every shard.
func (s *Store) hasColumn(ctx context.Context, table, column string) (bool, error) {
	var n uint64
	if err := s.conn.QueryRow(ctx, `SELECT count() FROM system.columns
		WHERE database = currentDatabase() AND table = ? AND name = ?`, table, column).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// ensureClusterDatabase creates the database on every node of the cluster when
// this node lacks it, or always with force. It reports whether it ran the CREATE.
func (s *Store) ensureClusterDatabase(ctx context.Context, force bool) (bool, error) {
	o := *s.opts
	o.Auth.Database = ""
	conn, err := ch.Open(&o)
	if err != nil {
		return false, s.wrap("create database", err)
	}
	defer conn.Close()
	var n uint64
	if err := conn.QueryRow(ctx, `SELECT count() FROM system.clusters WHERE cluster = ?`, s.cluster).Scan(&n); err != nil {
		return false, s.wrap("create database", err)
	}
	if n == 0 {
		return false, fmt.Errorf(
			"clickhouse: %s: the server knows no cluster %q (see system.clusters and remote_servers in its config)",
			s.redacted,
			s.cluster,
		)
	}
	if err := conn.QueryRow(ctx, `SELECT count() FROM system.databases WHERE name = ?`, s.database).Scan(&n); err != nil {
		return false, s.wrap("create database", err)
	}
	if n > 0 && !force {
		return false, nil
	}
	// Both names are identifiers checked by open.
	if err := s.clusterDDL(ctx, conn, "create database "+s.database+" on cluster "+s.cluster,
		"CREATE DATABASE IF NOT EXISTS "+s.database+" ON CLUSTER "+s.cluster); err != nil {
		return false, err
	}
	return true, nil
}

// clusterDDL runs an ON CLUSTER statement on conn; its error says what op did and,
// when the statement did not finish on every node, what to do (clusterDDLHint).
func (s *Store) clusterDDL(ctx context.Context, conn ch.Conn, op, query string) error {
	if err := conn.Exec(ctx, query); err != nil {
		return clusterDDLHint(s.wrap(op, err))
	}
	return nil
}

// clusterDDLSigns are what ClickHouse says when an ON CLUSTER DDL did not finish on
// every node: it waited distributed_ddl_task_timeout for one, a replicated ALTER
// waited replication_alter_columns_timeout for a replica, or the shard's other
// replica gave up waiting for the one running it.
var clusterDDLSigns = []string{
	"distributed_ddl_task_timeout",
	"replication_alter_columns_timeout",
	"Cannot enqueue replicated DDL query",
}

// clusterDDLHint adds to the error of an ON CLUSTER statement that did not finish on
// every node what the operator has to do (docs/clickhouse-cluster.md, "A ZooKeeper
// session lost").
func clusterDDLHint(err error) error {
	for _, sign := range clusterDDLSigns {
		if strings.Contains(err.Error(), sign) {
			return fmt.Errorf(
				"%w (a node did not run it: one that is down, or, on ClickHouse 18.16, one whose ZooKeeper "+
					"session expired or whose DDL worker ended, which runs no ON CLUSTER DDL again until restarted; "+
					"see \"A ZooKeeper session lost\" in docs/clickhouse-cluster.md, then run migrate again: it "+
					"completes what this one began)",
				err,
			)
		}
	}
	return err
}

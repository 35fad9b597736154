// Package clustertest gives integration tests the ClickHouse cluster that
// deploy/clickhouse-cluster/local.sh runs (2 shards × 2 replicas, cluster "gpuprice"):
// its node DSNs from GPUPRICE_CLICKHOUSE_CLUSTER_DSNS, fresh databases created and
// dropped ON CLUSTER, and, with GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL naming local.sh,
// the means to SIGKILL and restart one node. Without the DSNs a test is skipped
// loudly; under CI (CI set) it fails, so CI never skips the cluster silently. Before
// the first test of a binary uses it, the cluster is checked (Cluster.Check): a node
// that does not answer, or does not finish an ON CLUSTER DDL within a minute, fails
// the test with its name instead of a 180 s DDL timeout later. With the control, the
// binary also restarts, every HealEvery, each node a lost ZooKeeper session broke
// (Heal): ClickHouse 18.16 does not recover from one by itself.
package clustertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/gpuprice/gpuprice/store"
)

// Environment variables the tests read; deploy/test.sh sets both.
const (
	// EnvDSNs lists the node DSNs local.sh up prints, separated by commas or white
	// space, e.g. clickhouse://127.0.0.1:19101/gpuprice?cluster=gpuprice, in the
	// order node 1 (shard 1), node 2 (shard 1), node 3 (shard 2), node 4 (shard 2).
	EnvDSNs = "GPUPRICE_CLICKHOUSE_CLUSTER_DSNS"
	// EnvControl is the path of local.sh, which can kill and start a node.
	EnvControl = "GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL"
)

// Cluster is the test cluster.
type Cluster struct {
	Name  string     // the cluster parameter of the DSNs
	Nodes []*url.URL // one DSN per node, without the database's name meaning anything
}

// Get returns the cluster from the environment, or skips (fails under CI). The
// test holds a shared lock on the cluster until it ends: tests of several packages
// may use it at once, but not while GetExclusive's holder kills a node.
func Get(t testing.TB) *Cluster {
	t.Helper()
	c := get(t)
	lock(t, syscall.LOCK_SH)
	c.check(t)
	return c
}

// GetExclusive is Get for a test that kills and restarts nodes: it waits until no
// other test uses the cluster, and keeps every other out until it ends.
func GetExclusive(t testing.TB) *Cluster {
	t.Helper()
	c := get(t)
	lock(t, syscall.LOCK_EX)
	c.check(t)
	return c
}

// lock takes a flock on a file beside the cluster's state (held across processes:
// go test runs packages in parallel) and releases it when the test ends.
func lock(t testing.TB, how int) {
	t.Helper()
	path := os.Getenv("GPUPRICE_CLICKHOUSE_CLUSTER_LOCK")
	if path == "" {
		path = filepath.Join(os.TempDir(), "gpuprice-clickhouse-cluster.lock")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("cluster lock: %v", err)
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		t.Fatalf("cluster lock %s: %v", path, err)
	}
	t.Cleanup(func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	})
}

func get(t testing.TB) *Cluster {
	t.Helper()
	raw := os.Getenv(EnvDSNs)
	if raw == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf(
				"CI is set but %s is not: deploy/test.sh starts the cluster with deploy/clickhouse-cluster/local.sh up and sets it",
				EnvDSNs,
			)
		}
		t.Skipf(
			"!!! SKIPPING ClickHouse cluster test: run deploy/clickhouse-cluster/local.sh up and set %s to the DSNs it prints "+
				"!!!",
			EnvDSNs,
		)
	}
	c := &Cluster{}
	for _, f := range strings.FieldsFunc(raw,
		func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		u, err := url.Parse(f)
		if err != nil || u.Scheme != "clickhouse" {
			t.Fatalf("%s: %q is not a clickhouse:// DSN", EnvDSNs, f)
		}
		name := u.Query().Get("cluster")
		if name == "" {
			t.Fatalf("%s: %s has no cluster parameter", EnvDSNs, f)
		}
		if c.Name != "" && name != c.Name {
			t.Fatalf("%s: DSNs name clusters %s and %s", EnvDSNs, c.Name, name)
		}
		c.Name = name
		c.Nodes = append(c.Nodes, u)
	}
	if len(c.Nodes) < 2 {
		t.Fatalf("%s: %d DSNs; local.sh up prints one per node (4)", EnvDSNs, len(c.Nodes))
	}
	return c
}

// check checks the cluster once per test binary, under the test's lock (a test
// holding it exclusively may have stopped ZooKeeper meanwhile). Given the control
// (local.sh), it heals the cluster first and then every HealEvery while the binary
// runs.
func (c *Cluster) check(t testing.TB) {
	t.Helper()
	checkOnce.Do(func() {
		control := os.Getenv(EnvControl)
		if control != "" {
			healAndSay(control)
			go c.watch(control)
		}
		checkErr = c.Check(context.Background(), DDLTimeout)
	})
	if checkErr != nil {
		t.Fatalf("the ClickHouse cluster is not healthy (checked once per test binary): %v", checkErr)
	}
}

var (
	checkOnce sync.Once
	checkErr  error
)

// HealEvery is how often a test binary using the cluster runs Heal, while it runs.
const HealEvery = 2 * time.Second

// StuckAfter is how long a node may hold an ON CLUSTER task active while running no
// DDL query before the watch restarts it. (A node legitimately active without a
// query waits for its shard's other replica to run a replicated ALTER: at most about
// 20 s in 18.16; a DDL query that waits, on a lock or for replicas, is running.)
const StuckAfter = 90 * time.Second

// watch runs Heal every HealEvery for as long as the test binary runs, and restarts
// each node StuckNodes finds stuck, writing what it did to standard error (go test
// shows it with the output of the package). A node of ClickHouse 18.16 was seen, in
// about one full test run of ten, to hold a replicated ALTER ON CLUSTER task active
// for minutes while running no query, with nothing in its log: every later ON
// CLUSTER DDL then waits for it. Restarted, it runs the queue from that task on.
func (c *Cluster) watch(control string) {
	seen := map[string]time.Time{}
	for {
		time.Sleep(HealEvery)
		healAndSay(control)
		for _, s := range c.StuckNodes(context.Background(), seen, StuckAfter) {
			out, err := exec.Command(control, "restart", fmt.Sprint(s.Node+1), s.Why).CombinedOutput()
			fmt.Fprintf(os.Stderr, "clustertest: %s (%v)\n", strings.TrimSpace(string(out)), err)
		}
	}
}

// Stuck is a node (0-based) StuckNodes found stuck, and why.
type Stuck struct {
	Node int
	Why  string
}

// StuckNodes returns the nodes that have held one of the DDL queue's newest tasks
// active for longer than after while running no DDL query, as seen by successive
// calls sharing seen (task and node to when first seen active).
func (c *Cluster) StuckNodes(ctx context.Context, seen map[string]time.Time, after time.Duration) []Stuck {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := c.Open(0)
	if err != nil {
		return nil
	}
	defer conn.Close()
	tasks, err := names(
		ctx,
		conn,
		`SELECT name FROM system.zookeeper WHERE path = ? ORDER BY name DESC LIMIT 10`,
		DDLQueue,
	)
	if err != nil {
		return nil
	}
	now := time.Now()
	active := map[string]bool{}
	var stuck []Stuck
	for _, task := range tasks {
		hosts, err := names(ctx, conn, `SELECT name FROM system.zookeeper WHERE path = ?`, DDLQueue+"/"+task+"/active")
		if err != nil {
			continue // no active/ yet
		}
		for _, h := range hosts {
			host, _ := url.PathUnescape(h) // 127%2E0%2E0%2E1:19104
			for i, n := range c.Nodes {
				if n.Host != host {
					continue
				}
				key := task + " " + host
				active[key] = true
				first, ok := seen[key]
				if !ok {
					seen[key] = now
				} else if now.Sub(first) > after && c.runningDDL(ctx, i) == "" {
					stuck = append(stuck, Stuck{Node: i, Why: fmt.Sprintf("active on DDL task %s for %v, running no DDL query",
						task, now.Sub(first).Round(time.Second))})
					delete(seen, key)
				}
			}
		}
	}
	for key := range seen {
		if !active[key] {
			delete(seen, key)
		}
	}
	return stuck
}

// names runs a query of one string column and returns its rows.
func names(ctx context.Context, conn ch.Conn, query string, args ...any) ([]string, error) {
	rows, err := conn.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// healAndSay runs Heal and writes what it did, if anything, to standard error.
func healAndSay(control string) {
	if did := Heal(control); did != "" {
		fmt.Fprintf(os.Stderr, "clustertest: %s\n", did)
	}
}

// Heal restarts, through local.sh heal, each node of the cluster that a lost
// ZooKeeper session broke, and returns what local.sh said it did ("" when none was).
// On ClickHouse 18.16 such a node still answers queries, but a node whose session
// expired applies no replicated ALTER again (each table's ALTER thread keeps the dead
// session), and one whose DDL worker ended on an error mid-task runs no ON CLUSTER DDL
// again: every later ALTER ON CLUSTER, or every DDL, waits for it and fails. A
// restarted node runs the DDL queue from where it stopped. This is the test
// cluster's stand-in for the operator's restart docs/clickhouse-cluster.md asks for.
func Heal(control string) string {
	out, err := exec.Command(control, "heal").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s heal: %v: %s", control, err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out))
}

// DDLTimeout bounds the ON CLUSTER DDL of the check Get makes (the server's
// default, distributed_ddl_task_timeout, is 180 s).
const DDLTimeout = 60 * time.Second

// Check reports the first trouble of the cluster's nodes a test would otherwise
// meet as a timeout: a node that does not answer within 10 s, or one that does not
// finish an ON CLUSTER DDL within ddlTimeout (each node runs the DDL queue in
// order, so one stuck on an earlier task, or whose DDL worker has stopped, never
// does). The error names the node and the DDL it is running.
func (c *Cluster) Check(ctx context.Context, ddlTimeout time.Duration) error {
	for i := range c.Nodes {
		if err := c.ping(ctx, i); err != nil {
			return fmt.Errorf("node %d (%s) does not answer within 10 s: %w", i+1, c.Nodes[i].Host, err)
		}
	}
	conn, err := c.Open(0)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The wait is bounded here, not by distributed_ddl_task_timeout: ClickHouse
	// 18.16 misreads that (Int64) setting from this client.
	probe := "CREATE DATABASE IF NOT EXISTS default ON CLUSTER " + c.Name
	dctx, cancel := context.WithTimeout(ctx, ddlTimeout)
	ddlErr := conn.Exec(dctx, probe)
	cancel()
	if ddlErr == nil {
		return nil
	}
	if strings.Contains(ddlErr.Error(), "Node exists, path: "+DDLQueue+"/query-") {
		// No node is stuck: ZooKeeper gave the new task the number of one already in
		// the queue, written there under a number of its own choosing.
		return fmt.Errorf("ON CLUSTER DDL through node 1: its task's sequential number is taken in %s, by a task "+
			"not created as a sequential node: %w", DDLQueue, ddlErr)
	}
	qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err = c.Open(0) // the one the timeout cut may be unusable
	if err != nil {
		return err
	}
	defer conn.Close()
	task, finished, err := lastTask(qctx, conn, probe)
	if err != nil || task == "" {
		return fmt.Errorf("ON CLUSTER DDL through node 1: %w (its task in %s: %v)", ddlErr, DDLQueue, err)
	}
	var stuck []string
	for i, n := range c.Nodes {
		if finished[n.Host] {
			continue
		}
		s := fmt.Sprintf("node %d (%s)", i+1, n.Host)
		if running := c.runningDDL(ctx, i); running != "" {
			s += ", which is running " + running
		}
		if control := os.Getenv(EnvControl); control != "" {
			if out, err := exec.Command(control, "broken", fmt.Sprint(i+1)).Output(); err == nil {
				s += ", whose log says " + strings.TrimSpace(string(out))
			}
		}
		stuck = append(stuck, s)
	}
	if len(stuck) == 0 {
		return fmt.Errorf("ON CLUSTER DDL through node 1: %w", ddlErr)
	}
	return fmt.Errorf(
		"an ON CLUSTER DDL (%s) was not finished within %v by %s (%v); restart the node "+
			"(deploy/clickhouse-cluster/local.sh heal, for one a lost ZooKeeper session broke) or the cluster (local.sh down "+
			"&& up)",
		task,
		ddlTimeout,
		strings.Join(stuck, "; by "),
		ddlErr,
	)
}

// DDLQueue is where the cluster's nodes keep ON CLUSTER DDL tasks in ZooKeeper
// (ClickHouse's default, and local.sh's).
const DDLQueue = "/clickhouse/task_queue/ddl"

// lastTask returns the newest task of the DDL queue that runs query, and the hosts
// (host:port) that finished it.
func lastTask(ctx context.Context, conn ch.Conn, query string) (string, map[string]bool, error) {
	var task string
	err := conn.QueryRow(ctx, `SELECT max(name) FROM system.zookeeper WHERE path = ? AND position(value, ?) > 0`,
		DDLQueue, "query: "+query+"\n").Scan(&task)
	if err != nil || task == "" {
		return "", nil, err
	}
	task = DDLQueue + "/" + task
	finished := map[string]bool{}
	rows, err := conn.Query(ctx, "SELECT name FROM system.zookeeper WHERE path = ?", task+"/finished")
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var host string
		if err := rows.Scan(&host); err != nil {
			return "", nil, err
		}
		if h, err := url.PathUnescape(host); err == nil { // 127%2E0%2E0%2E1:19104
			finished[h] = true
		}
	}
	return task, finished, rows.Err()
}

// Open connects to node i (0-based) in its default database, without dialling yet:
// Conn for code that returns errors.
func (c *Cluster) Open(i int) (ch.Conn, error) {
	u := *c.Nodes[i]
	u.Path = "/default"
	q := u.Query()
	q.Del("cluster")
	u.RawQuery = q.Encode()
	opts, err := ch.ParseDSN(u.String())
	if err != nil {
		return nil, err
	}
	return ch.Open(opts)
}

func (c *Cluster) ping(ctx context.Context, i int) error {
	conn, err := c.Open(i)
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return conn.Ping(ctx)
}

// runningDDL describes the ON CLUSTER DDL node i runs now ("" when none, or it
// cannot tell).
func (c *Cluster) runningDDL(ctx context.Context, i int) string {
	conn, err := c.Open(i)
	if err != nil {
		return ""
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rows, err := conn.Query(
		ctx,
		"SELECT toFloat64(elapsed), query FROM system.processes WHERE query LIKE '/* ddl_entry=%'",
	)
	if err != nil {
		return ""
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var elapsed float64
		var q string
		if rows.Scan(&elapsed, &q) == nil {
			out = append(out, fmt.Sprintf("%q for %.0f s", strings.Join(strings.Fields(q), " "), elapsed))
		}
	}
	return strings.Join(out, ", ")
}

// DSN returns the DSN of a new database (created by Migrate; dropped ON CLUSTER at
// cleanup) naming the given nodes (0-based) as failover hosts, in order, with the
// cluster parameter. No nodes means every node.
func (c *Cluster) DSN(t testing.TB, nodes ...int) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	db := "gpuprice_cluster_" + hex.EncodeToString(b)
	t.Cleanup(func() { c.Drop(t, db) })
	return c.DatabaseDSN(db, nodes...)
}

// DatabaseDSN is the DSN of database db on the given nodes (0-based; none: all).
func (c *Cluster) DatabaseDSN(db string, nodes ...int) string {
	if len(nodes) == 0 {
		for i := range c.Nodes {
			nodes = append(nodes, i)
		}
	}
	u := *c.Nodes[nodes[0]]
	var hosts []string
	for _, n := range nodes {
		hosts = append(hosts, c.Nodes[n].Host)
	}
	u.Host = strings.Join(hosts, ",")
	u.Path = "/" + db
	q := u.Query()
	q.Set("cluster", c.Name)
	u.RawQuery = q.Encode()
	return u.String()
}

// Conn opens a plain connection to one node (0-based), in its default database.
func (c *Cluster) Conn(t testing.TB, node int) ch.Conn {
	t.Helper()
	conn, err := c.Open(node)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// Drop drops database db on every node, through the first node that answers.
func (c *Cluster) Drop(t testing.TB, db string) {
	t.Helper()
	var last error
	for i := range c.Nodes {
		conn := c.Conn(t, i)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		last = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" ON CLUSTER "+c.Name)
		cancel()
		conn.Close()
		if last == nil {
			return
		}
	}
	t.Errorf("drop database %s on cluster %s: %v", db, c.Name, last)
}

// Control returns the path of local.sh, or skips (fails under CI) when
// GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL is unset.
func Control(t testing.TB) string {
	t.Helper()
	p := os.Getenv(EnvControl)
	if p == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf(
				"CI is set but %s is not: deploy/test.sh sets it to deploy/clickhouse-cluster/local.sh",
				EnvControl,
			)
		}
		t.Skipf(
			"!!! SKIPPING: set %s to deploy/clickhouse-cluster/local.sh to let this test kill and restart a node !!!",
			EnvControl,
		)
	}
	return p
}

// Kill SIGKILLs node n (0-based) through local.sh. Take the cluster with
// GetExclusive first.
func Kill(t testing.TB, control string, n int) {
	t.Helper()
	if out, err := exec.Command(control, "kill", fmt.Sprint(n+1)).CombinedOutput(); err != nil {
		t.Fatalf("%s kill %d: %v\n%s", control, n+1, err, out)
	}
}

// Start starts node n (0-based) again through local.sh and waits until it answers.
func Start(t testing.TB, control string, n int) {
	t.Helper()
	if out, err := exec.Command(control, "start", fmt.Sprint(n+1)).CombinedOutput(); err != nil {
		t.Fatalf("%s start %d: %v\n%s", control, n+1, err, out)
	}
}

// Migrate runs st.Migrate, and again (twice more at most) when it stopped because a
// node went away: the watch restarts a node that a lost ZooKeeper session broke, or
// one stuck on a DDL task, which cuts off a migration using it (the ON CLUSTER DDL
// it waited on fails with EOF), and a migration cut off resumes where it stopped,
// as an operator's rerun of migrate does. Between attempts it waits for the
// cluster to run an ON CLUSTER DDL on every node (Check), so the task cut off has
// run everywhere before the rerun looks at what exists. The migrations applied
// over all attempts are returned.
func (c *Cluster) Migrate(t testing.TB, st interface {
	Migrate(context.Context) ([]int, error)
}) ([]int, error) {
	t.Helper()
	var all []int
	for attempt := 1; ; attempt++ {
		applied, err := st.Migrate(t.Context())
		all = append(all, applied...)
		if err == nil || !errors.Is(err, store.ErrUnavailable) || attempt == 3 {
			return all, err
		}
		t.Logf("migrate, attempt %d: %v; again once the cluster answers", attempt, err)
		if cerr := c.Check(t.Context(), DDLTimeout); cerr != nil {
			t.Logf("cluster check: %v", cerr)
		}
	}
}

package clustertest

import (
	"context"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/go-zookeeper/zk"
)

// TestIntegrationClusterCheckNamesStuckNode: a node that answers but is stuck on an
// ON CLUSTER DDL (here a DROP waiting for a slow query on node 4, as a stale
// cluster's node was stuck) makes Check fail within its timeout, naming the node
// and the DDL it runs; once the node is free, Check passes.
func TestIntegrationClusterCheckNamesStuckNode(t *testing.T) {
	c := GetExclusive(t) // it holds up every ON CLUSTER DDL for a few seconds
	ctx := context.Background()
	db, n1 := tableOnCluster(t, c, "slow", "MergeTree")
	defer n1.Close()
	last := len(c.Nodes) - 1
	nl := c.Conn(t, last)
	defer nl.Close()
	const slow = 8 // seconds the query on the last node holds the table
	if err := nl.Exec(ctx, "INSERT INTO "+db+".slow (x) SELECT number FROM system.numbers LIMIT ?", slow); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		// One row a block, a second a row.
		done <- nl.Exec(ch.Context(ctx, ch.WithSettings(ch.Settings{"max_block_size": 1})), "SELECT sleepEachRow(1) FROM "+db+".slow FORMAT Null")
	}()
	time.Sleep(time.Second)
	// The DROP waits on the last node for the query; the others finish it.
	dctx, cancel := context.WithTimeout(ctx, time.Second) // queued: no need to wait
	_ = n1.Exec(dctx, "DROP TABLE "+db+".slow ON CLUSTER "+c.Name)
	cancel()

	t0 := time.Now()
	err := c.Check(ctx, 3*time.Second)
	t.Logf("Check with the last node stuck (%v): %v", time.Since(t0).Round(time.Millisecond), err)
	if err == nil {
		t.Fatal("Check passed with the last node stuck on a DROP")
	}
	want := fmt.Sprintf("node %d (%s)", last+1, c.Nodes[last].Host)
	if !strings.Contains(err.Error(), want+", which is running") || !strings.Contains(err.Error(), "DROP TABLE "+db+".slow") {
		t.Errorf("Check's error does not name %s and the DROP it runs: %v", want, err)
	}
	if time.Since(t0) > slow*time.Second {
		t.Errorf("Check took %v, its DDL timeout is 3 s", time.Since(t0))
	}
	if err := <-done; err != nil {
		t.Fatalf("the slow query: %v", err)
	}
	if err := c.Check(ctx, DDLTimeout); err != nil {
		t.Errorf("Check once the node is free: %v", err)
	}
}

// TestIntegrationClusterHealsExpiredSessions: ZooKeeper stopped for longer than the
// nodes' session timeout (30 s) expires their sessions, as a long stall of a busy
// machine would. ClickHouse 18.16 then applies no replicated ALTER on such a node
// until it restarts (each table's ALTER thread keeps the dead session: every ALTER
// ON CLUSTER of a replicated table waits 60 s for it and fails on its shard's other
// replica). Heal, which every test binary runs every HealEvery, restarts each such
// node; then a replicated ALTER ON CLUSTER completes on every node.
func TestIntegrationClusterHealsExpiredSessions(t *testing.T) {
	c := GetExclusive(t) // it stops ZooKeeper: no other test on the cluster meanwhile
	control := Control(t)
	ctx := context.Background()
	db, n1 := tableOnCluster(t, c, "r", "ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/r', '{replica}')")
	defer n1.Close()

	const pause = 40 // seconds: past the session timeout
	if out, err := exec.Command(control, "pause-zookeeper", fmt.Sprint(pause)).CombinedOutput(); err != nil {
		t.Fatalf("%s pause-zookeeper: %v\n%s", control, err, out)
	}
	resumed := time.Now()

	// Every node's sessions expired: each is restarted, its replicated tables writable
	// again.
	waitHealed(t, c, control, resumed, 2*time.Minute, 0, 1, 2, 3)
	t.Logf("every node restarted %v after ZooKeeper went on", time.Since(resumed).Round(time.Second))

	// A replicated ALTER ON CLUSTER completes everywhere (ClickHouse 18.16 gives up
	// waiting for a replica after 60 s; this allows it 50). The restarts themselves
	// can leave a node's DDL worker stopped on 18.16 ("Server expects that DDL task …
	// should be processed, but it was already processed according to ZK": seen once
	// in CI, on a loaded machine); the watch restarts that node too, so a second
	// ALTER, of another column, after the cluster answers a DDL again, must complete.
	// Each attempt adds a column of its own: the first may have reached some nodes.
	const attempts = 2
	var col string
	for a := 1; ; a++ {
		col = fmt.Sprintf("y%d", a)
		conn := c.Conn(t, 0)
		actx, cancel := context.WithTimeout(ctx, 50*time.Second)
		t0 := time.Now()
		err := conn.Exec(actx, "ALTER TABLE "+db+".r ON CLUSTER "+c.Name+" ADD COLUMN "+col+" String")
		cancel()
		conn.Close()
		if err == nil {
			t.Logf("the replicated ALTER ON CLUSTER (attempt %d) took %v", a, time.Since(t0).Round(time.Millisecond))
			break
		}
		if a == attempts {
			t.Fatalf("replicated ALTER ON CLUSTER after the heal, attempt %d: %v", a, err)
		}
		t.Logf("replicated ALTER ON CLUSTER after the heal, attempt %d: %v", a, err)
		healedDDL(t, c, control, 3*time.Minute)
	}
	for i := range c.Nodes {
		ni := c.Conn(t, i)
		var n uint64
		if err := ni.QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = ? AND table = 'r' AND name = ?", db,
			col).Scan(&n); err != nil || n != 1 {
			t.Errorf("node %d: column %s %d times (%v)", i+1, col, n, err)
		}
		ni.Close()
	}
}

// healedDDL heals the cluster until every node answers and finishes an ON CLUSTER
// DDL (Check), or fails the test after within.
func healedDDL(t *testing.T, c *Cluster, control string, within time.Duration) {
	t.Helper()
	healUntil(t, control, time.Now(), within, func() string {
		if err := c.Check(context.Background(), 20*time.Second); err != nil {
			return "the cluster to run ON CLUSTER DDL after a failed ALTER: " + err.Error()
		}
		return ""
	})
}

// tableOnCluster creates a fresh database (dropped at cleanup) and in it table (x
// UInt64) of the engine ("{database}" in it is the database's name) on every node,
// through node 1; it returns the database and a connection to node 1.
func tableOnCluster(t *testing.T, c *Cluster, table, engine string) (string, ch.Conn) {
	t.Helper()
	u, err := url.Parse(c.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	n1 := c.Conn(t, 0)
	for _, q := range []string{
		"CREATE DATABASE " + db + " ON CLUSTER " + c.Name,
		"CREATE TABLE " + db + "." + table + " ON CLUSTER " + c.Name + " (x UInt64) ENGINE = " +
			strings.ReplaceAll(engine, "{database}", db) + " ORDER BY x",
	} {
		if err := n1.Exec(context.Background(), q); err != nil {
			n1.Close()
			t.Fatalf("%s: %v", q, err)
		}
	}
	return db, n1
}

// TestIntegrationClusterHealsEndedDDLWorker: ClickHouse 18.16 ends a node's DDL worker
// thread for good on an error it does not expect while running the DDL queue; the
// node then runs no ON CLUSTER DDL again and every later one waits for it (the CI
// failure of stop 19 looked so). The test provokes the one such error a client can: a
// task written to the queue, for node 4 only, as already finished by it (18.16 throws
// "Server expects that DDL task … should be processed, but it was already processed
// according to ZK" and logs "DDLWorker: Unexpected error, will terminate"). Heal
// finds the line, restarts node 4, and an ON CLUSTER DDL then finishes on every node.
func TestIntegrationClusterHealsEndedDDLWorker(t *testing.T) {
	c := GetExclusive(t) // it stops a node's DDL worker: no other test on the cluster meanwhile
	control := Control(t)
	ctx := context.Background()
	last := len(c.Nodes) - 1
	// The node has run a task since it started (a first pass over the queue at start
	// takes such a task as done).
	if err := c.Check(ctx, DDLTimeout); err != nil {
		t.Fatal(err)
	}
	zc := zkConn(t, control)
	// A node deleted from the queue first (as ClickHouse's cleanup of old tasks and
	// TestIntegrationClusterStuckNodes do): after it the queue's cversion is not the
	// number ZooKeeper gives next.
	gone, err := zc.Create(DDLQueue+"/query-", taskEntry("SELECT 1", noNode),
		zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		t.Fatal(err)
	}
	if err := zc.Delete(gone, -1); err != nil {
		t.Fatal(err)
	}
	host := strings.ReplaceAll(c.Nodes[last].Host, ".", "%2E") // 127%2E0%2E0%2E1:19104, as 18.16 names hosts
	task := plantFinishedTask(t, zc, host, "CREATE DATABASE IF NOT EXISTS default ON CLUSTER "+c.Name)
	t.Logf("planted %s, finished by node %d only", task, last+1)
	planted := time.Now()

	// Healed: node 4 restarted (by this test's Heal or a test binary's watch).
	waitHealed(t, c, control, planted, time.Minute, last)
	report, _ := exec.Command(control, "report").CombinedOutput()
	if !regexp.MustCompile(fmt.Sprintf(`node %d restarted: .*DDLWorker: Unexpected error, will terminate`, last+1)).Match(report) {
		t.Errorf("heal.log does not say node %d was restarted for its ended DDL worker:\n%s", last+1, report)
	}
	if err := c.Check(ctx, DDLTimeout); err != nil {
		t.Fatalf("after the heal: %v", err)
	}
	t.Logf("node %d restarted %v after its DDL worker was made to end; ON CLUSTER DDL runs again", last+1, time.Since(planted).Round(time.Second))
}

// plantFinishedTask writes to the DDL queue a task of query for host only, with
// host's finished mark, in one multi (no worker sees it unmarked), and deletes it at
// the test's end. Its name is the one after a probe's: a task for no node created
// as a sequential node (so with the number ZooKeeper gives next, which is not always
// the queue's cversion: after a delete ZooKeeper 3.8 gave a sequential node a
// number below it, and a task planted under the cversion then took the number of
// the next ON CLUSTER DDL, which failed with "Node exists" on every node, the CI
// failure of stop 41), deleted in the same multi.
func plantFinishedTask(t *testing.T, zc *zk.Conn, host, query string) string {
	t.Helper()
	acl := zk.WorldACL(zk.PermAll)
	probe, err := zc.Create(DDLQueue+"/query-", taskEntry(query, noNode), zk.FlagSequence, acl)
	if err != nil {
		t.Fatalf("probing the DDL queue's next number: %v", err)
	}
	n, err := strconv.ParseInt(probe[strings.LastIndex(probe, "-")+1:], 10, 64)
	if err != nil {
		t.Fatalf("probe %s: %v", probe, err)
	}
	task := fmt.Sprintf("%s/query-%010d", DDLQueue, n+1)
	if _, err := zc.Multi(&zk.DeleteRequest{Path: probe, Version: -1},
		&zk.CreateRequest{Path: task, Data: taskEntry(query, host), Acl: acl},
		&zk.CreateRequest{Path: task + "/finished", Acl: acl},
		&zk.CreateRequest{Path: task + "/finished/" + host, Acl: acl}); err != nil {
		_ = zc.Delete(probe, -1)
		t.Fatalf("writing task %s: %v", task, err)
	}
	t.Cleanup(func() {
		for _, p := range []string{task + "/finished/" + host, task + "/finished", task} {
			_ = zc.Delete(p, -1)
		}
	})
	// The next sequential node must come after it, or every ON CLUSTER DDL would
	// fail on it: a probe says so (and is deleted).
	next, err := zc.Create(DDLQueue+"/query-", taskEntry(query, noNode), zk.FlagSequence, acl)
	if err != nil {
		t.Fatalf("a sequential node after the planted task %s: %v", task, err)
	}
	_ = zc.Delete(next, -1)
	if next <= task {
		t.Fatalf("ZooKeeper numbered a sequential node %s, not after the planted task %s", next, task)
	}
	return task
}

// noNode is a host of no node of the cluster, as 18.16 names hosts in a task.
const noNode = "127%2E0%2E0%2E1:1"

// taskEntry is a DDL queue task of query for host, as 18.16 writes one.
func taskEntry(query, host string) []byte {
	return []byte("version: 1\nquery: " + query + "\nhosts: ['" + host + "']\ninitiator: clustertest:0\n")
}

// waitHealed runs Heal until each of the nodes (0-based) has been restarted since
// since (its uptime is shorter) and has no read-only replicated table, and fails the
// test, with local.sh's report, when that takes longer than within.
func waitHealed(t *testing.T, c *Cluster, control string, since time.Time, within time.Duration, nodes ...int) {
	t.Helper()
	healed := func(i int) bool {
		conn := c.Conn(t, i)
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var up uint32
		var readonly uint64
		err := conn.QueryRow(ctx, "SELECT uptime(), (SELECT count() FROM system.replicas WHERE is_readonly)").Scan(&up, &readonly)
		return err == nil && time.Duration(up)*time.Second < time.Since(since) && readonly == 0
	}
	healUntil(t, control, since, within, func() string {
		var waiting []int
		for _, i := range nodes {
			if !healed(i) {
				waiting = append(waiting, i+1)
			}
		}
		if len(waiting) == 0 {
			return ""
		}
		return fmt.Sprintf("nodes %v to be restarted, with writable replicated tables", waiting)
	})
}

// healUntil runs Heal every second until waiting says nothing is awaited (""), or
// fails the test, with what it waits for and local.sh's report, once within has
// passed since since.
func healUntil(t *testing.T, control string, since time.Time, within time.Duration, waiting func() string) {
	t.Helper()
	for {
		if did := Heal(control); did != "" {
			t.Logf("heal: %s", did)
		}
		w := waiting()
		if w == "" {
			return
		}
		if time.Since(since) > within {
			report, _ := exec.Command(control, "report").CombinedOutput()
			t.Fatalf("waited %v for %s; local.sh report:\n%s", within, w, report)
		}
		time.Sleep(time.Second)
	}
}

// zkConn connects to the cluster's ZooKeeper (closed at the test's end).
func zkConn(t *testing.T, control string) *zk.Conn {
	t.Helper()
	addr, err := exec.Command(control, "zookeeper").Output()
	if err != nil {
		t.Fatalf("%s zookeeper: %v", control, err)
	}
	zc, _, err := zk.Connect([]string{strings.TrimSpace(string(addr))}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	return zc
}

// TestIntegrationClusterStuckNodes: a node that holds a DDL task active (here a mark
// this test writes for node 4 on a task no node runs) while running no DDL query is
// found stuck once it has been seen so for longer than the bound, and not before;
// the watch restarts such a node.
func TestIntegrationClusterStuckNodes(t *testing.T) {
	c := Get(t)
	control := Control(t)
	ctx := context.Background()
	zc := zkConn(t, control)
	last := len(c.Nodes) - 1
	host := strings.ReplaceAll(c.Nodes[last].Host, ".", "%2E")
	acl := zk.WorldACL(zk.PermAll)
	task, err := zc.Create(DDLQueue+"/query-", taskEntry("CREATE DATABASE IF NOT EXISTS default ON CLUSTER "+c.Name, noNode),
		zk.FlagSequence, acl) // none runs it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range []string{task + "/active/" + host, task + "/active", task} {
			_ = zc.Delete(p, -1)
		}
	})
	if _, err := zc.Create(task+"/active", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := zc.Create(task+"/active/"+host, nil, zk.FlagEphemeral, acl); err != nil {
		t.Fatal(err)
	}
	seen := map[string]time.Time{}
	if s := c.StuckNodes(ctx, seen, time.Second); len(s) != 0 {
		t.Fatalf("stuck at first sight: %+v", s)
	}
	time.Sleep(1500 * time.Millisecond)
	s := c.StuckNodes(ctx, seen, time.Second)
	if len(s) != 1 || s[0].Node != last || !strings.Contains(s[0].Why, task[strings.LastIndex(task, "/")+1:]) {
		t.Fatalf("stuck %+v, want node %d on %s", s, last+1, task)
	}
	t.Logf("found: node %d, %s", s[0].Node+1, s[0].Why)
	// Once the mark is gone, nothing is remembered of it.
	if err := zc.Delete(task+"/active/"+host, -1); err != nil {
		t.Fatal(err)
	}
	if s := c.StuckNodes(ctx, seen, time.Second); len(s) != 0 || len(seen) != 0 {
		t.Fatalf("after the mark went: stuck %+v, remembered %v", s, seen)
	}
}

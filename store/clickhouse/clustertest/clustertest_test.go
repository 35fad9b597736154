package clustertest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

// TestIntegrationClusterCheckNamesStuckNode: a node that answers but is stuck on an
// ON CLUSTER DDL (here a DROP waiting for a slow query on node 4, as a stale
// cluster's node was stuck) makes Check fail within its timeout, naming the node
// and the DDL it runs; once the node is free, Check passes.
func TestIntegrationClusterCheckNamesStuckNode(t *testing.T) {
	c := GetExclusive(t) // it holds up every ON CLUSTER DDL for a few seconds
	ctx := context.Background()
	u, err := url.Parse(c.DSN(t)) // dropped at cleanup
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	n1 := c.Conn(t, 0)
	defer n1.Close()
	for _, q := range []string{
		"CREATE DATABASE " + db + " ON CLUSTER " + c.Name,
		"CREATE TABLE " + db + ".slow ON CLUSTER " + c.Name + " (x UInt64) ENGINE = MergeTree ORDER BY x",
	} {
		if err := n1.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
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
	err = c.Check(ctx, 3*time.Second)
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

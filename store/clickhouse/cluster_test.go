package clickhouse_test

import (
	"testing"

	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/clustertest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// TestIntegrationClickHouseCluster runs the whole store conformance suite on the
// cluster of deploy/clickhouse-cluster/local.sh: tables made by Migrate on the
// cluster (Replicated local tables, Distributed tables over them), every write and
// read through the Distributed tables, from node 1 (failing over to the others).
func TestIntegrationClickHouseCluster(t *testing.T) {
	c := clustertest.Get(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := clickhouse.Open(t.Context(), c.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		return st
	})
}

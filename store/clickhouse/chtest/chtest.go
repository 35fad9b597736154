// Package chtest is what the ClickHouse integration tests share: the test server's
// DSN from GPUPRICE_CLICKHOUSE_DSN (without it a test is skipped loudly, except under
// CI, where it fails: CI never skips them silently) and a fresh, uniquely named
// database dropped when the test ends. Integration tests that need the server are
// named TestIntegrationClickHouse….
package chtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	ch "github.com/ClickHouse/clickhouse-go/v2"
)

// EnvDSN names the variable holding the test server's DSN, e.g.
// clickhouse://localhost:9000/default (deploy/test.sh sets it).
const EnvDSN = "GPUPRICE_CLICKHOUSE_DSN"

// ServerDSN returns the test server's DSN, skipping the test when EnvDSN is unset,
// or failing it when CI is set.
func ServerDSN(t testing.TB) *url.URL {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal(
				EnvDSN + " is not set under CI: start ClickHouse and set it (e.g. clickhouse://localhost:9000/default)",
			)
		}
		t.Skip(
			"!!! SKIPPING ClickHouse integration test: set " + EnvDSN +
				" (e.g. clickhouse://localhost:9000/default) to run it !!!",
		)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s: %v", EnvDSN, err)
	}
	return u
}

// FreshDSN returns the DSN of a new database on the test server, named
// gpuprice_<prefix>_<random>, which is dropped when the test ends. The database does
// not exist until something (gpuprice migrate, Open) creates it.
func FreshDSN(t testing.TB, prefix string) string {
	t.Helper()
	u := ServerDSN(t)
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	db := "gpuprice_" + prefix + "_" + hex.EncodeToString(b)
	if u.Scheme == "chdb" {
		u = embeddedDSN(t, u, db)
	} else {
		u.Path = "/" + db
	}
	t.Cleanup(func() {
		admin := Admin(t, u)
		defer admin.Close()
		if err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+db+"`"); err != nil {
			t.Errorf("drop %s: %v", db, err)
		}
	})
	return u.String()
}

// Admin opens a connection to u's server in its default database; the caller closes it.
func Admin(t testing.TB, u *url.URL) ch.Conn {
	t.Helper()
	if u.Scheme == "chdb" {
		return embeddedAdmin(t, u)
	}
	v := *u
	v.Path = "/default"
	opts, err := ch.ParseDSN(v.String())
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ch.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

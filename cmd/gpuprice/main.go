// Command gpuprice collects GPU cloud prices into ClickHouse or an embedded DuckDB
// file and answers questions about them. See `gpuprice --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	_ "github.com/gpuprice/gpuprice/scrapers/all"
	_ "github.com/gpuprice/gpuprice/store/clickhouse"
	_ "github.com/gpuprice/gpuprice/store/duckdb"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

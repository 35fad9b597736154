package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/deploy/loadgen"
)

func init() { addCommand((*app).loadtestCmd) }

func (a *app) loadtestCmd() *cobra.Command {
	var clients int
	var duration time.Duration
	var format, accept string
	cmd := &cobra.Command{
		Use: "loadtest URL...",
		Short: "Load a running gpuprice server: N concurrent clients per URL for a while; requests/s, latency percentiles, " +
			"errors",
		Long: `loadtest sends GET requests to each URL in turn from --clients concurrent
clients (each waits for its answer) for --duration, and prints requests per second,
p50/p90/p99/max latency and the errors (transport errors, non-200 answers, bodies
that do not decode). Requests ask for zstd or gzip (--accept-encoding), as browsers
do, and every answer is read and decoded to its end. The exit status is 1 when any
request failed. BENCHMARKS.md has the figures measured
with it.`,
		Example: `  gpuprice loadtest --clients 200 --duration 30s \
    http://127.0.0.1:8080/api/v1/prices http://127.0.0.1:8080/api/v1/volatility http://127.0.0.1:8080/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, urls []string) error {
			if clients < 1 || clients > 10000 {
				return usagef("--clients %d: from 1 to 10000", clients)
			}
			if duration <= 0 {
				return usagef("--duration %s: must be positive", duration)
			}
			if err := checkFormat(format, "table", "json"); err != nil {
				return err
			}
			var results []loadgen.Result
			failed := false
			for _, u := range urls {
				r := loadgen.RunAccepting(cmd.Context(), u, clients, duration, accept)
				results = append(results, r)
				failed = failed || r.Errors > 0
				if format == "table" {
					fmt.Fprintln(a.stdout, r)
					if r.FirstError != "" {
						fmt.Fprintln(a.stdout, "  first error:", r.FirstError)
					}
				}
			}
			if format == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(results); err != nil {
					return err
				}
			}
			if failed {
				return errors.New("loadtest: some requests failed")
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&clients, "clients", 200, "concurrent clients")
	duration = 30 * time.Second
	cmd.Flags().Var(spanFlag(&duration), "duration", "how long to load each URL (30s, 2m)")
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	cmd.Flags().StringVar(&accept, "accept-encoding", loadgen.DefaultAcceptEncoding,
		`the requests' Accept-Encoding: "zstd, gzip", "gzip", "zstd" or "" (none)`)
	return cmd
}

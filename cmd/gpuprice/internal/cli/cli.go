// Package cli holds gpuprice's commands. main wires the backends and sources in by
// import and calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/config"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Version is set at build time with -ldflags "-X …/cli.Version=v1.2.3".
var Version = "dev"

// ErrAllFailed is returned by collect when every source failed.
var ErrAllFailed = errors.New("every source failed")

// ErrRowsLost is returned by a run that lost rows: neither the store nor the spool
// took them.
var ErrRowsLost = errors.New("rows lost")

// ErrInterrupted is returned by a run stopped by a signal.
var ErrInterrupted = errors.New("interrupted")

type app struct {
	stdout, stderr io.Writer
	configPath     string
	storeDSN       string
	logLevel       string
	cfg            config.Config
	log            *slog.Logger
	red            *config.Redactor // the configuration's, set once it is loaded
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr}
	root := a.root()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	markUsage(root)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "gpuprice:", a.redactErr(err))
		return exitCode(err)
	}
	return ExitOK
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "gpuprice",
		Short: "Record what GPU compute costs, everywhere, over time",
		Long: `gpuprice collects on-demand, spot and reserved GPU prices from cloud providers'
APIs and pricing pages into ClickHouse or an embedded DuckDB file, and answers
questions about them.

Without --store the embedded store is used: a DuckDB file in the data directory
($GPUPRICE_DATA_DIR, else $XDG_DATA_HOME/gpuprice, else ~/.local/share/gpuprice).
Use --store clickhouse://host:9000/db for ClickHouse; passwords come only from
$GPUPRICE_CLICKHOUSE_PASSWORD or a DSN in $GPUPRICE_STORE.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := config.Load(a.configPath)
			if err != nil {
				return err
			}
			a.cfg = cfg
			a.red = cfg.Redactor()
			level := cfg.LogLevel
			if a.logLevel != "" {
				level = a.logLevel
			} else if level == "info" && quietByDefault[cmd.Name()] {
				// The summary table says what the per-source info lines say.
				level = "warn"
			}
			var lv slog.Level
			if err := lv.UnmarshalText([]byte(level)); err != nil {
				return usagef("--log-level: %w", err)
			}
			// Every log line passes the redactor: no secret from the environment is printed.
			var h slog.Handler = slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: lv})
			if a.logLevel == "" && quietByDefault[cmd.Name()] {
				h = quietUnreachable{h} // explainUnreachable says it in one paragraph
			}
			a.log = a.redactLogger(slog.New(h))
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "YAML config file (see deploy/gpuprice.example.yaml)")
	pf.StringVar(&a.storeDSN, "store", "", "store DSN: duckdb:///path/file.duckdb or clickhouse://host:9000/db (default: embedded DuckDB in the data directory)")
	pf.StringVar(&a.logLevel, "log-level", "", "debug, info, warn or error (default from config: info)")
	for _, c := range commands {
		root.AddCommand(c(a))
	}
	return root
}

// quietByDefault are the commands that print a summary of their own: their info
// log lines are shown only when asked for (--log-level info, or log_level in the file
// set to anything but info).
var quietByDefault = map[string]bool{"collect": true, "reparse": true}

// commands are the subcommands; each command file adds its own from init().
var commands = []func(*app) *cobra.Command{
	(*app).collectCmd, (*app).pricesCmd, (*app).importCmd, (*app).migrateCmd, (*app).versionCmd,
	(*app).sourcesCmd, (*app).gpusCmd, (*app).runsCmd, (*app).quarantineCmd, (*app).spoolCmd, (*app).configCmd, (*app).exitCodesHelp,
}

// addCommand registers a subcommand; called from init() in command files.
func addCommand(c func(*app) *cobra.Command) { commands = append(commands, c) }

func (a *app) openStore(ctx context.Context) (store.Store, error) {
	dsn, err := a.cfg.StoreDSN(a.storeDSN)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, a.heldByServer(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("migrating %s: %w", store.Redact(dsn), err)
	}
	return st, nil
}

func (a *app) migrateCmd() *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Create or upgrade the store's tables (re-running is a no-op)",
		Long: `Create or upgrade the store's tables; re-running is a no-op.

With --cluster NAME (ClickHouse only; the same as ?cluster=NAME in the DSN) every
table is created ON CLUSTER NAME as a Replicated*MergeTree table (name_local) and a
Distributed table over it, sharded by series; every later command needs the DSN with
?cluster=NAME. See docs/clickhouse-cluster.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsn, err := a.cfg.StoreDSN(a.storeDSN)
			if err != nil {
				return err
			}
			if cluster != "" {
				if dsn, err = withCluster(dsn, cluster); err != nil {
					return err
				}
			}
			st, err := store.Open(cmd.Context(), dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			applied, err := st.Migrate(cmd.Context())
			if err != nil {
				return err
			}
			if len(applied) == 0 {
				fmt.Fprintf(a.stdout, "%s: up to date\n", store.Redact(dsn))
				return nil
			}
			fmt.Fprintf(a.stdout, "%s: applied migrations %v\n", store.Redact(dsn), applied)
			return nil
		},
	}
	cmd.Flags().StringVar(&cluster, "cluster", "", "ClickHouse cluster (remote_servers name) to create replicated and Distributed tables on")
	return cmd
}

// withCluster adds the cluster parameter to a ClickHouse DSN, or checks that the
// one it has names the same cluster.
func withCluster(dsn, cluster string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "clickhouse" {
		return "", fmt.Errorf("--cluster needs a ClickHouse store (--store clickhouse://host:9000/db), not %s", store.Redact(dsn))
	}
	q := u.Query()
	if have := q.Get("cluster"); have != "" && have != cluster {
		return "", fmt.Errorf("--cluster %s but the DSN says cluster=%s", cluster, have)
	}
	q.Set("cluster", cluster)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := Version
			if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				v = bi.Main.Version
			}
			cat, err := schemas.LoadCatalog()
			n := 0
			if err == nil {
				n = len(cat.All())
			}
			fmt.Fprintf(a.stdout, "gpuprice %s (GPU catalog: %d GPUs)\n", v, n)
			return nil
		},
	}
}

func (a *app) configCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Print the effective configuration (secrets redacted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsn, err := a.cfg.StoreDSN(a.storeDSN)
			if err != nil {
				return err
			}
			c := a.cfg
			c.Store = dsn
			fmt.Fprint(a.stdout, c.Redacted())
			return nil
		},
	}
}

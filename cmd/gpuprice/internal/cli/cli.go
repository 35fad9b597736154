// Package cli holds gpuprice's commands. main wires the backends and sources in by
// import and calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/deploy/profile"
	"io"
	"log/slog"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/config"
	"github.com/gpuprice/gpuprice/ingest/secrets"
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
	red            *secrets.Redactor // the configuration's, set once it is loaded
	prof           profile.Profiles  // --cpu-profile, --mem-profile
	command        string            // the command run (its name)
	rawCSV         bool              // --raw-csv: CSV cells as they are, no formula guard
	wide           bool              // --wide: tables keep every column, however wide
}

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr}
	root := a.root()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	markUsage(root)
	plainValueNames(root)
	err := root.ExecuteContext(ctx)
	if perr := a.prof.Finish(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
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
				return usagef("--log-level %q: use debug, info, warn or error", level)
			}
			// Every log line passes the redactor: no secret from the environment is printed.
			var h slog.Handler = slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: lv})
			if a.logLevel == "" && quietByDefault[cmd.Name()] {
				h = quietUnreachable{h} // explainUnreachable says it in one paragraph
			}
			a.log = a.redactLogger(slog.New(h))
			a.command = cmd.Name()
			if a.rawCSV {
				a.stdout = query.RawCSV(a.stdout)
			}
			if width := tableWidth(a.stdout); width > 0 && !a.wide {
				a.stdout = query.FitTo(a.stdout, width)
			}
			if _, err := a.applyMemoryLimit(a.command); err != nil {
				return err
			}
			return a.prof.Start()
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "YAML config file (see deploy/gpuprice.example.yaml)")
	pf.StringVar(&a.storeDSN, "store", "",
		"store DSN: duckdb:///path/file.duckdb or clickhouse://host:9000/db (default: embedded DuckDB in the data directory)")
	pf.StringVar(&a.logLevel, "log-level", "", "debug, info, warn or error (default from config: info)")
	pf.StringVar(&a.prof.CPUPath, "cpu-profile", "", "write a CPU profile of the command to this file (go tool pprof)")
	pf.BoolVar(&a.rawCSV, "raw-csv", false,
		"write CSV cells as they are: no ' before a cell starting = + - @ (which a spreadsheet runs as a formula)")
	pf.BoolVar(&a.wide, "wide", false,
		"tables keep every column (by default a table on a terminal fits 120 columns, or $COLUMNS)")
	pf.StringVar(&a.prof.MemPath, "mem-profile", "",
		"write the heap profile of the Go heap's peak to this file (go tool pprof)")
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
	(*app).sourcesCmd, (*app).gpusCmd, (*app).runsCmd, (*app).quarantineCmd, (*app).spoolCmd, (*app).configCmd,
	(*app).exitCodesHelp,
}

// addCommand registers a subcommand; called from init() in command files.
func addCommand(c func(*app) *cobra.Command) { commands = append(commands, c) }

// errNoStore is openExistingStore's error for a store that was never made.
var errNoStore = store.ErrNotExist

// openExistingStore is openStore for commands that only read: it creates nothing
// (store.OpenExisting). A store that does not exist (a missing file, a ClickHouse
// database that is missing or holds no gpuprice tables) is an error naming it; one
// that exists is brought up to date by its pending migrations, as every command does.
func (a *app) openExistingStore(ctx context.Context) (store.Store, error) {
	dsn, err := a.cfg.StoreDSN(a.storeDSN)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenExisting(ctx, dsn)
	if errors.Is(err, store.ErrNotExist) {
		return nil, fmt.Errorf("%w; read commands create no store: fill it with `gpuprice collect` "+
			"(or offline: `gpuprice reparse examples/recorded`), make it empty with `gpuprice migrate`, "+
			"or name another with --store", err)
	}
	if err != nil {
		return nil, a.heldByServer(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("migrating %s: %w", store.Redact(dsn), err)
	}
	return st, nil
}

func (a *app) openStore(ctx context.Context) (store.Store, error) {
	dsn, err := a.writeDSN()
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

// openStoreToWrite is openStore for the commands that collect (collect, import,
// serve): a store that cannot be reached to be migrated is returned all the same,
// with deferred set, so that the run collects into the spool and the runner
// migrates the store when it answers (ingest.Runner.MigrateFirst).
func (a *app) openStoreToWrite(ctx context.Context) (st store.Store, deferred bool, err error) {
	dsn, err := a.writeDSN()
	if err != nil {
		return nil, false, err
	}
	st, err = store.Open(ctx, dsn)
	if err != nil {
		return nil, false, a.heldByServer(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		if errors.Is(err, store.ErrUnavailable) {
			a.log.Warn("store unreachable: collecting into the spool; it is migrated and the spool replayed when it answers",
				"store", store.Redact(dsn), "error", err.Error())
			return st, true, nil
		}
		st.Close()
		return nil, false, fmt.Errorf("migrating %s: %w", store.Redact(dsn), err)
	}
	return st, false, nil
}

// writeDSN is the store's DSN, with a one-shot collection's DuckDB settings
// (collectDuckDB) where an embedded store's DSN does not set them.
func (a *app) writeDSN() (string, error) {
	dsn, err := a.cfg.StoreDSN(a.storeDSN)
	if err != nil || !oneShotCollection(a.command) {
		return dsn, err
	}
	return withDuckDBDefaults(dsn, collectDuckDB), nil
}

func (a *app) migrateCmd() *cobra.Command {
	var cluster string
	cmd := &cobra.Command{
		Use: "migrate",
		Example: `  gpuprice migrate
  gpuprice migrate --store clickhouse://localhost:9000/gpuprice
  gpuprice migrate --cluster gpuprice --store clickhouse://ch1:9000/gpuprice`,
		Short: "Create or upgrade the store's tables (re-running is a no-op)",
		Long: `Create or upgrade the store's tables; re-running is a no-op.

With --cluster NAME (ClickHouse only; the same as ?cluster=NAME in the DSN) every
table is created ON CLUSTER NAME as a Replicated*MergeTree table (name_local) and a
Distributed table over it, sharded by series; every later command needs the DSN with
?cluster=NAME. An ON CLUSTER statement that a node does not finish (a node down,
or on ClickHouse 18.16 one that lost its ZooKeeper session: restart it) stops the
migration; run migrate again once every node is back: it completes what was begun.
See docs/clickhouse-cluster.md.`,
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
			if v, ok := st.(interface{ VersionNotice(context.Context) string }); ok {
				if notice := v.VersionNotice(cmd.Context()); notice != "" {
					fmt.Fprintln(a.stderr, notice)
				}
			}
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
	cmd.Flags().StringVar(&cluster, "cluster", "",
		"ClickHouse cluster (remote_servers name) to create replicated and Distributed tables on")
	return cmd
}

// withCluster adds the cluster parameter to a ClickHouse DSN, or checks that the
// one it has names the same cluster.
func withCluster(dsn, cluster string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "clickhouse" {
		return "", fmt.Errorf("--cluster needs a ClickHouse store (--store clickhouse://host:9000/db), not %s",
			store.Redact(dsn))
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
		Short: "Print the version, commit and build date",
		Long: `Print the version (a release's tag, else the module version the binary was built
from), the VCS commit and its date, whether the work tree had uncommitted changes, the
Go version and the size of the GPU catalog. Commit and date come from the build
information Go stamps into every binary built in a git checkout (go build, go install).`,
		Example: `  gpuprice version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi, _ := debug.ReadBuildInfo()
			cat, err := schemas.LoadCatalog()
			n := 0
			if err == nil {
				n = len(cat.All())
			}
			fmt.Fprintf(a.stdout, "%s (GPU catalog: %d GPUs)\n", versionLine(Version, bi), n)
			return nil
		},
	}
}

// versionLine is "gpuprice VERSION (commit C, committed DATE[, modified], goX)" from
// the -ldflags version and the binary's build information.
func versionLine(version string, bi *debug.BuildInfo) string {
	if bi == nil {
		return "gpuprice " + version
	}
	if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	var parts []string
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		parts = append(parts, "commit "+rev)
	} else {
		parts = append(parts, "commit unknown (built outside a git checkout)")
	}
	if at != "" {
		parts = append(parts, "committed "+at)
	}
	if modified {
		parts = append(parts, "with uncommitted changes")
	}
	parts = append(parts, bi.GoVersion)
	return fmt.Sprintf("gpuprice %s (%s)", version, strings.Join(parts, ", "))
}

func (a *app) configCmd() *cobra.Command {
	return &cobra.Command{
		Use: "config",
		Example: `  gpuprice config
  gpuprice config --config /etc/gpuprice/gpuprice.yaml`,
		Short: "Print the effective configuration (secrets redacted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, notes, err := a.effectiveConfig()
			if err != nil {
				return err
			}
			fmt.Fprint(a.stdout, c.RedactedNotes(notes))
			return nil
		},
	}
}

// defaultTableWidth is the width a table on a terminal fits unless $COLUMNS says
// another (kubectl's habit: the wide columns on request, --wide).
const defaultTableWidth = 120

// tableWidth is the width tables written to w fit: $COLUMNS when it is a number,
// else defaultTableWidth when w is a terminal, else 0 (a file or a pipe gets every
// column).
func tableWidth(w io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return defaultTableWidth
	}
	return 0
}

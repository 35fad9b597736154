#!/usr/bin/env bash
# The whole test suite, ClickHouse integration tests included. On a fresh Debian
# machine it installs Debian's clickhouse-server when missing, starts it when it is not
# answering, and points the tests at it. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"

# phase NAME: print the heading of the next phase, with the time the last one took
# (the suite must stay well under 20 minutes on 2 cores: these lines say where it goes).
phase_start=$SECONDS
phase() {
  echo "   (took $((SECONDS - phase_start)) s; $SECONDS s so far)"
  phase_start=$SECONDS
  echo "== $*"
}

if ! command -v clickhouse-server >/dev/null; then
  phase "installing Debian's clickhouse-server"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q clickhouse-server clickhouse-client
fi
if [ ! -x /usr/bin/chromium ]; then
  # The web app's browser tests (cmd/gpuprice TestWebApp) drive Debian's chromium.
  phase "installing Debian's chromium"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
if ! command -v pdftotext >/dev/null; then
  # The report's PDF test (cmd/gpuprice TestReport*) reads each page's text with it.
  echo "== installing Debian's poppler-utils"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q poppler-utils
fi
# Current ClickHouse (26.7) as a library, for the chdb:// store and the second
# pass of every ClickHouse test below (deploy/chdb/install.sh: pinned npm package,
# checksum verified, cached between runs on this machine).
if ! command -v npm >/dev/null; then
  phase "installing Debian's npm"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm
fi
phase "installing libchdb.so (chDB, current ClickHouse's engine)"
CHDB_LIB_PATH="$(deploy/chdb/install.sh)" || { echo "deploy/chdb/install.sh failed"; [ -z "${CI:-}" ] || exit 1; CHDB_LIB_PATH=""; }
export CHDB_LIB_PATH
# The web app's pinned build tools (esbuild, from npm): TestBundleRebuilds builds the
# bundle again from src/ and fails when it differs from the committed dist/.
phase "installing the web app's build tools (npm ci in analytics/api/web)"
(cd analytics/api/web && npm ci --no-audit --no-fund --loglevel=error) ||
  { echo "npm ci in analytics/api/web failed"; [ -z "${CI:-}" ] || exit 1; }

if ! clickhouse-client -q 'SELECT 1' >/dev/null 2>&1; then
  phase "starting clickhouse-server"
  log="${TMPDIR:-/tmp}/gpuprice-clickhouse-server.log"
  ( cd /tmp && $SUDO nohup clickhouse-server --config-file=/etc/clickhouse-server/config.xml >"$log" 2>&1 & )
  for _ in $(seq 1 60); do
    clickhouse-client -q 'SELECT 1' >/dev/null 2>&1 && break
    sleep 1
  done
  clickhouse-client -q 'SELECT version()' || { echo "clickhouse-server did not start; see $log"; tail -50 "$log"; exit 1; }
fi

# The ClickHouse cluster of the cluster tests (2 shards × 2 replicas and ZooKeeper on
# this machine, deploy/clickhouse-cluster/local.sh), stopped at exit. Given
# GPUPRICE_CLICKHOUSE_CLUSTER_DSNS, that cluster is used instead and left alone.
if [ -z "${GPUPRICE_CLICKHOUSE_CLUSTER_DSNS:-}" ]; then
  # One an earlier run of this script started and left running (killed before its
  # exit trap) is restarted clean, its stale databases and DDL queue with it.
  if deploy/clickhouse-cluster/local.sh stale; then
    phase "stopping the local ClickHouse cluster an earlier test run left"
    deploy/clickhouse-cluster/local.sh down
  fi
  phase "starting the local ClickHouse cluster"
  # Stopped at exit only when this run started it. One already running (by hand, or
  # by a test run still going) is used only if every node answers and finishes an
  # ON CLUSTER DDL within 60 s (local.sh up checks it, naming a node that does not).
  deploy/clickhouse-cluster/local.sh status || trap 'deploy/clickhouse-cluster/local.sh down' EXIT
  GPUPRICE_CLICKHOUSE_CLUSTER_DSNS="$(GPUPRICE_CLUSTER_OWNER=$$ deploy/clickhouse-cluster/local.sh up | tr '\n' ' ')"
  export GPUPRICE_CLICKHOUSE_CLUSTER_DSNS
  # The cluster test may SIGKILL and restart one node of it through local.sh.
  export GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL="$PWD/deploy/clickhouse-cluster/local.sh"
fi

export GPUPRICE_CLICKHOUSE_DSN="${GPUPRICE_CLICKHOUSE_DSN:-clickhouse://localhost:9000/default}"
export CI="${CI:-1}"   # integration tests fail instead of skipping when their server is missing
# The outage test (cmd/gpuprice TestIntegrationClickHouseOutage) may start, SIGKILL and
# restart a clickhouse-server of its own (this binary, --config-file as above, its own
# ports and data directory); it never touches the server started here.
export GPUPRICE_CLICKHOUSE_CONTROL="${GPUPRICE_CLICKHOUSE_CONTROL:-1}"

phase "gofmt and go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi
go vet ./...

phase "linking cmd/gpuprice's test binary (once: every job and benchmark below that tests it runs it)"
CMD_TEST="$(mktemp -d)/gpuprice.test"
go test -c -o "$CMD_TEST" ./cmd/gpuprice
export CMD_TEST

phase "go test, then go test on current ClickHouse (chDB), as concurrent jobs"
# deploy/gotest-jobs.sh: every package on the 18.16 server, cmd/gpuprice in two shards
# beside the rest; then the ClickHouse tests again on chDB 26.7 (store, deploy and
# cmd in shards). Tests that need a server of their own (the native protocol, a
# process to kill, the cluster) say so and skip on chDB.
status=0
deploy/gotest-jobs.sh || status=$?
if [ -n "${GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL:-}" ]; then
  # What the local cluster went through (expired ZooKeeper sessions, nodes the tests
  # restarted for them): the first thing to read when a cluster test failed.
  phase "the local ClickHouse cluster"
  "$GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL" report || true
fi
[ "$status" = 0 ] || exit "$status"

phase "benchmarks at a small size (they keep working; figures: deploy/bench.sh, BENCHMARKS.md)"
(cd cmd/gpuprice && "$CMD_TEST" -test.run '^$' -test.bench 'ImportCSV|CollectMemory' -test.benchtime 1x)
(cd cmd/gpuprice && GPUPRICE_BENCH_SERIES=20 GPUPRICE_BENCH_CLIENTS=20 GPUPRICE_BENCH_SECONDS=2 \
  "$CMD_TEST" -test.run '^$' -test.bench 'ServeUnderLoad' -test.benchtime 1x)
go test -run '^$' -bench 'IngestPath|ClickHouseAnalytics' -benchtime 1x ./store/clickhouse
GPUPRICE_BENCH_DIR="$(mktemp -d)" go test -run '^$' -bench 'DuckDBAnalytics' -benchtime 1x ./store/duckdb

phase "fuzz smoke (each target briefly, two at a time: deploy/fuzz-smoke.sh)"
deploy/fuzz-smoke.sh
phase "all tests passed"

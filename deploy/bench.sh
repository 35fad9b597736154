#!/usr/bin/env bash
# The performance comparisons of issue 12, each against the engine's own client, at
# the sizes given (defaults: the issue's). Prints the Go benchmark lines and writes
# them, with the machine, versions, date and load, to bench-results.md (paste the
# table into BENCHMARKS.md by hand: it keeps the "before" figures beside them).
#
#   IMPORT_ROWS=2000000 ANALYTICS_ROWS=10000000 OFFER_MB=1024 RUNS=3 ./deploy/bench.sh
#
# Needs ClickHouse (GPUPRICE_CLICKHOUSE_DSN, default clickhouse://localhost:9000/default)
# and clickhouse-client; with libchdb.so (deploy/chdb/install.sh) the import and the
# analytics also run on chDB, current ClickHouse embedded (CHDB_ROWS, default 2M). The analytics data set is loaded once into
# gpuprice_bench_<rows> and kept (DROP DATABASE it by hand). CPU-heavy: on a shared
# machine, run it when the load is low and say what the load was.
set -euo pipefail
cd "$(dirname "$0")/.."
export GPUPRICE_CLICKHOUSE_DSN="${GPUPRICE_CLICKHOUSE_DSN:-clickhouse://localhost:9000/default}"
IMPORT_ROWS="${IMPORT_ROWS:-2000000}"
ANALYTICS_ROWS="${ANALYTICS_ROWS:-10000000}"
RUNS="${RUNS:-3}"
OFFER_MB="${OFFER_MB:-1024}"
bin="$(mktemp -d)/gpuprice"
out="${OUT:-bench-results.md}"

{
  echo "## Measured $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GB"
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $(go version | cut -d' ' -f3-4); ClickHouse $(clickhouse-client -q 'SELECT version()'); clickhouse-client $(clickhouse-client --version | awk '{print $NF}')"
  echo "- commit $(git rev-parse --short HEAD)"
  echo
  echo '```'
  echo "# import csv: ${IMPORT_ROWS} rows, best of ${RUNS} alternating runs"
  GPUPRICE_BENCH_IMPORT_ROWS="$IMPORT_ROWS" go test ./cmd/gpuprice -run '^$' -bench ImportCSV \
    -benchtime "${RUNS}x" -timeout 2h | grep -E '^Benchmark'
  echo "# ingest path (batches through ingest) vs clickhouse-go's batch insert"
  GPUPRICE_BENCH_ROWS="$IMPORT_ROWS" go test ./store/clickhouse -run '^$' -bench IngestPath \
    -benchtime "${RUNS}x" -timeout 2h | grep -E '^Benchmark'
  echo "# collector memory: full collect over recorded responses with a ${OFFER_MB} MB AWS offer file (gpuprice binary)"
  go build -o "$bin" ./cmd/gpuprice
  GPUPRICE_BENCH_BIN="$bin" GPUPRICE_BENCH_OFFER_MB="$OFFER_MB" go test ./cmd/gpuprice -run '^$' -bench CollectMemory \
    -benchtime "${RUNS}x" -timeout 1h | grep -E '^Benchmark'
  echo "# analytics: ${ANALYTICS_ROWS} raw rows"
  GPUPRICE_BENCH_ROWS="$ANALYTICS_ROWS" go test ./store/clickhouse -run '^$' -bench ClickHouseAnalytics \
    -benchtime 5x -timeout 2h | grep -E '^Benchmark'
  if lib="$(deploy/chdb/install.sh 2>/dev/null)"; then
    echo "# analytics on chDB (current ClickHouse embedded, $(basename "$(dirname "$lib")")): ${CHDB_ROWS:-2000000} raw rows"
    mkdir -p "${CHDB_BENCH_DIR:-$HOME/.cache/gpuprice/bench-chdb}"
    CHDB_LIB_PATH="$lib" GPUPRICE_CLICKHOUSE_DSN="chdb://${CHDB_BENCH_DIR:-$HOME/.cache/gpuprice/bench-chdb}" \
      GPUPRICE_BENCH_ROWS="${CHDB_ROWS:-2000000}" go test ./store/clickhouse -run '^$' -bench ClickHouseAnalytics \
      -benchtime 5x -timeout 2h | grep -E '^Benchmark'
  fi
  echo "# analytics on DuckDB: ${DUCKDB_ROWS:-2000000} raw rows (hourly)"
  GPUPRICE_BENCH_DUCKDB_ROWS="${DUCKDB_ROWS:-2000000}" go test ./store/duckdb -run '^$' -bench DuckDBAnalytics \
    -benchtime 5x -timeout 2h | grep -E '^Benchmark'
  echo '```'
} | tee "$out"

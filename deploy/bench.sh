#!/usr/bin/env bash
# The performance comparisons of issues 12 and 27, each against the engine's own
# client or its bare scan, in ROUNDS alternating rounds (every comparison once per
# round, then the next round): each result line says its round and the load average
# when it started, so a ratio is read within one round and a loaded round is seen
# as one. Every analytics line also gets its ratio to the bare scan of the same run
# (deploy/bench-ratios.awk): the figure issue 27's targets are stated in. Writes the
# lines, with the machine, versions and date, to bench-results.md.
#
#   ROUNDS=3 IMPORT_ROWS=2000000 ANALYTICS_ROWS="2000000 10000000" ./deploy/bench.sh
#   ONLY=serve ROUNDS=2 ./deploy/bench.sh      # one section: import ingest memory analytics serve
#
# Needs ClickHouse (GPUPRICE_CLICKHOUSE_DSN, default clickhouse://localhost:9000/default)
# and clickhouse-client; with libchdb.so (deploy/chdb/install.sh) the import and the
# analytics also run on chDB, current ClickHouse embedded (CHDB_ROWS, default 2M). Each
# analytics data set is loaded once into gpuprice_bench_<rows> and kept (DROP DATABASE
# it by hand); ANALYTICS_ROWS lists the sizes whose reads show the cost against the
# history's length. The serve section loads `gpuprice serve` with SERVE_CLIENTS
# clients (200) on SERVE_SERIES series (600) observed hourly for SERVE_DAYS days (70:
# about 1M observations) on DuckDB and on
# ClickHouse, the load generator in a process of its own pinned to CPU LOAD_CPU (1;
# serve is not pinned). CPU-heavy: run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export GPUPRICE_CLICKHOUSE_DSN="${GPUPRICE_CLICKHOUSE_DSN:-clickhouse://localhost:9000/default}"
IMPORT_ROWS="${IMPORT_ROWS:-2000000}"
ANALYTICS_ROWS="${ANALYTICS_ROWS:-2000000 10000000}"
DUCKDB_ROWS="${DUCKDB_ROWS:-2000000}"
ROUNDS="${ROUNDS:-${RUNS:-3}}"
OFFER_MB="${OFFER_MB:-1024}"
SERVE_SERIES="${SERVE_SERIES:-600}"
SERVE_DAYS="${SERVE_DAYS:-70}"
SERVE_CLIENTS="${SERVE_CLIENTS:-200}"
SERVE_SECONDS="${SERVE_SECONDS:-10}"
LOAD_CPU="${LOAD_CPU:-1}"
ONLY="${ONLY:-import ingest memory analytics serve}"
tmp="$(mktemp -d)"
bin="$tmp/gpuprice"
out="${OUT:-bench-results.md}"
ch_host="$(echo "$GPUPRICE_CLICKHOUSE_DSN" | sed -E 's|^[a-z]+://([^/:@]*@)?([^/:]+).*|\2|')"
serve_store="${SERVE_STORE:-clickhouse://$ch_host:9000/gpuprice_servebench}"

# Test binaries are built once, so that a round measures the benchmark alone.
build() { go test -c -o "$tmp/$1.test" "$2" >/dev/null; }
# run ROUND LABEL BINARY ARGS…: one benchmark run, each result line prefixed with the
# round, the label and the 1-minute load average at its start.
run() {
  local round="$1" label="$2" test="$3"
  shift 3
  local load
  load="$(cut -d' ' -f1 /proc/loadavg)"
  local dir
  case "$test" in
  cmd) dir=cmd/gpuprice ;;
  ch) dir=store/clickhouse ;;
  duck) dir=store/duckdb ;;
  esac
  (cd "$dir" && "$tmp/$test.test" -test.run '^$' "$@") 2>&1 | grep -E '^Benchmark' |
    sed "s|^|round $round · load $load · $label · |"
}
want() { [[ " $ONLY " == *" $1 "* ]]; }

{
  echo "## Measured $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "- machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GB"
  echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- $(go version | cut -d' ' -f3-4); ClickHouse $(clickhouse-client -q 'SELECT version()'); clickhouse-client $(clickhouse-client --version | awk '{print $NF}')"
  echo "- commit $(git rev-parse --short HEAD); $ROUNDS alternating rounds (sections: $ONLY)"
  echo
  echo '```'
  build cmd ./cmd/gpuprice
  build ch ./store/clickhouse
  build duck ./store/duckdb
  go build -o "$bin" ./cmd/gpuprice
  lib=""
  if lib="$(deploy/chdb/install.sh 2>/dev/null)"; then :; else lib=""; fi
  for round in $(seq 1 "$ROUNDS"); do
    if want import; then
      # import csv: gpuprice into each store against clickhouse-client loading the same file, and (second
      # iteration) the file gpuprice's export writes for the rows it stored (ch_vs_exported, duckdb_vs_exported)
      GPUPRICE_BENCH_IMPORT_ROWS="$IMPORT_ROWS" CHDB_LIB_PATH="$lib" \
        run "$round" "import csv ${IMPORT_ROWS} rows" cmd -test.bench ImportCSV -test.benchtime 2x -test.timeout 2h
    fi
    if want ingest; then
      GPUPRICE_BENCH_ROWS="$IMPORT_ROWS" \
        run "$round" "ingest path vs clickhouse-go batch, ${IMPORT_ROWS} rows" ch -test.bench IngestPath \
        -test.benchtime 1x -test.timeout 2h
    fi
    if want memory; then
      GPUPRICE_BENCH_BIN="$bin" GPUPRICE_BENCH_OFFER_MB="$OFFER_MB" \
        run "$round" "collect memory, ${OFFER_MB} MB AWS offer" cmd -test.bench CollectMemory -test.benchtime 1x \
        -test.timeout 1h
    fi
    if want analytics; then
      for rows in $ANALYTICS_ROWS; do
        GPUPRICE_BENCH_ROWS="$rows" \
          run "$round" "analytics on ClickHouse $(clickhouse-client -q 'SELECT version()'), $rows raw rows" ch \
          -test.bench ClickHouseAnalytics -test.benchtime 5x -test.timeout 4h
      done
      if [ -n "$lib" ]; then
        mkdir -p "${CHDB_BENCH_DIR:-$HOME/.cache/gpuprice/bench-chdb}"
        CHDB_LIB_PATH="$lib" GPUPRICE_CLICKHOUSE_DSN="chdb://${CHDB_BENCH_DIR:-$HOME/.cache/gpuprice/bench-chdb}" \
          GPUPRICE_BENCH_ROWS="${CHDB_ROWS:-2000000}" \
          run "$round" "analytics on chDB $(basename "$(dirname "$lib")"), ${CHDB_ROWS:-2000000} raw rows" ch \
          -test.bench ClickHouseAnalytics -test.benchtime 5x -test.timeout 2h
      fi
      GPUPRICE_BENCH_DUCKDB_ROWS="$DUCKDB_ROWS" \
        run "$round" "analytics on DuckDB, $DUCKDB_ROWS raw rows" duck -test.bench DuckDBAnalytics \
        -test.benchtime 5x -test.timeout 2h
    fi
    if want serve; then
      for st in "" "$serve_store"; do
        name="DuckDB"
        [ -z "$st" ] || name="ClickHouse"
        GPUPRICE_BENCH_STORE="$st" GPUPRICE_BENCH_SERIES="$SERVE_SERIES" GPUPRICE_BENCH_DAYS="$SERVE_DAYS" \
          GPUPRICE_BENCH_CLIENTS="$SERVE_CLIENTS" GPUPRICE_BENCH_SECONDS="$SERVE_SECONDS" \
          GPUPRICE_BENCH_LOAD_CPU="$LOAD_CPU" run "$round" "serve on $name, $SERVE_SERIES series × $SERVE_DAYS days \
hourly, $SERVE_CLIENTS clients, load generator on CPU $LOAD_CPU" \
          cmd -test.bench ServeUnderLoad -test.benchtime 1x -test.timeout 1h
      done
    fi
  done
  echo '```'
} | awk -f deploy/bench-ratios.awk | tee "$out"

#!/usr/bin/env bash
# gotest-jobs.sh: the go test passes of deploy/test.sh, run as concurrent jobs so both
# cores stay busy. cmd/gpuprice holds most of the suite's time in one package (its
# tests run one after another), so its tests are split into two shards by measured
# weight, each shard its own test process; the other packages run beside them. The
# second pass (current ClickHouse, chDB) runs the ClickHouse tests the same way.
#
#   deploy/gotest-jobs.sh            both passes (the chDB one when CHDB_LIB_PATH is set)
#
# Every job's output is kept and printed when it ends; the exit status is non-zero if
# any job failed. JOBS (default 3) is how many run at once.
set -uo pipefail
cd "$(dirname "$0")/.."

CMD=./cmd/gpuprice
# cmd/gpuprice's test binary is linked once (it links DuckDB: 15–20 s of CPU a link)
# and run by every job below that tests the package, and by deploy/test.sh's
# benchmarks after them: CMD_TEST, when set, is one already built (go test -c).
if [ -z "${CMD_TEST:-}" ]; then
  CMD_TEST="$(mktemp -d)/gpuprice.test"
  go test -c -o "$CMD_TEST" "$CMD" || exit 1
fi
# cmdtest ARGS: the command line running cmd/gpuprice's tests, in its directory, as
# go test runs them.
cmdtest() { echo "cd $CMD && $CMD_TEST -test.count=1 -test.timeout 25m $*"; }
# Tests of cmd/gpuprice that take longest (seconds on 2 cores, from go test -json),
# placed first so the two shards come out even; every other test weighs 2 (measured
# 2026-12-03 on a loaded machine: only their ratios matter). To measure
# them again: go test -count=1 -json ./cmd/gpuprice > t.json, then each top-level
# test's "Elapsed" on its pass line.
WEIGHTS="TestIntegrationClickHouseReport:101 TestReportDuckDB:74 TestIntegrationClickHouseMCPRecorded:44
TestHostileFiltersDuckDB:43 TestIntegrationClickHouseWebApp:41 TestIntegrationClickHouseHostileFilters:37
TestIntegrationClickHouseCollectPricesSame:34 TestIntegrationClickHouseTwoServesOneAlertEvaluator:33
TestIntegrationClickHouseAnswersEqualDuckDB:32 TestWebApp:30 TestIntegrationClickHouseTwoServesOneDigest:23
TestEveryRealExcerptCollectsOK:20 TestMCPRecordedDuckDB:18 TestIntegrationClickHouseCollectStoresAPISignals:14
TestIntegrationClickHouseTermsRecorded:13 TestWebAppMarksRecorded:13 TestIntegrationClickHouseDigestRecorded:13
TestTableCommandsTakeEveryFormat:12 TestServeCapsOpenConnections:11 TestIntegrationClickHouseCollectStoresSignals:10
TestPublishDuckDB:10 TestIntegrationClickHouseKilledImportIsRecovered:10 TestSecretsAppearNowhere:9
TestIntegrationClickHouseExport:9 TestReadmeQuickStartOffline:8 TestCollectPricesDuckDB:8
TestHangingSourceAndRetryAfter:8 TestRunPodAPINotOfferedIsRoutine:8 TestIntegrationClickHousePublish:8
TestSinceUntil:8 TestIntegrationClickHouseReparseThenAnalytics:7
TestIntegrationClickHouseServeSeesAnotherProcesssWrites:7 TestIntegrationClickHouseAPIMatchesCLI:7
TestRiskSpotAdvisorDuckDB:7 TestWebAppTermCurve:7 TestWebAppRiskBand:7 TestBuildHistoryScript:6 TestExitCodes:6
TestIntegrationClickHouseRiskSpotAdvisor:6 TestDigestRecordedDuckDB:6 TestRiskSpotAdvisorHistoryDuckDB:6
TestPoisonRowsQuarantinedTheRestStored:5 TestIntegrationClickHouseRiskSpotAdvisorHistory:5
TestDigestNamesFailedSources:4 TestBatchSplitAgainstRealStores:4 TestWebAppCSVHostile:4
TestAPIValidationAndDocument:4 TestExampleReport:4 TestWebAppSeriesTimeHonesty:4 TestServe:4"

# shards FILTER SKIP: the top-level tests of cmd/gpuprice whose names match FILTER and
# not SKIP, as two -run patterns (one line each), split by weight (largest first, each
# to the lighter shard).
shards() {
  local filter="$1" skip="$2"
  (cd "$CMD" && "$CMD_TEST" -test.list '.*') | grep -E '^(Test|Example|Fuzz)' | grep -E "$filter" | { if [ -n "$skip" ]; then grep -vE "$skip"; else cat; fi; } |
    awk -v weights="$WEIGHTS" '
      BEGIN { n = split(weights, w, /[ \n]+/); for (i = 1; i <= n; i++) { split(w[i], kv, ":"); wt[kv[1]] = kv[2] } }
      { name[NR] = $1; weight[NR] = ($1 in wt) ? wt[$1] : 2 }
      END {
        # largest first (a simple insertion sort: about a hundred names)
        for (i = 1; i <= NR; i++) order[i] = i
        for (i = 2; i <= NR; i++) { j = i; while (j > 1 && weight[order[j]] > weight[order[j-1]]) { t = order[j]; order[j] = order[j-1]; order[j-1] = t; j-- } }
        s[0] = 0; s[1] = 0; p[0] = ""; p[1] = ""
        for (i = 1; i <= NR; i++) {
          k = (s[0] <= s[1]) ? 0 : 1; s[k] += weight[order[i]]
          p[k] = p[k] (p[k] == "" ? "" : "|") name[order[i]]
        }
        print "^(" p[0] ")$"; print "^(" p[1] ")$"
      }'
}

declare -a names cmds
add() { names+=("$1"); cmds+=("$2"); }

# The tests on the local ClickHouse cluster (four clickhouse-server processes and
# ZooKeeper) run after the concurrent jobs, one package at a time (below): beside
# them, the load of the other jobs expired the nodes' ZooKeeper sessions, and a node
# one test restarted to heal that broke another package's connection to it.
CLUSTER_TESTS='IntegrationClickHouseCluster|IntegrationCluster'
others=$(go list ./... | grep -vx "github.com/gpuprice/gpuprice/cmd/gpuprice" | tr '\n' ' ')
mapfile -t s < <(shards '.' "$CLUSTER_TESTS")
add "go test (all packages but cmd/gpuprice)" "go test -count=1 -timeout 25m -skip '$CLUSTER_TESTS' $others"
add "go test cmd/gpuprice (shard 1 of 2)" "$(cmdtest "-test.run '${s[0]}'")"
add "go test cmd/gpuprice (shard 2 of 2)" "$(cmdtest "-test.run '${s[1]}'")"

if [ -n "${CHDB_LIB_PATH:-}" ]; then
  # The same ClickHouse tests again on current ClickHouse (26.7, embedded): the store
  # conformance suite, the views, the Grafana panels' SQL, the analytics against their
  # Go reference, and the CLI and API end-to-end tests. Tests that need a server of
  # their own (the native protocol, a process to kill, the cluster) say so and skip.
  # Every test that runs on GPUPRICE_CLICKHOUSE_DSN is named …ClickHouse…, and two take
  # each store in turn. Each job has its own chDB directory.
  CHDB_TESTS='ClickHouse|ReadOnlyCommandsCreateNoStore|PoisonRowsQuarantinedTheRestStored'
  chdb_env() { echo "GPUPRICE_CLICKHOUSE_DSN=chdb://$(mktemp -d) GPUPRICE_CLICKHOUSE_CLUSTER_DSNS="; }
  mapfile -t c < <(shards "$CHDB_TESTS" 'Cluster')
  add "chDB: go test store and deploy" "env $(chdb_env) go test -count=1 -timeout 25m -run '$CHDB_TESTS' -skip Cluster ./store/... ./deploy/..."
  add "chDB: go test cmd/gpuprice (shard 1 of 2)" "export $(chdb_env); $(cmdtest "-test.run '${c[0]}'")"
  add "chDB: go test cmd/gpuprice (shard 2 of 2)" "export $(chdb_env); $(cmdtest "-test.run '${c[1]}'")"
fi

logdir=$(mktemp -d)
declare -A pid_job
status=0
running=0
report() { # report PID STATUS: print a finished job's output
  local j=${pid_job[$1]}
  echo "-- ${names[$j]}: $( [ "$2" = 0 ] && echo ok || echo "FAILED (exit $2)" ), $(( SECONDS - ${start[$j]} )) s"
  cat "$logdir/$j.log"
}
declare -a start
for j in "${!cmds[@]}"; do
  while [ "$running" -ge "${JOBS:-3}" ]; do
    wait -n -p done_pid; rc=$?
    report "$done_pid" "$rc"; [ "$rc" = 0 ] || status=1
    running=$((running - 1))
  done
  start[$j]=$SECONDS
  bash -c "${cmds[$j]}" >"$logdir/$j.log" 2>&1 &
  pid_job[$!]=$j
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n -p done_pid; rc=$?
  report "$done_pid" "$rc"; [ "$rc" = 0 ] || status=1
  running=$((running - 1))
done

if [ -n "${GPUPRICE_CLICKHOUSE_CLUSTER_DSNS:-}" ] || [ -n "${CI:-}" ]; then
  # The cluster tests, alone on the machine and one package at a time (-p 1).
  if [ -n "${GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL:-}" ]; then
    # The local cluster sat idle through the jobs above, at a load of 6 or more: a node's
    # ZooKeeper session may have expired meanwhile, which ClickHouse 18.16 does not
    # recover from (its next ON CLUSTER DDL hangs; seen in CI: a node stuck 90 s on the
    # first task of the cluster tests, then restarted under them). Each node starts
    # afresh (local.sh restart waits until it answers and its tables are writable),
    # and the DDL queue is checked, before the tests.
    echo "-- restarting the local ClickHouse cluster's nodes before its tests"
    for n in 1 2 3 4; do
      "$GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL" restart "$n" "fresh before the cluster tests" >/dev/null || status=1
    done
    "$GPUPRICE_CLICKHOUSE_CLUSTER_CONTROL" check || status=1
  fi
  j=${#cmds[@]}
  names+=("go test on the local ClickHouse cluster (after the other jobs, -p 1)")
  start[$j]=$SECONDS
  # Only the packages that hold such tests (a test binary per package costs a link).
  cluster_pkgs=$(grep -lE "^func Test($CLUSTER_TESTS)" $(git ls-files '*_test.go' 2>/dev/null || find . -name '*_test.go') |
    xargs -n1 dirname | sort -u | sed 's|^|./|; s|^\./\./|./|' | grep -vx "$CMD" | tr '\n' ' ')
  { go test -count=1 -timeout 25m -p 1 -run "$CLUSTER_TESTS" $cluster_pkgs; rc=$?
    bash -c "$(cmdtest "-test.run '$CLUSTER_TESTS'")" && exit $rc; } >"$logdir/$j.log" 2>&1 &
  pid_job[$!]=$j
  wait -n -p done_pid; rc=$?
  report "$done_pid" "$rc"; [ "$rc" = 0 ] || status=1
fi
rm -rf "$logdir"
exit $status

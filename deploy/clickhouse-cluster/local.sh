#!/usr/bin/env bash
# local.sh: the gpuprice ClickHouse cluster (2 shards × 2 replicas, cluster "gpuprice")
# on one machine, from Debian packages: one ZooKeeper and four clickhouse-server
# processes, each on its own ports and data directory. The tests use it; it is also a
# way to try `gpuprice migrate --cluster gpuprice` without containers.
#
#   local.sh up        install what is missing (apt-get), start what is not running, wait
#                      until every node answers and sees ZooKeeper, check it (below), then
#                      print one DSN per node on stdout
#                      (clickhouse://127.0.0.1:PORT/gpuprice?cluster=gpuprice). With
#                      GPUPRICE_CLUSTER_OWNER=PID, a cluster it starts afresh records that
#                      process as its owner (see stale).
#   local.sh down      stop what up started and delete the state directory
#   local.sh dsns      print the DSNs again
#   local.sh status    exit 0 when ZooKeeper and every node this script started run
#   local.sh check     exit 0 when every node answers within 10 s, reaches ZooKeeper and
#                      finishes an ON CLUSTER DDL within $GPUPRICE_CLUSTER_DDL_TIMEOUT s
#                      (default 60; each node runs the DDL queue in order, so the queue is
#                      drained); else name each node that did not, and what it is stuck on
#   local.sh heal      restart each broken node (below), noting it in heal.log; the
#                      tests run it every 2 s
#   local.sh restart N [WHY]  restart node N as heal does (noted in heal.log)
#   local.sh broken N  exit 0, printing its log line, when node N has lost, since it
#                      started, what ON CLUSTER DDL needs: ClickHouse 18.16 does not
#                      recover from a ZooKeeper session that expired, or from its DDL
#                      worker ending on an error (see broken() below)
#   local.sh stale     exit 0 when the cluster runs but its owner (GPUPRICE_CLUSTER_OWNER
#                      of up) has ended: left by a test run killed before it stopped it
#   local.sh pause-zookeeper N  SIGSTOP ZooKeeper for N seconds (for failure tests)
#   local.sh zookeeper print ZooKeeper's address (host:port)
#   local.sh report    count each node's expired sessions and ended DDL workers, and
#                      print heal.log (deploy/test.sh does after the tests)
#   local.sh kill N    SIGKILL node N (1..4), as a crash would (for failure tests)
#   local.sh start N   start node N again and wait until it answers
#
# Nodes: 1 = shard 1 replica 1, 2 = shard 1 replica 2, 3 = shard 2 replica 1,
# 4 = shard 2 replica 2. Node N listens on 127.0.0.1: native TCP 1910N, HTTP 1810N,
# interserver 1920N. ZooKeeper listens on 12181. Everything lives under
# $GPUPRICE_CLUSTER_DIR (default ${TMPDIR:-/tmp}/gpuprice-clickhouse-cluster); logs are
# there too (nodeN/error.log, nodeN/server.log at GPUPRICE_CLUSTER_LOG_LEVEL, default
# warning; zookeeper/zookeeper.out). Re-running up is safe.
set -euo pipefail

DIR="${GPUPRICE_CLUSTER_DIR:-${TMPDIR:-/tmp}/gpuprice-clickhouse-cluster}"
ZK_PORT="${GPUPRICE_CLUSTER_ZK_PORT:-12181}"
CLUSTER=gpuprice
NODES=(1 2 3 4)
DDL_TIMEOUT="${GPUPRICE_CLUSTER_DDL_TIMEOUT:-60}"
BASE_CONFIG="${GPUPRICE_CLICKHOUSE_CONFIG:-/etc/clickhouse-server/config.xml}"

SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"

tcp_port() { echo $((19100 + $1)); }
http_port() { echo $((18100 + $1)); }
isp_port() { echo $((19200 + $1)); }
shard_of() { echo $((($1 + 1) / 2)); }
replica_of() { echo $((($1 + 1) % 2 + 1)); }
log() { echo "local.sh: $*" >&2; }

# alive PIDFILE: the process recorded there is running.
alive() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

query() { # query N SQL
  clickhouse-client --host 127.0.0.1 --port "$(tcp_port "$1")" -q "$2"
}

# tquery N SQL: query, given up after 10 s (a stopped server accepts the connection
# and never answers).
tquery() {
  timeout 10 clickhouse-client --host 127.0.0.1 --port "$(tcp_port "$1")" -q "$2"
}

install_missing() {
  local pkgs=()
  command -v clickhouse-server >/dev/null || pkgs+=(clickhouse-server)
  command -v clickhouse-client >/dev/null || pkgs+=(clickhouse-client)
  { [ -e /usr/share/java/zookeeper.jar ] && [ -d /etc/zookeeper/conf ] && command -v java >/dev/null; } || pkgs+=(zookeeper)
  if [ ${#pkgs[@]} -gt 0 ]; then
    log "installing ${pkgs[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >&2
  fi
}

zk_ok() {
  local r
  r=$( (exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT" && printf ruok >&3 && timeout 2 cat <&3) 2>/dev/null) || true
  [ "$r" = imok ]
}

start_zookeeper() {
  local d="$DIR/zookeeper"
  mkdir -p "$d/data"
  if alive "$d/pid"; then return; fi
  if zk_ok; then
    log "something else answers on ZooKeeper's port $ZK_PORT; set GPUPRICE_CLUSTER_ZK_PORT"
    exit 1
  fi
  cat >"$d/zoo.cfg" <<EOF
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$d/data
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,mntr
maxClientCnxns=200
# A throwaway test cluster: no fsync per transaction. On a busy machine an fsync can
# stall for seconds, and a stall past the nodes' session timeout expires their
# sessions, which ClickHouse 18.16 does not fully recover from (see broken below).
forceSync=no
EOF
  log "starting ZooKeeper on 127.0.0.1:$ZK_PORT"
  rm -f "$DIR/owner"
  if [ -n "${GPUPRICE_CLUSTER_OWNER:-}" ]; then
    echo "${GPUPRICE_CLUSTER_OWNER} $(ps -o lstart= -p "$GPUPRICE_CLUSTER_OWNER" 2>/dev/null)" >"$DIR/owner"
  fi
  (cd "$d" && exec setsid nohup java -Xms64m -Xmx256m -XX:+UseSerialGC \
    -Dzookeeper.log.dir="$d" -Dzookeeper.root.logger=INFO,CONSOLE -Dzookeeper.forceSync=no \
    -cp "/usr/share/java/*:/etc/zookeeper/conf" \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$d/zoo.cfg" >"$d/zookeeper.out" 2>&1 </dev/null &
    echo $! >"$d/pid")
  for _ in $(seq 1 120); do
    zk_ok && return
    alive "$d/pid" || break
    sleep 0.5
  done
  log "ZooKeeper did not answer; $d/zookeeper.out:"
  tail -30 "$d/zookeeper.out" >&2
  exit 1
}

# remote_servers lists the cluster: two shards of two replicas, internal_replication so
# that a Distributed insert writes one replica per shard and replication copies it.
remote_servers() {
  echo "    <remote_servers>"
  echo "        <$CLUSTER>"
  for s in 1 2; do
    echo "            <shard>"
    echo "                <internal_replication>true</internal_replication>"
    for n in "${NODES[@]}"; do
      [ "$(shard_of "$n")" = "$s" ] || continue
      echo "                <replica><host>127.0.0.1</host><port>$(tcp_port "$n")</port></replica>"
    done
    echo "            </shard>"
  done
  echo "        </$CLUSTER>"
  echo "    </remote_servers>"
}

write_node_config() {
  local n=$1 d="$DIR/node$1"
  mkdir -p "$d/config.d" "$d/users.d" "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas"
  cp "$BASE_CONFIG" "$d/config.xml"
  cp "$(dirname "$BASE_CONFIG")/users.xml" "$d/users.xml"
  # Reads and writes through a Distributed table go to the first live replica of
  # each shard (the local one first), so a client reads its own writes before
  # replication copied them to the other replica. gpuprice migrate --cluster checks it.
  cat >"$d/users.d/gpuprice.xml" <<EOF
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <load_balancing>in_order</load_balancing>
        </default>
    </profiles>
</yandex>
EOF
  cat >"$d/config.d/gpuprice.xml" <<EOF
<?xml version="1.0"?>
<!-- node $n of the local gpuprice cluster: written by deploy/clickhouse-cluster/local.sh -->
<yandex>
    <logger>
        <level>${GPUPRICE_CLUSTER_LOG_LEVEL:-warning}</level>
        <log>$d/server.log</log>
        <errorlog>$d/error.log</errorlog>
        <size>10M</size>
        <count>2</count>
    </logger>
    <tcp_port>$(tcp_port "$n")</tcp_port>
    <http_port>$(http_port "$n")</http_port>
    <interserver_http_port>$(isp_port "$n")</interserver_http_port>
    <interserver_http_host>127.0.0.1</interserver_http_host>
    <path>$d/data/</path>
    <tmp_path>$d/tmp/</tmp_path>
    <user_files_path>$d/user_files/</user_files_path>
    <format_schema_path>$d/format_schemas/</format_schema_path>
    <users_config>$d/users.xml</users_config>
    <!-- Four servers share one small machine: small caches. -->
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>33554432</uncompressed_cache_size>
    <max_concurrent_queries>50</max_concurrent_queries>
    <zookeeper>
        <node><host>127.0.0.1</host><port>$ZK_PORT</port></node>
        <!-- 30 s (ZooKeeper allows up to 20 ticks, 40 s): a node starved of CPU for
             a while on a busy machine keeps its session. A SIGKILLed node's replicas
             come back active that long after its restart. -->
        <session_timeout_ms>30000</session_timeout_ms>
    </zookeeper>
    <macros>
        <cluster>$CLUSTER</cluster>
        <shard>$(shard_of "$n")</shard>
        <replica>node$n</replica>
    </macros>
    <distributed_ddl>
        <path>/clickhouse/task_queue/ddl</path>
    </distributed_ddl>
$(remote_servers)
</yandex>
EOF
}

node_ok() { query "$1" 'SELECT 1' >/dev/null 2>&1; }

start_node() {
  local n=$1 d="$DIR/node$1"
  if alive "$d/pid" && node_ok "$n"; then return; fi
  if ! alive "$d/pid" && node_ok "$n"; then
    log "something else answers on node $n's port $(tcp_port "$n")"
    exit 1
  fi
  write_node_config "$n"
  # Where this start's lines of error.log begin (broken reads from there).
  wc -l <"$d/error.log" 2>/dev/null >"$d/log_start" || echo 0 >"$d/log_start"
  log "starting node $n (shard $(shard_of "$n"), replica $(replica_of "$n")) on 127.0.0.1:$(tcp_port "$n")"
  (cd "$d" && exec setsid nohup clickhouse-server --config-file="$d/config.xml" >"$d/stdout.log" 2>&1 </dev/null &
    echo $! >"$d/pid")
}

wait_node() {
  local n=$1 d="$DIR/node$1"
  for _ in $(seq 1 240); do
    # Answers, and reaches ZooKeeper (ON CLUSTER DDL and replication need it).
    if [ "$(query "$n" "SELECT count() > 0 FROM system.zookeeper WHERE path = '/'" 2>/dev/null)" = 1 ]; then
      return
    fi
    alive "$d/pid" || break
    sleep 0.5
  done
  log "node $n did not answer; $d/error.log:"
  tail -30 "$d/error.log" "$d/stdout.log" >&2 2>/dev/null || true
  exit 1
}

# broken N: print the first line of node N's error.log, since its last start, that
# shows the node lost for good what ON CLUSTER DDL needs, and exit 0; exit 1 when none
# does. ClickHouse 18.16, once a ZooKeeper session of it expired ("ZooKeeper session
# has expired. Switching to a new session."), keeps each replicated table's ALTER
# thread on the dead session: the node never applies a replicated ALTER again, so each
# one waits replication_alter_columns_timeout (60 s) for it, and the DDL fails on the
# shard's other replica ("Cannot enqueue replicated DDL query"). And on an error it
# does not expect while it runs the DDL queue, it ends its DDL worker thread
# ("DDLWorker: Unexpected error, will terminate: …"; the source's other variants end
# in "Terminating"): the node still answers queries but never runs an ON CLUSTER DDL
# again, and every later one waits for it. A restart cures both.
broken() {
  local d="$DIR/node$1" from
  [ -s "$d/error.log" ] || return 1
  from=$(cat "$d/log_start" 2>/dev/null || echo 0)
  awk -v from="$from" 'NR > from && /DDLWorker: Unexpected.*([Ww]ill terminate|Terminating)|ZooKeeper session has expired/ {
    print substr($0, 1, 400); found = 1; exit } END { exit !found }' "$d/error.log"
}

# heal: restart each node broken (above), one heal at a time (a lock in the state
# directory), and append what it did to $DIR/heal.log. Restarted, the node runs the
# DDL queue from where it stopped. Exit non-zero when a restarted node does not answer,
# or its replicated tables stay read-only.
heal() {
  [ -d "$DIR" ] || return 0
  exec 9>"$DIR/heal.lock"
  flock 9
  local n line todo=()
  for n in "${NODES[@]}"; do
    alive "$DIR/node$n/pid" && broken "$n" >/dev/null && todo+=("$n")
  done
  [ ${#todo[@]} -gt 0 ] || return 0
  # Not while ZooKeeper does not answer: a node stops slowly then, and would come
  # back as broken.
  zk_ok || return 0
  for n in "${todo[@]}"; do
    restart_node "$n" "$(broken "$n")"
  done
}

# restart_node N WHY: restart node N (stop, start, wait until it answers and its
# replicated tables are writable), noting why in heal.log. Callers hold heal.lock.
restart_node() {
  echo "$(date -u +%FT%TZ) node $1 restarted: $2" >>"$DIR/heal.log"
  log "node $1: restarting it: $2"
  stop_pid "$DIR/node$1/pid" "node $1"
  start_node "$1"
  wait_node "$1"
  wait_writable "$1"
}

# wait_writable N: wait until none of node N's replicated tables is read-only (after
# a restart each waits for ZooKeeper, and for the old session of a killed node to
# expire), at most two minutes.
wait_writable() {
  for _ in $(seq 1 240); do
    [ "$(query "$1" "SELECT count() FROM system.replicas WHERE is_readonly" 2>/dev/null)" = 0 ] && return
    sleep 0.5
  done
  log "node $1: replicated tables still read-only two minutes after its start"
  return 1
}

# check: see the usage above. A node that answers but does not finish the DDL is
# usually stuck on an earlier task of the queue (a DROP waiting for a query, a lost
# ZooKeeper session): its running DDL is shown.
check() {
  local n bad=0 port
  for n in "${NODES[@]}"; do
    port=$(tcp_port "$n")
    if ! tquery "$n" 'SELECT 1' >/dev/null 2>&1; then
      log "node $n (127.0.0.1:$port) does not answer within 10 s; see $DIR/node$n/error.log"
      bad=1
    elif [ "$(tquery "$n" "SELECT count() > 0 FROM system.zookeeper WHERE path = '/'" 2>/dev/null)" != 1 ]; then
      log "node $n (127.0.0.1:$port) does not reach ZooKeeper on 127.0.0.1:$ZK_PORT; see $DIR/node$n/error.log"
      bad=1
    fi
  done
  [ "$bad" = 0 ] || return 1
  local out task finished line
  if out=$(timeout $((DDL_TIMEOUT + 30)) clickhouse-client --host 127.0.0.1 --port "$(tcp_port 1)" \
    --distributed_ddl_task_timeout "$DDL_TIMEOUT" -q "CREATE DATABASE IF NOT EXISTS $CLUSTER ON CLUSTER $CLUSTER" 2>&1); then
    return 0
  fi
  task=$(grep -o '/clickhouse/task_queue/ddl/query-[0-9]*' <<<"$out" | head -1 || true)
  if [ -n "$task" ]; then
    finished=$(tquery 1 "SELECT name FROM system.zookeeper WHERE path = '$task/finished'" 2>/dev/null || true)
    for n in "${NODES[@]}"; do
      grep -qx "127%2E0%2E0%2E1:$(tcp_port "$n")" <<<"$finished" && continue
      if line=$(broken "$n"); then
        log "node $n (127.0.0.1:$(tcp_port "$n")) did not finish an ON CLUSTER DDL ($task); its log says: $line"
        log "restart the node: $0 heal"
        continue
      fi
      log "node $n (127.0.0.1:$(tcp_port "$n")) did not finish an ON CLUSTER DDL ($task) within ${DDL_TIMEOUT}s; it is running:"
      tquery "$n" "SELECT concat('  ', toString(round(elapsed)), ' s: ', substring(replaceAll(query, '\n', ' '), 1, 200))
        FROM system.processes WHERE query LIKE '/* ddl_entry=%'" >&2 2>/dev/null || true
    done
  fi
  log "the cluster is not healthy: $(grep Exception <<<"$out" | tail -1 || echo "$out")"
  log "restart it: $0 down && $0 up"
  return 1
}

# owner_gone: the cluster has an owner (GPUPRICE_CLUSTER_OWNER of up) that no longer
# runs (its pid is gone, or is another process now).
owner_gone() {
  [ -s "$DIR/owner" ] || return 1
  local pid started
  read -r pid started <"$DIR/owner"
  [ "$(ps -o lstart= -p "$pid" 2>/dev/null || true)" != "$started" ]
}

dsns() {
  for n in "${NODES[@]}"; do
    echo "clickhouse://127.0.0.1:$(tcp_port "$n")/$CLUSTER?cluster=$CLUSTER"
  done
}

stop_pid() { # stop_pid PIDFILE NAME
  local f=$1
  alive "$f" || { rm -f "$f"; return; }
  local pid
  pid=$(cat "$f")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$f"; return; }
    sleep 0.5
  done
  log "$2 did not stop within 30s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$f"
}

node_arg() {
  case "${1:-}" in
    1 | 2 | 3 | 4) ;;
    *) log "node must be 1, 2, 3 or 4, got '${1:-}'"; exit 2 ;;
  esac
}

case "${1:-}" in
  up)
    install_missing
    mkdir -p "$DIR"
    start_zookeeper
    for n in "${NODES[@]}"; do start_node "$n"; done
    for n in "${NODES[@]}"; do wait_node "$n"; done
    # Its DDL also creates the database the printed DSNs name (gpuprice migrate
    # creates the tables).
    check || exit 1
    dsns
    ;;
  down)
    for n in "${NODES[@]}"; do stop_pid "$DIR/node$n/pid" "node $n"; done
    stop_pid "$DIR/zookeeper/pid" ZooKeeper
    rm -rf "$DIR"
    ;;
  dsns) dsns ;;
  status)
    alive "$DIR/zookeeper/pid" || exit 1
    for n in "${NODES[@]}"; do alive "$DIR/node$n/pid" || exit 1; done
    ;;
  check) check ;;
  heal) heal ;;
  broken)
    node_arg "${2:-}"
    broken "$2"
    ;;
  stale)
    alive "$DIR/zookeeper/pid" && owner_gone
    ;;
  pause-zookeeper)
    # Stop ZooKeeper (SIGSTOP) for N seconds, then let it go on: longer than the
    # nodes' session timeout (30 s), it expires their sessions.
    alive "$DIR/zookeeper/pid" || { log "ZooKeeper is not running"; exit 1; }
    [[ "${2:-}" =~ ^[0-9]+$ ]] || { log "pause-zookeeper takes a number of seconds, got '${2:-}'"; exit 2; }
    zpid=$(cat "$DIR/zookeeper/pid")
    kill -STOP "$zpid"
    trap 'kill -CONT "$zpid"' EXIT
    sleep "$2"
    ;;
  zookeeper) echo "127.0.0.1:$ZK_PORT" ;;
  report)
    # What happened to the cluster: each node's expired ZooKeeper sessions and ended
    # DDL workers (all its starts), and the heals.
    for n in "${NODES[@]}"; do
      e="$DIR/node$n/error.log"
      [ -s "$e" ] || continue
      echo "node $n: $(grep -ac 'ZooKeeper session has expired' "$e") log lines of an expired ZooKeeper session (one a replicated table), $(grep -acE 'DDLWorker: Unexpected.*([Ww]ill terminate|Terminating)' "$e") of an ended DDL worker"
    done
    [ -s "$DIR/heal.log" ] && cat "$DIR/heal.log"
    true
    ;;
  kill)
    node_arg "${2:-}"
    alive "$DIR/node$2/pid" || { log "node $2 is not running"; exit 1; }
    pid=$(cat "$DIR/node$2/pid")
    kill -KILL "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$DIR/node$2/pid"
    ;;
  start)
    node_arg "${2:-}"
    start_node "$2"
    wait_node "$2"
    ;;
  restart)
    node_arg "${2:-}"
    alive "$DIR/node$2/pid" || { log "node $2 is not running"; exit 1; }
    exec 9>"$DIR/heal.lock"
    flock 9
    restart_node "$2" "${3:-asked}"
    ;;
  *)
    sed -n '2,41p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac

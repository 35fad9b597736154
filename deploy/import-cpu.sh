#!/usr/bin/env bash
# import-cpu.sh [BASE_REV] [ROUNDS]: `import csv` into the local clickhouse-server by
# this checkout's gpuprice against BASE_REV's (default HEAD~1), ROUNDS alternating
# rounds (default 2), of the two files BENCHMARKS.md measures (deploy/gencsv,
# synthetic): 1,000 series × 2,000 steps of 5 minutes (2M rows) and 112 series × 730
# daily steps (two years, as the report tests import). Each line gives the wall
# time, gpuprice's CPU and the server's: the clickhouse-server process's
# utime+stime from /proc before the import and 10 s after it (its merges of the
# import's parts). Each import goes into a fresh database, gpuprice_importcpu,
# dropped first and left.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-HEAD~1} rounds=${2:-2}
dir=$(mktemp -d)
trap 'git worktree remove --force "$dir/base-src" 2>/dev/null || true; rm -rf "$dir"' EXIT
go build -o "$dir/gpuprice-head" ./cmd/gpuprice
git worktree add -q --detach "$dir/base-src" "$base"
(cd "$dir/base-src" && go build -o "$dir/gpuprice-base" ./cmd/gpuprice)
go run ./deploy/gencsv -series 1000 -steps 2000 -step 5m -seed 1 -out "$dir/2m.csv" >/dev/null
go run ./deploy/gencsv -series 112 -steps 730 -step 24h -seed 14 -out "$dir/2y.csv" >/dev/null
echo "data_dir: $dir/data" >"$dir/gpuprice.yaml"
db=gpuprice_importcpu
pid=$(pgrep -f clickhouse-server | head -1)
tick=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# one BIN FILE LABEL: one import, one line.
one() {
  local bin=$1 file=$2 label=$3 s0 s1 load wall user sys
  clickhouse-client -q "DROP DATABASE IF EXISTS $db"
  "$bin" --config "$dir/gpuprice.yaml" --store "clickhouse://localhost:9000/$db" --log-level error migrate >/dev/null
  s0=$(cpu)
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -o "$dir/time" -f "%e %U %S" "$bin" --config "$dir/gpuprice.yaml" \
    --store "clickhouse://localhost:9000/$db" --log-level error import csv "$file" >/dev/null
  sleep 10
  s1=$(cpu)
  read -r wall user sys <"$dir/time"
  echo "$label load=$load wall=${wall}s gpuprice_cpu=$(echo "$user + $sys" | bc)s" \
    "server_cpu=$(echo "scale=2; ($s1 - $s0) / $tick" | bc)s"
}
for round in $(seq 1 "$rounds"); do
  for f in 2y 2m; do
    one "$dir/gpuprice-base" "$dir/$f.csv" "round $round · $f · $(git rev-parse --short "$base")"
    one "$dir/gpuprice-head" "$dir/$f.csv" "round $round · $f · $(git rev-parse --short HEAD)"
  done
done

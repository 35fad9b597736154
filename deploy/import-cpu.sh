#!/usr/bin/env bash
# import-cpu.sh GPUPRICE FILE [LABEL]: one `import csv` of FILE into a fresh database
# of the local clickhouse-server (GPUPRICE is a gpuprice binary, e.g. one built from
# another commit), printing its wall time, gpuprice's CPU and the server's: the
# server process's utime+stime from /proc before the import and 10 s after it (its
# merges of the import's parts). BENCHMARKS.md compares commits with it, in
# alternating rounds. The database (gpuprice_importcpu) is dropped first and left.
set -euo pipefail
bin=$1 file=$2 label=${3:-$1}
db=gpuprice_importcpu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "data_dir: $dir" >"$dir/gpuprice.yaml"
clickhouse-client -q "DROP DATABASE IF EXISTS $db"
"$bin" --config "$dir/gpuprice.yaml" --store "clickhouse://localhost:9000/$db" --log-level error migrate >/dev/null
pid=$(pgrep -f clickhouse-server | head -1)
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
s0=$(cpu)
load=$(cut -d' ' -f1 /proc/loadavg)
/usr/bin/time -o "$dir/time" -f "%e %U %S" "$bin" --config "$dir/gpuprice.yaml" \
  --store "clickhouse://localhost:9000/$db" --log-level error import csv "$file" >/dev/null
sleep 10
s1=$(cpu)
read -r wall user sys <"$dir/time"
tick=$(getconf CLK_TCK)
echo "$label load=$load wall=${wall}s gpuprice_cpu=$(echo "$user + $sys" | bc)s server_cpu=$(echo "scale=2; ($s1 - $s0) / $tick" | bc)s"

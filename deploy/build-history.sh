#!/usr/bin/env bash
# Builds examples/history, the real GPU price history the offline quick start loads,
# from a clone of the public SkyPilot catalog (its git history: every commit that
# changed catalogs/v<N>/<cloud>/vms.csv is a snapshot of that cloud's prices).
#
#   git clone https://github.com/skypilot-org/skypilot-catalog ~/skypilot-catalog
#   deploy/build-history.sh ~/skypilot-catalog            # writes examples/history/
#
# It runs `gpuprice import skypilot-catalog` into a temporary DuckDB store with the
# sampling below, exports the rows to Parquet and writes, beside it, commits.csv (every
# snapshot kept: commit, commit time, path, rows) and PROVENANCE.md (repository,
# paths, commit range, licence, what was kept, file hash). The same clone and the
# same settings give the same rows: sampling picks, per file, the first commit of
# each period counted from 1970-01-01 UTC. Settings (environment):
#   SINCE, UNTIL  commit times kept (dates; default: the year before the clone's
#                 last commit, UNTIL excluded)
#   EVERY         one snapshot per file per period (default 3d)
#   CLOUDS        cloud directories (default aws,gcp,lambda,azure,oci,runpod,nebius)
#   REGIONS       regions kept, of any cloud (default below; "" keeps all)
#   VERSIONS      catalog versions (default: all)
#   GPUPRICE      the command to run (default: go run ./cmd/gpuprice)
#   OUT           output directory (default examples/history)
set -euo pipefail
cd "$(dirname "$0")/.."

CLONE="${1:?usage: deploy/build-history.sh CATALOG_CLONE}"
CLONE="$(cd "$CLONE" && pwd)"
OUT="${OUT:-examples/history}"
EVERY="${EVERY:-3d}"
CLOUDS="${CLOUDS:-aws,gcp,lambda,azure,oci,runpod,nebius}"
REGIONS="${REGIONS-us-east-1,us-west-2,eu-west-1,us-central1,us-east1,europe-west4,eastus,westus2,us-ashburn-1,us-south-1,us-midwest-1,us-east-3}"
VERSIONS="${VERSIONS:-}"
read -r -a GP <<<"${GPUPRICE:-go run ./cmd/gpuprice}"

git -C "$CLONE" rev-parse --git-dir >/dev/null
HEAD="$(git -C "$CLONE" rev-parse HEAD)"
HEAD_AT="$(git -C "$CLONE" log -1 --format=%cI HEAD)"
UNTIL="${UNTIL:-$(date -u -d "${HEAD_AT} + 1 day" +%F)}"
SINCE="${SINCE:-$(date -u -d "${UNTIL} - 1 year" +%F)}"
ORIGIN="$(git -C "$CLONE" remote get-url origin 2>/dev/null || echo "$CLONE")"
LICENSE_LINE="$(git -C "$CLONE" show HEAD:LICENSE 2>/dev/null | grep -m1 -E 'Apache License|MIT License|License' | sed 's/^ *//' || true)"
if git -C "$CLONE" show HEAD:LICENSE 2>/dev/null | grep -q 'Version 2.0'; then
  LICENSE_LINE="Apache License 2.0 (LICENSE at ${HEAD:0:12})"
fi
[ -n "$LICENSE_LINE" ] || { echo "build-history: no LICENSE at HEAD of $CLONE" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$OUT"
store="duckdb://$tmp/history.duckdb"
args=(import skypilot-catalog "$CLONE" --clouds "$CLOUDS" --since "$SINCE" --until "$UNTIL" --every "$EVERY"
  --manifest "$tmp/commits.csv")
[ -z "$REGIONS" ] || args+=(--regions "$REGIONS")
[ -z "$VERSIONS" ] || args+=(--versions "$VERSIONS")
# The import's checkpoint goes to the temporary data directory, not the user's.
GPUPRICE_DATA_DIR="$tmp" "${GP[@]}" --store "$store" "${args[@]}" || {
  rc=$?
  # 3: some rows were quarantined (the run is "degraded"); the others are stored.
  [ "$rc" -eq 3 ] || exit "$rc"
}
GPUPRICE_DATA_DIR="$tmp" "${GP[@]}" --store "$store" export --format parquet --out "$OUT/skypilot-catalog.parquet"
cp "$tmp/commits.csv" "$OUT/commits.csv"

snapshots=$(($(wc -l <"$OUT/commits.csv") - 1))
[ "$snapshots" -gt 0 ] || { echo "build-history: no snapshot between $SINCE and $UNTIL" >&2; exit 1; }
first="$(sed -n 2p "$OUT/commits.csv")"
last="$(tail -n 1 "$OUT/commits.csv")"
rows="$(awk -F, 'NR>1 {n += $6} END {print n}' "$OUT/commits.csv")"
clouds_kept="$(awk -F, 'NR>1 {print $4}' "$OUT/commits.csv" | sort | uniq -c | awk '{printf "%s%s: %s snapshots", sep, $2, $1; sep=", "}')"
paths="$(awk -F, 'NR>1 {print $3}' "$OUT/commits.csv" | sort -u | sed 's/^/- `/; s/$/`/')"
sum="$(sha256sum "$OUT/skypilot-catalog.parquet" | cut -d' ' -f1)"
size="$(wc -c <"$OUT/skypilot-catalog.parquet")"

cat >"$OUT/PROVENANCE.md" <<EOF
# Provenance of examples/history

Written by \`deploy/build-history.sh\`; do not edit by hand.

| | |
|---|---|
| Source repository | $ORIGIN (a clone at \`$HEAD\`, last commit $HEAD_AT) |
| Licence | $LICENSE_LINE |
| Commit range kept | \`${first%%,*}\` ($(echo "$first" | cut -d, -f2)) to \`${last%%,*}\` ($(echo "$last" | cut -d, -f2)) |
| Window | commits from $SINCE to $UNTIL (excluded), one snapshot per file every $EVERY |
| Snapshots | $snapshots ($clouds_kept), each listed in \`commits.csv\` |
| Rows | $rows read (GPU instance types only; on_demand from \`Price\`, spot from \`SpotPrice\`) |
| Regions kept | ${REGIONS:-all} |
| File | \`skypilot-catalog.parquet\`, $size bytes, sha256 \`$sum\` |

Paths read:

$paths

Every row keeps its real observation time (observed_at = effective_at = the commit's
committer time), source_kind \`import\` and source_url
\`skypilot-catalog:<commit>:<path>\`: the commit it was read from. Rows without a GPU
(CPU instance types) and empty prices were left out; the gates of \`gpuprice\`
(quarantine) applied as on collected rows.

Rebuild: \`SINCE=$SINCE UNTIL=$UNTIL EVERY=$EVERY CLOUDS=$CLOUDS REGIONS=$REGIONS deploy/build-history.sh CLONE\`
with a clone of the repository above that holds \`${last%%,*}\`.
EOF
echo "build-history: $snapshots snapshots, $rows rows, $size bytes -> $OUT"

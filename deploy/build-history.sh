#!/usr/bin/env bash
# Builds examples/history, the real GPU price history the offline quick start can
# load, from clones of public repositories whose git history records prices:
#
#   --skypilot CLONE        https://github.com/skypilot-org/skypilot-catalog
#                           (catalogs/v<N>/<cloud>/vms.csv: AWS, GCP, Lambda, Azure …)
#   --gcp-calculator CLONE  https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator
#                           (pricing.yml: GCP machine types, about weekly)
#
#   git clone https://github.com/skypilot-org/skypilot-catalog ~/skypilot-catalog
#   deploy/build-history.sh --skypilot ~/skypilot-catalog
#
# For each source it runs `gpuprice import <source>` into a temporary DuckDB store
# (a window of commit times, one snapshot per file per period, a few regions),
# exports the rows to <source>.parquet and writes <source>.commits.csv (every
# snapshot kept: commit, commit time, path, rows); then PROVENANCE.md (per source:
# repository, clone HEAD, licence, commit range, settings, paths, file hash, the
# command that rebuilds it). The same clone and settings give the same rows:
# sampling keeps, per file, the first commit of each period counted from
# 1970-01-01 UTC. Settings (environment):
#   SINCE, UNTIL  commit times kept (dates; default: the year before the clone's
#                 last commit, UNTIL excluded)
#   EVERY         one snapshot per file per period (default 3d; the GCP file
#                 changes about weekly, so it keeps each of its commits)
#   CLOUDS        SkyPilot cloud directories (default aws,gcp,lambda,azure,oci,runpod,nebius)
#   REGIONS       regions kept, of any cloud (default below; "" keeps all)
#   GPUPRICE      the command to run (default: go run ./cmd/gpuprice)
#   OUT           output directory (default examples/history)
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  echo "usage: deploy/build-history.sh [--skypilot CLONE] [--gcp-calculator CLONE]" >&2
  exit 2
}
SKYPILOT="" GCPCALC=""
while [ $# -gt 0 ]; do
  case "$1" in
    --skypilot) SKYPILOT="$(cd "${2:?--skypilot CLONE}" && pwd)"; shift 2 ;;
    --gcp-calculator) GCPCALC="$(cd "${2:?--gcp-calculator CLONE}" && pwd)"; shift 2 ;;
    *) usage ;;
  esac
done
[ -n "$SKYPILOT$GCPCALC" ] || usage

OUT="${OUT:-examples/history}"
EVERY="${EVERY:-3d}"
CLOUDS="${CLOUDS:-aws,gcp,lambda,azure,oci,runpod,nebius}"
DEFAULT_REGIONS="us-east-1,us-west-2,eu-west-1,us-central1,us-east1,europe-west4,asia-southeast1"
DEFAULT_REGIONS+=",eastus,westus2,us-ashburn-1,us-south-1,us-midwest-1,us-east-3"
REGIONS="${REGIONS-$DEFAULT_REGIONS}"
read -r -a GP <<<"${GPUPRICE:-go run ./cmd/gpuprice}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$OUT"

# build NAME FLAG CLONE IMPORT-ARGS…: one source into $OUT/NAME.parquet and
# $OUT/NAME.commits.csv, and its section of PROVENANCE.md into $tmp/NAME.md.
build() {
  local name="$1" flag="$2" clone="$3"
  shift 3
  git -C "$clone" rev-parse --git-dir >/dev/null
  local head head_at until since origin licence
  head="$(git -C "$clone" rev-parse HEAD)"
  head_at="$(git -C "$clone" log -1 --format=%cI HEAD)"
  until="${UNTIL:-$(date -u -d "${head_at} + 1 day" +%F)}"
  since="${SINCE:-$(date -u -d "${until} - 1 year" +%F)}"
  origin="$(git -C "$clone" remote get-url origin 2>/dev/null || echo "$clone")"
  if git -C "$clone" show HEAD:LICENSE 2>/dev/null | grep -q 'Apache License' &&
    git -C "$clone" show HEAD:LICENSE | grep -q 'Version 2.0'; then
    licence="Apache License 2.0 (LICENSE at ${head:0:12})"
  else
    licence="$(git -C "$clone" show HEAD:LICENSE 2>/dev/null | grep -m1 -i 'license' | sed 's/^ *//' || true)"
    [ -n "$licence" ] || { echo "build-history: no LICENSE at HEAD of $clone" >&2; exit 1; }
  fi
  local store="duckdb://$tmp/$name.duckdb"
  local args=("$@" "$clone" --since "$since" --until "$until" --every "$EVERY" --manifest "$tmp/$name.commits.csv")
  [ -z "$REGIONS" ] || args+=(--regions "$REGIONS")
  # The checkpoint of an import goes to the temporary data directory. Exit 3: some
  # rows were quarantined (the run is "degraded"); the others are stored.
  GPUPRICE_DATA_DIR="$tmp" "${GP[@]}" --store "$store" "${args[@]}" || { rc=$?; [ "$rc" -eq 3 ] || exit "$rc"; }
  GPUPRICE_DATA_DIR="$tmp" "${GP[@]}" --store "$store" export --format parquet --out "$OUT/$name.parquet" \
    2>"$tmp/$name.export.log"
  cp "$tmp/$name.commits.csv" "$OUT/$name.commits.csv"

  local m="$OUT/$name.commits.csv" snapshots first last rows kept per paths sum size
  snapshots=$(($(wc -l <"$m") - 1))
  [ "$snapshots" -gt 0 ] || { echo "build-history: $name: no snapshot from $since to $until" >&2; exit 1; }
  first="$(sed -n 2p "$m")"
  last="$(tail -n 1 "$m")"
  rows="$(awk -F, 'NR>1 {n += $6} END {print n}' "$m")"
  kept="$(sed -n 's/.*msg=exported rows=\([0-9]*\).*/\1/p' "$tmp/$name.export.log")"
  per="$(awk -F, 'NR>1 {print $4}' "$m" | sort | uniq -c | awk '{printf "%s%s: %s", sep, $2, $1; sep=", "}')"
  paths="$(awk -F, 'NR>1 {print $3}' "$m" | sort -u | sed 's/^/`/; s/$/`/' | paste -sd, - | sed 's/,/, /g')"
  sum="$(sha256sum "$OUT/$name.parquet" | cut -d' ' -f1)"
  size="$(wc -c <"$OUT/$name.parquet")"
  cat >"$tmp/$name.md" <<EOF
## $name

| | |
|---|---|
| Source repository | $origin (a clone at \`$head\`, last commit $head_at) |
| Licence | $licence |
| Paths read | $paths |
| Commit range kept | \`${first%%,*}\` ($(cut -d, -f2 <<<"$first")) to \`${last%%,*}\` ($(cut -d, -f2 <<<"$last")) |
| Window | commits from $since to $until (excluded), per file the first of each $EVERY period |
| Snapshots | $snapshots ($per), each listed in \`$name.commits.csv\` |
| Rows | $rows read, ${kept:-?} stored and exported (the others quarantined by the gates) |
| Regions kept | ${REGIONS:-all} |
| File | \`$name.parquet\`, $size bytes, sha256 \`$sum\` |

Rebuild with a clone that holds \`${last%%,*}\`:
\`SINCE=$since UNTIL=$until EVERY=$EVERY CLOUDS=$CLOUDS REGIONS=$REGIONS deploy/build-history.sh --$flag CLONE\`

EOF
  echo "build-history: $name: $snapshots snapshots, ${kept:-?} rows, $size bytes -> $OUT/$name.parquet"
}

if [ -n "$SKYPILOT" ]; then
  build skypilot-catalog skypilot "$SKYPILOT" import skypilot-catalog --clouds "$CLOUDS"
fi
if [ -n "$GCPCALC" ]; then
  build gcp-pricing-calculator gcp-calculator "$GCPCALC" import gcp-pricing-calculator
fi

{
  cat <<'EOF'
# Provenance of examples/history

Written by `deploy/build-history.sh`; do not edit by hand. Every row keeps its real
observation time (observed_at = effective_at = the committer time of the commit it
was read from), source_kind `import` and a source_url naming that commit
(`skypilot-catalog:<commit>:<path>`, `gcp-pricing-calculator:<commit>:pricing.yml`;
after `gpuprice import parquet` it is `attrs.original_source_url`). Only GPU
instance types are kept, on_demand and spot; prices are USD per instance-hour as the
file published them. Nothing is constructed or illustrative.

EOF
  for f in "$tmp"/skypilot-catalog.md "$tmp"/gcp-pricing-calculator.md; do
    [ -f "$f" ] && cat "$f"
  done
  # A source not rebuilt this time keeps its section of the previous provenance.
  for name in skypilot-catalog gcp-pricing-calculator; do
    if [ ! -f "$tmp/$name.md" ] && [ -f "$OUT/PROVENANCE.md" ]; then
      awk -v h="## $name" '$0 == h {f=1} /^## / && $0 != h {f=0} f' "$OUT/PROVENANCE.md"
    fi
  done
} >"$tmp/PROVENANCE.md"
mv "$tmp/PROVENANCE.md" "$OUT/PROVENANCE.md"

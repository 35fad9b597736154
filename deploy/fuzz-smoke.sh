#!/usr/bin/env bash
# fuzz-smoke.sh: every fuzz target of the module, briefly (FUZZTIME, default 3s), two
# at a time (FUZZJOBS) so one target's instrumented build overlaps another's run.
#
# A real finding writes "Failing input written to testdata/fuzz/…". Go's fuzzer can
# also stop with a bare "context deadline exceeded" when -fuzztime ends while a worker
# is busy (no input at fault): that one is retried, twice at most.
set -uo pipefail
cd "$(dirname "$0")/.."

# fuzz_one PKG TARGET: run one target; print its last line, or all of it on failure.
fuzz_one() {
  local pkg=$1 target=$2 out
  for attempt in 1 2 3; do
    if out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "${FUZZTIME:-3s}" -parallel 1 "$pkg" 2>&1); then
      echo "$target: $(echo "$out" | tail -1)"
      return 0
    fi
    echo "$out"
    if echo "$out" | grep -q 'Failing input written' || [ "$attempt" = 3 ] ||
      ! echo "$out" | grep -q 'context deadline exceeded'; then
      echo "FAIL: $target in $pkg"
      return 1
    fi
    echo "(fuzzer stopped on its own deadline, not on an input: retrying $target)"
  done
}
export -f fuzz_one

for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "$pkg $target"
  done
done | xargs -P "${FUZZJOBS:-2}" -n 2 bash -c 'fuzz_one "$@"' _

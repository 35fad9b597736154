#!/usr/bin/env bash
# Installs libchdb.so, current ClickHouse's engine as a library (chDB), for the
# chdb:// store and the tests that run every ClickHouse check on it. It takes the
# pinned npm package, verifies the tarball's SHA-256, and keeps the library in
# ${XDG_CACHE_HOME:-~/.cache}/gpuprice/chdb/VERSION/ (where gpuprice looks for it;
# CHDB_LIB_PATH overrides). Safe to re-run: a verified install is kept. Prints the
# library's path. Needs npm (Debian: apt-get install npm) and about 750 MB of disk.
set -euo pipefail
VERSION=26.7.3-stable.1
PACKAGE=@chdb/lib-linux-x64-gnu
SHA256=c0d32b129e988f2b9a9a31c9141aecf5e1e2453f9a079efc4d36ab8e3f92b2ad  # embedded.TarballSHA256
dir="${XDG_CACHE_HOME:-$HOME/.cache}/gpuprice/chdb/$VERSION"
if [ -f "$dir/libchdb.so" ] && [ "$(cat "$dir/.verified" 2>/dev/null)" = "$SHA256" ]; then
  echo "$dir/libchdb.so"; exit 0
fi
command -v npm >/dev/null || { echo "install.sh: npm is needed to fetch $PACKAGE@$VERSION (apt-get install npm)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
( cd "$work" && npm pack --silent "$PACKAGE@$VERSION" >/dev/null )
tarball=$(ls "$work"/*.tgz)
got=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
  echo "install.sh: $PACKAGE@$VERSION has SHA-256 $got, expected $SHA256: not installed" >&2; exit 1
fi
tar -xzf "$tarball" -C "$work" package/libchdb.so
mkdir -p "$dir"
mv "$work/package/libchdb.so" "$dir/libchdb.so.tmp" && mv "$dir/libchdb.so.tmp" "$dir/libchdb.so"
echo "$SHA256" > "$dir/.verified"
echo "$dir/libchdb.so"

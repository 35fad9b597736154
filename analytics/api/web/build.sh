#!/usr/bin/env bash
# Rebuilds the web app bundle in dist/ from src/ with the versions pinned in
# package-lock.json (esbuild and uPlot from npm). Commit dist/ afterwards: the Go
# binary embeds it, so building gpuprice needs no Node.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
npm run build

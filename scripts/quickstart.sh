#!/usr/bin/env bash
# The first README command: install what is missing, build, and run `topofit serve` on its embedded
# demo cluster (arguments go to `topofit serve`, e.g. --listen 127.0.0.1:9999).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
BIN=${BUILD_DIR:-build}/extender/cli/topofit
"$BIN" --version
exec "$BIN" serve "$@"

#!/usr/bin/env bash
# The first README command: install what is missing, build, and run topofit on its embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
BIN=${BUILD_DIR:-build}/extender/cli/topofit
"$BIN" --version
if "$BIN" serve --help >/dev/null 2>&1; then
  exec "$BIN" serve "$@"
fi
exec "$BIN" topo --profile dgx1-v100

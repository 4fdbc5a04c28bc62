#!/usr/bin/env bash
# The second README command: install what is missing, build, and run every test through CTest.
# `scripts/test.sh -L unit` (or any ctest arguments) narrows the run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-deps.sh browser  # chromium, for the web view's test (test/ui/)
scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure --timeout 1800 "$@"

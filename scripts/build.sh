#!/usr/bin/env bash
# Configures (once) and builds topofit into ${BUILD_DIR:-build} with CMake and Ninja.
# Extra arguments go to the CMake configure step, e.g. scripts/build.sh -DTOPOFIT_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja "$@"
fi
cmake --build "$BUILD_DIR" -j "$(nproc)"

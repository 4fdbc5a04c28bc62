#!/usr/bin/env bash
# Runs topofit's end-to-end suite against real kube-apiserver and kube-scheduler:
# installs Go if needed (install-go.sh), builds the upstream binaries once (build.sh, cached under
# ${TOPOFIT_E2E_CACHE:-/var/cache/topofit-e2e}), then `go test` in this module.
#   test/e2e/run.sh                         # everything
#   test/e2e/run.sh -run TestSmoke          # extra arguments go to `go test`
# TOPOFIT_BINARY=path/to/topofit enables the scenarios that run the real topofit (CTest sets it);
# TOPOFIT_NODE_BINARY=path/to/topofit-node-testing (`topofit node`'s test build, with --pods-file)
# enables the node fidelity bursts that read their plans from a file (CTest sets it too).
set -euo pipefail
cd "$(dirname "$0")"
. ./env.sh
gobin=$(./install-go.sh)
export PATH="$gobin:$PATH"
unset GOROOT                 # the go found or fetched knows its own
export GOTOOLCHAIN=local     # install-go.sh chose it: no implicit toolchain switch
echo "run.sh: $(go version); cache $TOPOFIT_E2E_CACHE; TOPOFIT_BINARY=${TOPOFIT_BINARY:-<unset>};" \
  "TOPOFIT_NODE_BINARY=${TOPOFIT_NODE_BINARY:-<unset>}"
TOPOFIT_E2E_BIN_DIR=$(./build.sh)
export TOPOFIT_E2E_BIN_DIR
export TOPOFIT_E2E_DIR="$PWD"
if [ -z "${TOPOFIT_E2E_ARTIFACTS:-}" ]; then
  # One folder a run, so that runs at the same time keep apart; runs older than two days go.
  mkdir -p "$TOPOFIT_E2E_CACHE/artifacts"
  find "$TOPOFIT_E2E_CACHE/artifacts" -mindepth 1 -maxdepth 1 -type d -mtime +2 -exec rm -rf {} + || true
  TOPOFIT_E2E_ARTIFACTS=$(mktemp -d "$TOPOFIT_E2E_CACHE/artifacts/$(date +%Y%m%dT%H%M%S)-XXXX")
fi
export TOPOFIT_E2E_ARTIFACTS
mkdir -p "$TOPOFIT_E2E_ARTIFACTS"
start=$(date +%s)
set +e
# Only ./tests/...: cmd/ holds the upstream mains, which build.sh builds (go test would compile them
# again), and with one package go test streams -v output instead of holding it to the end.
go test -count=1 -timeout 50m -v ./tests/... "$@"
rc=$?
set -e
echo "run.sh: go test exited $rc after $(( $(date +%s) - start ))s; logs of each test's cluster under $TOPOFIT_E2E_ARTIFACTS"
exit $rc

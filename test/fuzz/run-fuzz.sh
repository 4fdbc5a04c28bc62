#!/usr/bin/env bash
# One short libFuzzer run as a test: run-fuzz.sh <fuzz binary> <corpus dir in the repo> <seconds>.
# test/fuzz/CMakeLists.txt runs it for each target: request_decoder_fuzz (corpus/request),
# topo_parser_fuzz (corpus/topo), http_listener_fuzz (corpus/http) and yaml_fuzz (corpus/yaml, whose
# seeds include an alias bomb, an alias inside its own anchor, a kubeconfig and a serve config).
# Every input of the corpus runs first (the regression inputs among them), then new inputs for
# <seconds>. New inputs go to a temporary directory, never into the repo; a crash fails the test and
# leaves its input in the working directory as crash-<sha1> (libFuzzer prints the path).
set -euo pipefail
bin=$1 corpus=$2 seconds=$3
new=$(mktemp -d)
trap 'rm -rf "$new"' EXIT
# -rss_limit_mb: the sanitized targets stay far below it; a leak or a runaway allocation does not.
"$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=25 -print_final_stats=1 \
  -artifact_prefix="$PWD/" "$new" "$corpus" 2>&1 | grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)'
exit "${PIPESTATUS[0]}"

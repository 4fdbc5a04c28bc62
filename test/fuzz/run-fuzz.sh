#!/usr/bin/env bash
# One short libFuzzer run as a test: run-fuzz.sh <fuzz binary> <corpus dir in the repo> <seconds>.
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

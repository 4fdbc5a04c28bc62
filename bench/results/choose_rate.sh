#!/bin/sh
# The choosing runs of docs/placement.md ("The exchange rate"): seeds 42-44, every shared openb list and
# synthetic family plus the choosing set of heldout.sh, topofit-mostallocated with all-pods.yaml for each
# candidate rate (DIR/rate-<R>/); then choose_rate.py against the other policies' runs of bench/results
# (regenerate.sh, and HELDOUT_DIR=bench/results/heldout/others `heldout.sh choosing --seeds 42-51 --policies OTHERS`).
#   bench/results/choose_rate.sh [DIR]          # default /tmp/topofit-choose
set -eu
TOPOFIT=${TOPOFIT:-build/extender/cli/topofit}
TRACES=${TRACES:-../shared/traces/openb}
DIR=${1:-/tmp/topofit-choose}
RATES=${RATES:-"0 0.25 1 4 inf"}
LISTS="default multigpu20 multigpu30 cpu050 cpu100 cpu200 gpushare40 gpuspec10 gpuspec20 gpuspec25"
FAMILIES="gpu-model multi-gpu cpu-heavy"
HERE=$(dirname "$0")
# one OUTDIR ARGS...: every shared workload and the choosing set into OUTDIR.
one() {
  out=$1
  shift
  mkdir -p "$out"
  for l in $LISTS; do
    [ -f "$out/openb-$l.json" ] || "$TOPOFIT" bench openb --nodes "$TRACES/openb_node_list_gpu_node.csv" \
      --pods "$TRACES/openb_pod_list_$l.csv" --seeds 42-44 --json "$out/openb-$l.json" "$@" > /dev/null
  done
  for f in $FAMILIES; do
    [ -f "$out/synthetic-$f.json" ] || "$TOPOFIT" bench synthetic --family "$f" --pods 3000 --seed 42 --seeds 42-44 \
      --json "$out/synthetic-$f.json" "$@" > /dev/null
  done
  HELDOUT_DIR=$out "$HERE/heldout.sh" choosing --seeds 42-44 "$@"
}
for r in $RATES; do
  echo "rate $r" >&2
  one "$DIR/rate-$r" --policies topofit-mostallocated --config "$HERE/all-pods.yaml" --interconnect-rate "$r"
done
python3 "$HERE/choose_rate.py" "$HERE" "$DIR"

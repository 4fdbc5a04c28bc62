#!/bin/sh
# The multi-GPU-heavy workloads of docs/placement.md ("The exchange rate"), split BEFORE any result
# was looked at into a choosing set (the rate is chosen on it and the shared lists) and a reporting set
# (only reported, with the rate fixed):
#   openb lists reweighted by GPU count (reweight_openb.py: every pod of 2+ GPUs written FACTOR times),
#   rw-<list>-x<FACTOR>; and synthetic families with 40-60% multi-GPU pods (--size-mix on the
#   heterogeneous families of bench/synthetic.h, their own generator seed), syn-<family>-<a>-<b>-<c>-<d>-s<seed>:
#   the size mix 1:a,2:b,4:c,8:d.
#
#   bench/results/heldout.sh choosing|reporting [extra bench args...]   # e.g. --seeds 42-44 --interconnect-rate 1
#
# Results go to $HELDOUT_DIR (default $OUT/heldout)/<workload>.json (and .txt). Run from the repository root.
set -eu
TOPOFIT=${TOPOFIT:-build/extender/cli/topofit}
TRACES=${TRACES:-../shared/traces/openb}
OUT=${OUT:-bench/results}
DIR=${HELDOUT_DIR:-$OUT/heldout}
CHOOSING="rw-default-x8 rw-gpuspec20-x8 syn-multi-gpu-50-20-20-10-s1 syn-gpu-model-50-20-20-10-s1"
REPORTING="rw-cpu100-x8 rw-gpuspec10-x16 rw-multigpu30-x4 rw-gpushare40-x16 syn-multi-gpu-60-15-15-10-s2
  syn-multi-gpu-40-20-20-20-s3 syn-gpu-model-40-20-20-20-s2"
set_name=$1
shift
case "$set_name" in
  choosing) LISTS=$CHOOSING ;;
  reporting) LISTS=$REPORTING ;;
  *) echo "usage: $0 choosing|reporting [bench args...]" >&2; exit 2 ;;
esac
mkdir -p "$DIR"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for w in $LISTS; do
  echo "$set_name: $w" >&2
  case "$w" in
    rw-*)
      base=${w#rw-}; list=${base%-x*}; factor=${base##*-x}
      python3 "$(dirname "$0")/reweight_openb.py" "$TRACES/openb_pod_list_$list.csv" "$factor" > "$TMP/$w.csv"
      "$TOPOFIT" bench openb --nodes "$TRACES/openb_node_list_gpu_node.csv" --pods "$TMP/$w.csv" \
        --json "$DIR/$w.json" "$@" > "$DIR/$w.txt" ;;
    syn-*)
      rest=${w#syn-}; seed=${rest##*-s}; rest=${rest%-s*}
      family=$(echo "$rest" | sed 's/-[0-9-]*$//'); mix=$(echo "${rest#"$family"-}" | awk -F- '{print "1:"$1",2:"$2",4:"$3",8:"$4}')
      "$TOPOFIT" bench synthetic --family "$family" --size-mix "$mix" --pods 3000 --seed "$seed" \
        --json "$DIR/$w.json" "$@" > "$DIR/$w.txt" ;;
  esac
done

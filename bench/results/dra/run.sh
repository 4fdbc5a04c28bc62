#!/bin/sh
# The DRA bench of docs/dra.md ("Bench"): every shared openb pod list and the three synthetic families,
# paper protocol, the same seeds and policies with the GPU nodes served by the device plugin
# (--dra-nodes none), all by kube-scheduler's DRA allocator (all), and a mixed cluster (half); topofit
# with bench/results/all-pods.yaml as in the placement results. JSON and the printed tables go to
# bench/results/dra/<mode>/; summarize.py folds them into the tables of docs/dra.md.
#
#   bench/results/dra/run.sh                         # everything
#   SEEDS=42-44 bench/results/dra/run.sh default     # a subset, fewer seeds
# Run from the repository root.
set -eu
TOPOFIT=${TOPOFIT:-build/extender/cli/topofit}
TRACES=${TRACES:-../shared/traces/openb}
OUT=${OUT:-bench/results/dra}
SEEDS=${SEEDS:-42-51}
MODES=${MODES:-"none all half"}
POLICIES=${POLICIES:-topofit-mostallocated,topofit,kube-default,kube-mostallocated,bestfit,fgd}
LISTS="default multigpu20 multigpu30 cpu050 cpu100 cpu200 gpushare40 gpuspec10 gpuspec20 gpuspec25"
FAMILIES="gpu-model multi-gpu cpu-heavy"
WANT="$*"
want() { [ -z "$WANT" ] && return 0; for w in $WANT; do [ "$w" = "$1" ] && return 0; done; return 1; }
for x in $LISTS $FAMILIES; do
  want "$x" || continue
  for mode in $MODES; do
    mkdir -p "$OUT/$mode"
    echo "$mode: $x (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    common="--seeds $SEEDS --policies $POLICIES --config bench/results/all-pods.yaml --dra-nodes $mode"
    case " $FAMILIES " in
      *" $x "*) "$TOPOFIT" bench synthetic --family "$x" --pods 3000 --seed 42 $common \
                  --json "$OUT/$mode/synthetic-$x.json" > "$OUT/$mode/synthetic-$x.txt" ;;
      *) "$TOPOFIT" bench openb --nodes "$TRACES/openb_node_list_gpu_node.csv" --pods "$TRACES/openb_pod_list_$x.csv" \
           $common --json "$OUT/$mode/openb-$x.json" > "$OUT/$mode/openb-$x.txt" ;;
    esac
  done
done

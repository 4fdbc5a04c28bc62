#!/bin/sh
# Regenerates the placement results of docs/placement.md with the same build for every workload: the
# openb paper protocol (10 seeds, every policy) on every shared openb pod list and the synthetic
# families, in two passes; then bench/results/summary.md (the tables of the docs) and, with gnuplot
# installed (`scripts/install-deps.sh plots`), the plots.
#   1. all-pods.yaml (the extender scores pods without GPUs too, as manifests/ deploys it): every
#      policy; bench/results/openb-<list>.*, synthetic-<family>.*.
#   2. the defaults (the extender sees GPU pods only, for clusters whose pods without GPUs do not use
#      topofit's profile): the two topofit rows beside fgd-gpu-pods(-mostallocated), FGD for GPU
#      pods with the same in-tree scores for the rest; bench/results/gpu-pods/.
# Each run's load average (1, 5, 15 min, before it starts) goes to bench/results/loadavg.txt: decision
# times are wall times, and on a shared machine their tail is mostly waiting for a core.
#
#   bench/results/regenerate.sh                       # everything
#   TOPOFIT=path/to/topofit TRACES=path/to/openb bench/results/regenerate.sh default gpuspec20
#   bench/results/regenerate.sh gpu-pods             # only the second pass (needs the first)
#   bench/results/regenerate.sh heldout              # only the multi-GPU-heavy workloads (pass 3)
#
# Run from the repository root. Arguments: a subset of pod lists / families (default: all).
set -eu
TOPOFIT=${TOPOFIT:-build/extender/cli/topofit}
TRACES=${TRACES:-../shared/traces/openb}
OUT=${OUT:-bench/results}
LISTS="default multigpu20 multigpu30 cpu050 cpu100 cpu200 gpushare40 gpuspec10 gpuspec20 gpuspec25"
FAMILIES="gpu-model multi-gpu cpu-heavy"
GPU_PODS_POLICIES="topofit-mostallocated,topofit,fgd-gpu-pods-mostallocated,fgd-gpu-pods"
PLOTS=""
command -v gnuplot >/dev/null 2>&1 && PLOTS="--plots $OUT"
want() { [ -z "$WANT" ] && return 0; for w in $WANT; do [ "$w" = "$1" ] && return 0; done; return 1; }
WANT="$*"
load() { echo "${1#/} $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/loadavg.txt"; }
# run KIND NAME DIR [ARGS...]: one bench run of an openb list or a synthetic family into DIR.
run() {
  kind=$1 name=$2 dir=$3
  shift 3
  load "${dir#"$OUT"}/$kind-$name"
  if [ "$kind" = openb ]; then
    "$TOPOFIT" bench openb --nodes "$TRACES/openb_node_list_gpu_node.csv" --pods "$TRACES/openb_pod_list_$name.csv" \
      --seeds 42-51 --json "$dir/openb-$name.json" "$@" > "$dir/openb-$name.txt"
  else
    "$TOPOFIT" bench synthetic --family "$name" --pods 3000 --seed 42 --seeds 42-51 \
      --json "$dir/synthetic-$name.json" "$@" > "$dir/synthetic-$name.txt"
  fi
}
kind_of() { case " $FAMILIES " in *" $1 "*) echo synthetic;; *) echo openb;; esac; }

mkdir -p "$OUT/gpu-pods"
[ -n "$WANT" ] || : > "$OUT/loadavg.txt"
for x in $LISTS $FAMILIES; do
  want "$x" || continue
  echo "all pods: $x" >&2
  run "$(kind_of "$x")" "$x" "$OUT" --config "$OUT/all-pods.yaml" --csv "$OUT/$(kind_of "$x")-$x.csv" $PLOTS
done
for x in $LISTS $FAMILIES; do
  want "$x" || want gpu-pods || continue
  echo "GPU pods only: $x" >&2
  run "$(kind_of "$x")" "$x" "$OUT/gpu-pods" --policies "$GPU_PODS_POLICIES"
done
# 3. the multi-GPU-heavy workloads of our own (heldout.sh, docs/placement.md "The exchange rate"): every
#    other policy into heldout/others/, deployed topofit at the default rate into heldout/, at R = .inf
#    (the rule before it) into heldout/today/.
if want heldout; then
  OTHERS="kube-default,kube-mostallocated,random,bestfit,dotprod,gpu-packing,fgd,fgd-gpu-pods,fgd-gpu-pods-mostallocated"
  for s in choosing reporting; do
    HELDOUT_DIR="$OUT/heldout/others" "$OUT/heldout.sh" "$s" --seeds 42-51 --policies "$OTHERS"
    HELDOUT_DIR="$OUT/heldout" "$OUT/heldout.sh" "$s" --seeds 42-51 --policies topofit-mostallocated --config "$OUT/all-pods.yaml"
    HELDOUT_DIR="$OUT/heldout/today" "$OUT/heldout.sh" "$s" --seeds 42-51 --policies topofit-mostallocated \
      --config "$OUT/all-pods.yaml" --interconnect-rate inf
  done
fi
python3 "$OUT/summarize.py" "$OUT" > "$OUT/summary.md"
echo "wrote $OUT/summary.md" >&2

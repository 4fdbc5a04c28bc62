#!/bin/sh
# Regenerates the shared-GPU bench tables of docs/shared-gpus.md ("Bench"): the synthetic family
# `shared` (whole, time-sliced and MIG nodes side by side), topofit beside kube-scheduler's scores with
# the NVIDIA device plugin's own choice of devices, and FGD:
#   1. the openb paper protocol: one pod list (generator seed 42), replay seeds 42-46;
#   2. time-ordered (arrivals and departures), the family's sizes: generator seeds 42, 43, 44;
#   3. time-ordered, multi-device heavy (sizes 1:40,2:20,4:20,8:20): generator seeds 42, 43, 44;
#   4. the openb default pod list, T4 and G2 nodes time-sliced (below).
# Output: bench/results/shared-<case>[-<seed>].txt. Run from the repository root.
set -eu
TOPOFIT=${TOPOFIT:-build/extender/cli/topofit}
OUT=${OUT:-bench/results}
POLICIES=topofit,topofit-mostallocated,kube-default,kube-mostallocated,fgd
bench() { nice -n 19 "$TOPOFIT" bench synthetic --family shared --policies "$POLICIES" -j 2 "$@"; }
bench --pods 3000 --seed 42 --seeds 42-46 > "$OUT/shared-paper.txt"
for s in 42 43 44; do
  bench --pods 3000 --seed "$s" --seeds "$s" --time-ordered > "$OUT/shared-timed-$s.txt"
  bench --pods 3000 --seed "$s" --seeds "$s" --time-ordered --size-mix 1:40,2:20,4:20,8:20 > "$OUT/shared-timed-multi-$s.txt"
done
# 4. The openb default pod list on the openb cluster with its T4 nodes time-sliced 4 ways and its G2 nodes
#    2 ways (`--share`): the paper protocol, replay seeds 42-44, and time-ordered, replay seeds 42-44.
T=${TRACES:-../shared/traces/openb}
openb() {
  list=$1
  shift
  nice -n 19 "$TOPOFIT" bench openb --nodes "$T/openb_node_list_gpu_node.csv" --pods "$T/openb_pod_list_$list.csv" \
    --share T4@ts4,G2@ts2 --policies "$POLICIES" -j 2 --seeds 42-44 "$@"
}
openb default > "$OUT/shared-openb-default.txt"
openb default --time-ordered > "$OUT/shared-openb-default-timed.txt"

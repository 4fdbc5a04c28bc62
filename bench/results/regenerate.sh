#!/bin/sh
# Regenerates the placement results of docs/placement.md: the openb paper protocol (10 seeds, every
# policy) on every shared openb pod list, and the synthetic families, with the same build and the
# default configuration for all of them; then bench/results/summary.md (the tables of the docs) and,
# with gnuplot installed (`scripts/install-deps.sh plots`), the plots.
#
#   bench/results/regenerate.sh                       # everything (about 10 minutes on 2 cores)
#   TOPOFIT=path/to/topofit TRACES=path/to/openb bench/results/regenerate.sh default gpuspec20
#   bench/results/regenerate.sh all-pods             # only the all-pods.yaml pass (needs the full runs)
#
# Run from the repository root. Arguments: a subset of pod lists / families (default: all).
set -eu
TOPOFIT=${TOPOFIT:-build/extender/cli/topofit}
TRACES=${TRACES:-../shared/traces/openb}
OUT=${OUT:-bench/results}
LISTS="default multigpu20 multigpu30 cpu050 cpu100 cpu200 gpushare40 gpuspec10 gpuspec20 gpuspec25"
FAMILIES="gpu-model multi-gpu cpu-heavy"
PLOTS=""
command -v gnuplot >/dev/null 2>&1 && PLOTS="--plots $OUT"
want() { [ $# -eq 0 ] && return 0; for w in $WANT; do [ "$w" = "$1" ] && return 0; done; return 1; }
WANT="$*"

for l in $LISTS; do
  [ -z "$WANT" ] || want "$l" || continue
  echo "openb $l" >&2
  "$TOPOFIT" bench openb --nodes "$TRACES/openb_node_list_gpu_node.csv" --pods "$TRACES/openb_pod_list_$l.csv" \
    --seeds 42-51 --json "$OUT/openb-$l.json" --csv "$OUT/openb-$l.csv" $PLOTS > "$OUT/openb-$l.txt"
done
for f in $FAMILIES; do
  [ -z "$WANT" ] || want "$f" || continue
  echo "synthetic $f" >&2
  "$TOPOFIT" bench synthetic --family "$f" --pods 3000 --seed 42 --seeds 42-51 \
    --json "$OUT/synthetic-$f.json" --csv "$OUT/synthetic-$f.csv" $PLOTS > "$OUT/synthetic-$f.txt"
done
# The same lists and families with the extender scoring pods without GPUs too (all-pods.yaml): the
# two topofit rows only, compared in summary.md against the full runs above.
mkdir -p "$OUT/all-pods"
for x in $LISTS $FAMILIES; do
  [ -z "$WANT" ] || want "$x" || want all-pods || continue
  case " $FAMILIES " in *" $x "*) kind=synthetic;; *) kind=openb;; esac
  echo "all-pods $x" >&2
  if [ $kind = openb ]; then
    "$TOPOFIT" bench openb --nodes "$TRACES/openb_node_list_gpu_node.csv" --pods "$TRACES/openb_pod_list_$x.csv" \
      --seeds 42-51 --policies topofit-mostallocated,topofit --config "$OUT/all-pods.yaml" \
      --json "$OUT/all-pods/openb-$x.json" > "$OUT/all-pods/openb-$x.txt"
  else
    "$TOPOFIT" bench synthetic --family "$x" --pods 3000 --seed 42 --seeds 42-51 \
      --policies topofit-mostallocated,topofit --config "$OUT/all-pods.yaml" \
      --json "$OUT/all-pods/synthetic-$x.json" > "$OUT/all-pods/synthetic-$x.txt"
  fi
done
python3 "$OUT/summarize.py" "$OUT" > "$OUT/summary.md"
echo "wrote $OUT/summary.md" >&2

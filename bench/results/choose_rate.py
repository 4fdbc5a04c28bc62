#!/usr/bin/env python3
"""Applies the written procedure of docs/placement.md ("The exchange rate") to the choosing runs and
prints the table it chose from. Usage: choose_rate.py RESULTS DIR

DIR/rate-<R>/<workload>.json: topofit-mostallocated with --interconnect-rate R, seeds 42-44 (R = inf:
today's lexicographic rule). The other policies: RESULTS/<workload>.json (the shared lists and families,
bench/results) or RESULTS/heldout/others/<workload>.json (the choosing set), 10 seeds, of which the first three
(42-44, `unallocated_gpu_pct_runs`) are used; kube-default's bandwidth is its 10-seed mean. For each candidate
and workload, three targets: unallocated GPUs at most 0.8x the best other policy's or within 0.05 points
of it; mean ring bandwidth of multi-GPU pods at least 1.3x kube-default's (workloads with multi-GPU
pods); at most 0.05 points above today's (R = inf). Every multi-GPU pod must get the best set of its
node (a candidate that misses it on any workload is out). Chosen: the fewest missed targets; ties, the
smallest summed excess over the unallocated target (points); then the larger R (closer to today)."""
import json
import math
import os
import sys

DEPLOYED = "topofit-mostallocated"


def load(path):
    with open(path) as f:
        return {p["policy"]: p for p in json.load(f)["policies"] if "error" not in p}


def base_of(results, w):
    for path in (os.path.join(results, w + ".json"), os.path.join(results, "heldout", "others", w + ".json")):
        if os.path.exists(path):
            c = {k: v for k, v in load(path).items() if not k.startswith("topofit")}
            for v in c.values():
                v["unallocated_gpu_pct"] = sum(v["unallocated_gpu_pct_runs"][:3]) / 3
            return c
    sys.exit("no base run of " + w)


def main():
    results, d = sys.argv[1], sys.argv[2]
    workloads = sorted(f[:-5] for f in os.listdir(os.path.join(d, "rate-inf")) if f.endswith(".json"))
    base = {w: base_of(results, w) for w in workloads}
    rates = sorted((float(x[5:]) for x in os.listdir(d) if x.startswith("rate-")), key=lambda r: r)
    name = lambda r: "inf" if math.isinf(r) else ("%g" % r)
    runs = {r: {w: load(os.path.join(d, "rate-" + name(r), w + ".json"))[DEPLOYED] for w in base} for r in rates}
    today = runs[math.inf]
    print("| workload | best other | kube-default GB/s | " + " | ".join("R=%s %% / GB/s x" % name(r) for r in rates) + " |")
    print("|---|---|---|" + "---|" * len(rates))
    score = {r: [0, 0.0, True] for r in rates}
    for w, c in base.items():
        best = min(c, key=lambda p: c[p]["unallocated_gpu_pct"])
        b = c[best]["unallocated_gpu_pct"]
        kd = c.get("kube-default", {}).get("multi_gpu_mean_bandwidth_gbps", 0)
        cells = []
        for r in rates:
            t = runs[r][w]
            u, limit = t["unallocated_gpu_pct"], max(0.8 * b, b + 0.05)
            x = t["multi_gpu_mean_bandwidth_gbps"] / kd if kd else None
            miss = (u > limit) + (x is not None and x < 1.3) + (u > today[w]["unallocated_gpu_pct"] + 0.05)
            score[r][0] += miss
            score[r][1] += max(0.0, u - limit)
            if t.get("multi_gpu_pods", 0) and t.get("multi_gpu_node_best_set_pct", 100) < 100:
                score[r][2] = False
            cells.append("%.3f / %s%s" % (u, "-" if x is None else "%.2fx" % x, " (%d)" % miss if miss else ""))
        print("| %s | %s %.3f | %.1f | %s |" % (w, best, b, kd, " | ".join(cells)))
    print()
    print("| R | missed targets | excess over the unallocated target (points) | best set of the node 100% |")
    print("|---|---|---|---|")
    for r in rates:
        print("| %s | %d | %.3f | %s |" % (name(r), score[r][0], score[r][1], "yes" if score[r][2] else "no"))
    ok = [r for r in rates if score[r][2]]
    chosen = min(ok, key=lambda r: (score[r][0], round(score[r][1], 6), -r))
    print()
    print("chosen: R = %s" % name(chosen))


if __name__ == "__main__":
    main()

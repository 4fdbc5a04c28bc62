#!/usr/bin/env python3
"""Folds the bench JSON files of bench/results into the tables of docs/placement.md (markdown on stdout)
and, when gnuplot is installed, summary-unallocated.png. Usage: summarize.py RESULTS_DIR"""
import json
import os
import shutil
import subprocess
import sys

LISTS = ["default", "multigpu20", "multigpu30", "cpu050", "cpu100", "cpu200", "gpushare40",
         "gpuspec10", "gpuspec20", "gpuspec25"]
FAMILIES = ["gpu-model", "multi-gpu", "cpu-heavy"]
TOPOFIT = ("topofit-mostallocated", "topofit")


def load(d, name):
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {p["policy"]: p for p in json.load(f)["policies"] if "error" not in p}


def main():
    d = sys.argv[1]
    cases = [("openb " + l, load(d, "openb-%s.json" % l)) for l in LISTS]
    cases += [("synthetic " + f, load(d, "synthetic-%s.json" % f)) for f in FAMILIES]
    cases = [(n, c) for n, c in cases if c]
    print("| workload | topofit-mostallocated | topofit | fgd | best other | ratio deployed | ratio plain "
          "| best set % (deployed / plain) | GB/s vs kube-default (deployed / plain) | p99 µs (deployed) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name, c in cases:
        if not all(t in c for t in TOPOFIT):
            continue
        others = {k: v for k, v in c.items() if k not in TOPOFIT}
        best = min(others, key=lambda k: others[k]["unallocated_gpu_pct"])
        b = others[best]["unallocated_gpu_pct"]
        dep, plain = c["topofit-mostallocated"], c["topofit"]
        ratio = lambda v: "%.2fx" % (v / b) if b > 0 else ("1.00x" if v == 0 else "inf")
        kd = c.get("kube-default", {}).get("multi_gpu_mean_bandwidth_gbps", 0)
        bw = lambda r: "%.2fx" % (r["multi_gpu_mean_bandwidth_gbps"] / kd) if kd else "-"
        fgd = c.get("fgd", {}).get("unallocated_gpu_pct")
        print("| %s | %.2f | %.2f | %s | %s %.2f | %s | %s | %.1f / %.1f | %s / %s | %.0f |" % (
            name, dep["unallocated_gpu_pct"], plain["unallocated_gpu_pct"],
            "-" if fgd is None else "%.2f" % fgd, best, b, ratio(dep["unallocated_gpu_pct"]),
            ratio(plain["unallocated_gpu_pct"]), dep["multi_gpu_best_set_pct"], plain["multi_gpu_best_set_pct"],
            bw(dep), bw(plain), dep["decision_us_p99"]))
        rows.append((name.split()[-1], dep["unallocated_gpu_pct"], plain["unallocated_gpu_pct"],
                     fgd if fgd is not None else 0, b))
    print()
    print("Unallocated GPUs at 100% arrival (%, mean over seeds), every policy:")
    print()
    policies = []
    for _, c in cases:
        for p in c:
            if p not in policies:
                policies.append(p)
    print("| workload | " + " | ".join(policies) + " |")
    print("|---|" + "---|" * len(policies))
    for name, c in cases:
        print("| %s | %s |" % (name, " | ".join(
            "%.2f" % c[p]["unallocated_gpu_pct"] if p in c else "-" for p in policies)))
    print()
    print("kube-scheduler's pick below topofit's best score (% of prioritized GPU pods): " + ", ".join(
        "%s %s" % (name, "/".join("%.2f" % c[t].get("kube_override_pct", -1) for t in TOPOFIT))
        for name, c in cases if all(t in c for t in TOPOFIT)) + " (deployed/plain)")
    allpods = [(n, c, load(os.path.join(d, "all-pods"), f)) for (n, c), f in zip(
        [(n, c) for n, c in cases],
        ["%s-%s.json" % tuple(n.split()) for n, _ in cases])]
    allpods = [(n, c, a) for n, c, a in allpods if a and all(t in a for t in TOPOFIT)]
    if allpods:
        print()
        print("With `scoring.podsWithoutGpus: true` (all-pods.yaml: the extender also scores pods without GPUs), "
              "against the best other policy of the full run:")
        print()
        print("| workload | topofit-mostallocated | topofit | best other | ratio deployed | ratio plain "
              "| best set % (deployed / plain) | GB/s vs kube-default (deployed / plain) | p99 µs (deployed) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, c, a in allpods:
            others = {k: v for k, v in c.items() if k not in TOPOFIT}
            best = min(others, key=lambda k: others[k]["unallocated_gpu_pct"])
            b = others[best]["unallocated_gpu_pct"]
            dep, plain = a["topofit-mostallocated"], a["topofit"]
            ratio = lambda v: "%.2fx" % (v / b) if b > 0 else ("1.00x" if v == 0 else "inf")
            kd = c.get("kube-default", {}).get("multi_gpu_mean_bandwidth_gbps", 0)
            bw = lambda r: "%.2fx" % (r["multi_gpu_mean_bandwidth_gbps"] / kd) if kd else "-"
            print("| %s | %.2f | %.2f | %s %.2f | %s | %s | %.1f / %.1f | %s / %s | %.0f |" % (
                name, dep["unallocated_gpu_pct"], plain["unallocated_gpu_pct"], best, b,
                ratio(dep["unallocated_gpu_pct"]), ratio(plain["unallocated_gpu_pct"]),
                dep["multi_gpu_best_set_pct"], plain["multi_gpu_best_set_pct"], bw(dep), bw(plain),
                dep["decision_us_p99"]))
    if rows and shutil.which("gnuplot"):
        dat = os.path.join(d, "summary-unallocated.dat")
        with open(dat, "w") as f:
            f.write("workload topofit-mostallocated topofit fgd best-other\n")
            for r in rows:
                f.write("%s %.4f %.4f %.4f %.4f\n" % r)
        gp = os.path.join(d, "summary-unallocated.gp")
        with open(gp, "w") as f:
            f.write('set terminal pngcairo size 1200,500 noenhanced\nset output "%s"\n'
                    % os.path.join(d, "summary-unallocated.png"))
            f.write('set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8\n'
                    'set ylabel "GPUs unallocated at 100% arrival (%)"\nset xtics rotate by -30\n'
                    'set key top left\nset grid ytics\n')
            f.write('plot "%s" using 2:xtic(1) title columnhead, "" using 3 title columnhead, '
                    '"" using 4 title columnhead, "" using 5 title columnhead\n' % dat)
        subprocess.run(["gnuplot", gp], check=False)


if __name__ == "__main__":
    main()

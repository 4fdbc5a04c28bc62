#!/usr/bin/env python3
"""Folds the bench JSON files of bench/results into the tables of docs/placement.md (markdown on stdout)
and, when gnuplot is installed, summary-unallocated.png. Usage: summarize.py RESULTS_DIR

RESULTS_DIR/openb-<list>.json, synthetic-<family>.json: every policy, topofit with all-pods.yaml (the
extender scores pods without GPUs too). RESULTS_DIR/gpu-pods/: the topofit rows with the extender
seeing GPU pods only, beside fgd-gpu-pods(-mostallocated). RESULTS_DIR/loadavg.txt: each run's load
average before it started."""
import json
import os
import shutil
import subprocess
import sys

LISTS = ["default", "multigpu20", "multigpu30", "cpu050", "cpu100", "cpu200", "gpushare40",
         "gpuspec10", "gpuspec20", "gpuspec25"]
FAMILIES = ["gpu-model", "multi-gpu", "cpu-heavy"]
DEPLOYED, PLAIN = "topofit-mostallocated", "topofit"
TOPOFIT = (DEPLOYED, PLAIN)
FGD_GPU = {DEPLOYED: "fgd-gpu-pods-mostallocated", PLAIN: "fgd-gpu-pods"}


def load(d, name):
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return {p["policy"]: p for p in json.load(f)["policies"] if "error" not in p}


def loadavg(d):
    out = {}
    path = os.path.join(d, "loadavg.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 4:
                    out[parts[0]] = parts[1:]  # "openb-default", "gpu-pods/openb-default"
    return out


def best_other(c):
    others = {k: v for k, v in c.items() if k not in TOPOFIT}
    best = min(others, key=lambda k: others[k]["unallocated_gpu_pct"])
    return best, others[best]["unallocated_gpu_pct"]


def ratio(v, b):
    return "%.2fx" % (v / b) if b > 0 else ("1.00x" if v == 0 else "inf")


def bw(c, r):
    kd = c.get("kube-default", {}).get("multi_gpu_mean_bandwidth_gbps", 0)
    return "%.2fx" % (r["multi_gpu_mean_bandwidth_gbps"] / kd) if kd else "-"


def table(intro, columns):
    """A blank line, the intro sentence, a blank line, then the header of a markdown table."""
    print()
    print(intro)
    print()
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))


def rate4(d, cases):
    """Deployed topofit at the chosen interconnect rate (rate4/<w>.json) beside the rows above, which
    regenerate.sh took before the rate existed (R = .inf)."""
    out = []
    for name, f, c in cases:
        r = load(os.path.join(d, "rate4"), f)
        if r and DEPLOYED in r:
            out.append((name, c, r[DEPLOYED]))
    if not out:
        return
    table("Deployed topofit at the chosen interconnect rate R = 4 (`rate4/`, 10 seeds, all-pods.yaml) beside "
          "the tables above (R = .inf):",
          ["workload", "R = 4", "R = .inf", "best other", "ratio", "best set of the node %",
           "best set of the cluster %", "GB/s vs kube-default"])
    for name, c, r in out:
        best, b = best_other(c)
        print("| %s | %.3f | %.3f | %s %.2f | %s | %.1f | %.1f | %s |" % (
            name, r["unallocated_gpu_pct"], c[DEPLOYED]["unallocated_gpu_pct"], best, b,
            ratio(r["unallocated_gpu_pct"], b), r.get("multi_gpu_node_best_set_pct", float("nan")),
            r["multi_gpu_best_set_pct"], bw(c, r)))


def heldout(d):
    """The multi-GPU-heavy workloads of heldout.sh: topofit-mostallocated (heldout/<w>.json) beside the
    other policies (heldout/others/<w>.json) and today's rule (R = .inf, heldout/today/<w>.json), in the
    order of heldout.sh's two sets."""
    script = os.path.join(d, "heldout.sh")
    if not os.path.isdir(os.path.join(d, "heldout")) or not os.path.exists(script):
        return
    sets = {}
    with open(script) as f:
        text = f.read()
    for name in ("CHOOSING", "REPORTING"):
        body = text.split(name + '="', 1)[1].split('"', 1)[0]
        sets[name.lower()] = body.split()
    table("Multi-GPU-heavy workloads of our own (`heldout.sh`; choosing set: the rate was chosen on it, "
          "reporting set: only reported), topofit-mostallocated with all-pods.yaml at R = 4, 10 seeds:",
          ["workload", "set", "multi-GPU pods: % of GPU pods / of GPUs", "topofit-mostallocated", "best other",
           "ratio", "R = .inf (today)", "best set of the node %", "best set of the cluster %",
           "GB/s vs kube-default"])
    for set_name, names in sets.items():
        for w in names:
            t, o = load(d, os.path.join("heldout", w + ".json")), load(d, os.path.join("heldout", "others", w + ".json"))
            if not t or not o or DEPLOYED not in t:
                continue
            c = dict(o)
            c[DEPLOYED] = t[DEPLOYED]
            best, b = best_other(c)
            dep = c[DEPLOYED]
            share = multi_share(d, w)
            today = load(d, os.path.join("heldout", "today", w + ".json"))
            today = "%.2f" % today[DEPLOYED]["unallocated_gpu_pct"] if today and DEPLOYED in today else "-"
            print("| %s | %s | %s | %.2f | %s %.2f | %s | %s | %.1f | %.1f | %s |" % (
                w, set_name, share, dep["unallocated_gpu_pct"], best, b, ratio(dep["unallocated_gpu_pct"], b), today,
                dep.get("multi_gpu_node_best_set_pct", float("nan")), dep["multi_gpu_best_set_pct"], bw(c, dep)))


def multi_share(d, w):
    """Multi-GPU pods among the GPU pods of heldout workload w, and their share of the GPUs asked for:
    from the size mix of a synthetic one; for a reweighted openb list, counted in its pod list under
    $TRACES ('-' when that is not there)."""
    if w.startswith("syn-"):
        a, b, c, e = (int(x) for x in w.split("-s")[0].split("-")[-4:])
        return "%d / %.0f" % (100 - a, 100.0 * (2 * b + 4 * c + 8 * e) / (a + 2 * b + 4 * c + 8 * e))
    base = w[len("rw-"):]
    name, factor = base.rsplit("-x", 1)
    path = os.path.join(os.environ.get("TRACES", "../shared/traces/openb"), "openb_pod_list_%s.csv" % name)
    if not os.path.exists(path):
        return "-"
    import csv
    one = multi = multi_gpus = 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            g = int(row["num_gpu"])
            one += g == 1
            multi += int(factor) if g >= 2 else 0
            multi_gpus += int(factor) * g if g >= 2 else 0
    return "%.1f / %.0f" % (100.0 * multi / (one + multi), 100.0 * multi_gpus / (one + multi_gpus))


def main():
    d = sys.argv[1]
    names = [("openb", l) for l in LISTS] + [("synthetic", f) for f in FAMILIES]
    cases = [("%s %s" % n, "%s-%s.json" % n, load(d, "%s-%s.json" % n)) for n in names]
    cases = [(n, f, c) for n, f, c in cases if c and all(t in c for t in TOPOFIT)]
    loads = loadavg(d)

    print("Topofit scoring every pod (`all-pods.yaml`, as `manifests/` deploys it). Ratios: unallocated GPUs "
          "at 100% arrival against the best other policy of the run, FGD included; bandwidth: mean predicted "
          "ring bandwidth of multi-GPU pods against kube-default's.")
    print()
    print("| workload | topofit-mostallocated | topofit | fgd | best other | ratio deployed | ratio plain "
          "| best set % (deployed / plain) | GB/s vs kube-default (deployed / plain) |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name, _, c in cases:
        best, b = best_other(c)
        dep, plain = c[DEPLOYED], c[PLAIN]
        fgd = c.get("fgd", {}).get("unallocated_gpu_pct")
        print("| %s | %.2f | %.2f | %s | %s %.2f | %s | %s | %.1f / %.1f | %s / %s |" % (
            name, dep["unallocated_gpu_pct"], plain["unallocated_gpu_pct"],
            "-" if fgd is None else "%.2f" % fgd, best, b, ratio(dep["unallocated_gpu_pct"], b),
            ratio(plain["unallocated_gpu_pct"], b), dep["multi_gpu_best_set_pct"], plain["multi_gpu_best_set_pct"],
            bw(c, dep), bw(c, plain)))
        rows.append((name.split()[-1], dep["unallocated_gpu_pct"], plain["unallocated_gpu_pct"],
                     fgd if fgd is not None else 0, b))
    print()
    print("Unallocated GPUs at 100% arrival (%, mean over seeds), every policy:")
    print()
    policies = []
    for _, _, c in cases:
        for p in c:
            if p not in policies:
                policies.append(p)
    print("| workload | " + " | ".join(policies) + " |")
    print("|---|" + "---|" * len(policies))
    for name, _, c in cases:
        print("| %s | %s |" % (name, " | ".join(
            "%.2f" % c[p]["unallocated_gpu_pct"] if p in c else "-" for p in policies)))
    print()
    print("kube-scheduler's pick below topofit's best score (% of prioritized GPU pods, deployed/plain): " + ", ".join(
        "%s %s" % (name, "/".join("%.2f" % c[t].get("kube_override_pct", -1) for t in TOPOFIT))
        for name, _, c in cases))

    print()
    print("Decision time per pod (µs; wall p50 / p99, then the thread's CPU time p99; pods without GPUs "
          "alone for the topofit row), every run of a list in one process, its load average (1/5/15 min) "
          "before it started:")
    print()
    timed = [DEPLOYED, "fgd", "kube-default", "kube-mostallocated", "bestfit"]
    print("| workload | load | " + " | ".join(timed) + " | topofit-mostallocated, pods without GPUs |")
    print("|---|---|" + "---|" * len(timed) + "---|")
    for name, f, c in cases:
        cells = []
        for p in timed:
            r = c.get(p)
            cells.append("-" if not r else "%.0f / %.0f / %.0f" % (
                r["decision_us_p50"], r["decision_us_p99"], r.get("decision_cpu_us_p99", 0)))
        dep = c[DEPLOYED]
        nog = ("%.0f / %.0f / %.0f" % (dep["no_gpu_decision_us_p50"], dep["no_gpu_decision_us_p99"],
                                       dep["no_gpu_decision_cpu_us_p99"])
               if dep.get("no_gpu_decision_us_p50") else "-")
        la = loads.get(f[:-5])
        print("| %s | %s | %s | %s |" % (name, " / ".join(la) if la else "-", " | ".join(cells), nog))

    gpu = [(n, c, load(os.path.join(d, "gpu-pods"), f)) for n, f, c in cases]
    gpu = [(n, c, g) for n, c, g in gpu if g and all(t in g for t in TOPOFIT)]
    if gpu:
        print()
        print("The extender seeing GPU pods only (the defaults; `gpu-pods/`), against FGD with the same "
              "in-tree scores for pods without GPUs (like for like) and against the best other policy of the "
              "all-pods run:")
        print()
        print("| workload | topofit-mostallocated | fgd-gpu-pods-mostallocated | ratio | topofit | fgd-gpu-pods "
              "| ratio | best other (all pods) | ratio deployed / plain | best set % (deployed / plain) |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, c, g in gpu:
            best, b = best_other(c)
            dep, plain = g[DEPLOYED], g[PLAIN]
            fd, fp = g.get(FGD_GPU[DEPLOYED]), g.get(FGD_GPU[PLAIN])
            cell = lambda r: "-" if not r else "%.2f" % r["unallocated_gpu_pct"]
            rat = lambda v, r: "-" if not r else ratio(v, r["unallocated_gpu_pct"])
            print("| %s | %.2f | %s | %s | %.2f | %s | %s | %s %.2f | %s / %s | %.1f / %.1f |" % (
                name, dep["unallocated_gpu_pct"], cell(fd), rat(dep["unallocated_gpu_pct"], fd),
                plain["unallocated_gpu_pct"], cell(fp), rat(plain["unallocated_gpu_pct"], fp), best, b,
                ratio(dep["unallocated_gpu_pct"], b), ratio(plain["unallocated_gpu_pct"], b),
                dep["multi_gpu_best_set_pct"], plain["multi_gpu_best_set_pct"]))
    rate4(d, cases)
    heldout(d)
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

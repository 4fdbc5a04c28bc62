#!/usr/bin/env python3
"""Folds bench/results/dra/<mode>/*.json (run.sh) into the markdown tables of docs/dra.md ("Bench"),
printed on stdout: the deployed topofit (topofit-mostallocated) against DRA first fit alone
(kube-default) and the best other policy, per mode; then every policy's unallocated GPUs and mean ring
bandwidth against kube-default's, per mode.

  python3 bench/results/dra/summarize.py > bench/results/dra/summary.md
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = [("none", "device plugin"), ("all", "DRA all"), ("half", "DRA half")]
LISTS = ["default", "multigpu20", "multigpu30", "cpu050", "cpu100", "cpu200", "gpushare40", "gpuspec10",
         "gpuspec20", "gpuspec25"]
FAMILIES = ["gpu-model", "multi-gpu", "cpu-heavy"]
DEPLOYED = "topofit-mostallocated"


def workloads():
    return [("openb " + x, "openb-%s.json" % x) for x in LISTS] + \
           [("synthetic " + x, "synthetic-%s.json" % x) for x in FAMILIES]


def load_one(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        doc = json.load(f)
    return {p["policy"]: p for p in doc["policies"]}


def merge(a, b):
    """Two passes over other seeds, as one: means weighted by runs (unallocated) and by multi-GPU pods
    (bandwidth); decision times stay the first pass's (percentiles do not merge)."""
    out = {}
    for name, p in a.items():
        q = b[name]
        m = dict(p)
        m["runs"] = p["runs"] + q["runs"]
        m["unallocated_gpu_pct"] = (p["unallocated_gpu_pct"] * p["runs"] + q["unallocated_gpu_pct"] * q["runs"]) / m["runs"]
        m["unallocated_gpu_pct_runs"] = p["unallocated_gpu_pct_runs"] + q["unallocated_gpu_pct_runs"]
        pods = p["multi_gpu_pods"] + q["multi_gpu_pods"]
        if pods:
            m["multi_gpu_mean_bandwidth_gbps"] = (p["multi_gpu_mean_bandwidth_gbps"] * p["multi_gpu_pods"] +
                                                  q["multi_gpu_mean_bandwidth_gbps"] * q["multi_gpu_pods"]) / pods
        m["multi_gpu_pods"] = pods
        for k in ("dra_binds", "dra_mispredicted"):
            m[k] = p.get(k, 0) + q.get(k, 0)
        out[name] = m
    return out


def load(mode, name):
    """The run.sh pass (bench/results/dra/<mode>/), merged with the pass over more seeds
    (bench/results/dra/more-seeds/<mode>/, OUT=... SEEDS=... run.sh) where that has the workload in
    every mode."""
    rows = load_one(os.path.join(HERE, mode, name))
    # Only a workload the second pass finished in every mode, so that a row's modes share their seeds.
    if not all(os.path.exists(os.path.join(HERE, "more-seeds", m, name)) for m, _ in MODES):
        return rows
    more = load_one(os.path.join(HERE, "more-seeds", mode, name))
    return merge(rows, more) if rows and more else rows


def bw_ratio(rows, policy):
    base = rows["kube-default"]["multi_gpu_mean_bandwidth_gbps"]
    return rows[policy]["multi_gpu_mean_bandwidth_gbps"] / base if base else float("nan")


def best_other(rows):
    others = [(p["unallocated_gpu_pct"], n) for n, p in rows.items() if not n.startswith("topofit")]
    return min(others)


def headline(data):
    out = ["| workload | " + " | ".join(
        "%s: topofit / kube-default / best other" % label
        for m, label in MODES) + " | GB/s vs kube-default (%s) |" % " / ".join(l for _, l in MODES),
           "|---|" + "---|" * (len(MODES) + 1)]
    for title, name in workloads():
        cells, ratios = [], []
        for m, _ in MODES:
            rows = data.get((m, name))
            if not rows:
                cells.append("-")
                ratios.append("-")
                continue
            u, who = best_other(rows)
            cells.append("%.2f / %.2f / %s %.2f" % (rows[DEPLOYED]["unallocated_gpu_pct"],
                                                    rows["kube-default"]["unallocated_gpu_pct"], who, u))
            ratios.append("%.2fx" % bw_ratio(rows, DEPLOYED))
        out.append("| %s | %s | %s |" % (title, " | ".join(cells), " / ".join(ratios)))
    return out


def per_policy(data, mode, metric):
    policies = None
    out = []
    for title, name in workloads():
        rows = data.get((mode, name))
        if not rows:
            continue
        if policies is None:
            policies = list(rows)
            out += ["| workload | " + " | ".join(policies) + " |", "|---|" + "---|" * len(policies)]
        if metric == "unallocated":
            vals = ["%.2f" % rows[p]["unallocated_gpu_pct"] for p in policies]
        else:
            vals = ["%.1f (%.2fx)" % (rows[p]["multi_gpu_mean_bandwidth_gbps"], bw_ratio(rows, p)) for p in policies]
        out.append("| %s | %s |" % (title, " | ".join(vals)))
    return out


def decision_cpu(data):
    out = ["| workload | " + " | ".join(l for _, l in MODES) + " |", "|---|" + "---|" * len(MODES)]
    for title, name in workloads():
        cells = []
        for m, _ in MODES:
            rows = data.get((m, name))
            t = rows[DEPLOYED] if rows else None
            cells.append("%.0f / %.0f" % (t["decision_cpu_us_p50"], t["decision_cpu_us_p99"]) if t else "-")
        out.append("| %s | %s |" % (title, " | ".join(cells)))
    return out


def checks(data):
    binds = mis = 0
    runs = {}
    for (m, name), rows in data.items():
        for p in rows.values():
            binds += p.get("dra_binds", 0)
            mis += p.get("dra_mispredicted", 0)
            runs.setdefault(p["runs"], set()).add(name.replace(".json", ""))
    return "runs (seeds) per policy: %s; topofit's GPU pods bound on DRA nodes: %d, allocation not the predicted set: %d" % (
        "; ".join("%d: %s" % (r, ", ".join(sorted(n))) for r, n in sorted(runs.items())), binds, mis)


def main():
    data = {}
    for m, _ in MODES:
        for _, name in workloads():
            rows = load(m, name)
            if rows:
                data[(m, name)] = rows
    lines = ["Deployed topofit (%s) - unallocated GPUs at 100%% arrival (%%, mean over seeds):" % DEPLOYED, ""]
    lines += headline(data)
    for m, label in MODES:
        lines += ["", "Unallocated GPUs (%%), every policy, %s:" % label, ""] + per_policy(data, m, "unallocated")
    for m, label in MODES:
        lines += ["", "Mean ring bandwidth of multi-GPU pods, GB/s (x kube-default's), %s:" % label, ""]
        lines += per_policy(data, m, "bandwidth")
    lines += ["", "Deployed topofit's decision, CPU time per pod (us, p50 / p99 over every pod of run.sh's pass, seeds 42-44):", ""]
    lines += decision_cpu(data)
    lines += ["", checks(data)]
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Reweights an openb pod list by GPU count: every pod asking for 2 GPUs or more is written `factor`
times (names suffixed -r1, -r2, ...), every other pod once, so the paper protocol's draws with
replacement see `factor` times as many multi-GPU pods against the same single-GPU and CPU-only pods.
Deterministic (no randomness): the same list and factor give the same file.

  bench/results/reweight_openb.py ../shared/traces/openb/openb_pod_list_default.csv 8 > rw-default-x8.csv
"""
import csv
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: reweight_openb.py POD_LIST.csv FACTOR")
    factor = int(sys.argv[2])
    if factor < 1:
        sys.exit("FACTOR: an integer >= 1")
    with open(sys.argv[1], newline="") as f:
        reader = csv.DictReader(f)
        writer = csv.DictWriter(sys.stdout, fieldnames=reader.fieldnames, lineterminator="\n")
        writer.writeheader()
        for row in reader:
            copies = factor if int(row["num_gpu"]) >= 2 else 1
            for i in range(copies):
                out = dict(row)
                if copies > 1:
                    out["name"] = f"{row['name']}-r{i + 1}"
                writer.writerow(out)


if __name__ == "__main__":
    main()

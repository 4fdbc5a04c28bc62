#!/usr/bin/env python3
"""The web view at 5,000 nodes: bytes per poll, and how long headless Chromium takes to draw it.

Writes a labelled cluster (labelled_cluster.py: gpu-node-0.., 32 nodes a block, 8 blocks a spine, the last
--unlabelled nodes without topograph labels, pods on 7 of 8 nodes) and serves it with `topofit serve
--snapshot`. Measures:
  - the bytes of each poll: the overview's first (names and domains), its later ones (?layout=KEY), a
    drill-down into one block (/api/v1/ui/nodes?domain=..&limit=128), and today's every-node poll;
    and each request's wall time on 127.0.0.1 (median of --requests) and the server's CPU time (user +
    system, /proc/PID/stat, over all --requests: the figure a loaded machine does not inflate);
  - in a fresh headless Chromium per run (chromium_cdp.py): from navigation start to the first frame
    drawn with every tile in the overview; then from a mouse click on a block's head to the frame with
    its rows drawn, and from a click on a spine's head (256 nodes) to its first N rows drawn (?rows=N, N
    of --rows: how kRowsAtOnce is chosen). Medians and ranges of --runs.
With --baseline OLD_TOPOFIT, the same cluster in the web view before the overview (every node a full row):
navigation start to the frame with every row drawn.
Usage: overview_bench.py TOPOFIT [--baseline OLD_TOPOFIT [--skip-overview]] [--nodes 5000] [--runs 5]
                         [--rows 32 64 128 256]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labelled_cluster  # noqa: E402
from chromium_cdp import Chromium  # noqa: E402
from ui_rig import chromium_binary, cpu_seconds, http, serve  # noqa: E402


def spread(values, unit):
    return f"{statistics.median(values):.0f} {unit} (min {min(values):.0f}, max {max(values):.0f}, n={len(values)})"


def request_ms(url, count, pid):
    """(median wall ms a request, the server's CPU ms a request over all of them)."""
    times = []
    cpu = cpu_seconds(pid)
    for _ in range(count):
        start = time.perf_counter()
        http("GET", url)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), (cpu_seconds(pid) - cpu) * 1000 / count


def poll_sizes(ops, requests, pid):
    first = http("GET", ops + "/api/v1/overview")[1]
    layout = json.loads(first)["layout"]
    urls = {"overview, first poll": "/api/v1/overview",
            "overview, later polls": f"/api/v1/overview?layout={layout}",
            "drill-down into one block (32 nodes)": "/api/v1/ui/nodes?domain=spine-0/block-0&limit=128",
            "every node in full (before the overview)": "/api/v1/ui/nodes"}
    for what, path in urls.items():
        try:
            size = len(http("GET", ops + path)[1].encode())
            wall, cpu = request_ms(ops + path, requests, pid)
        except urllib.error.HTTPError as e:  # A query past its deadline on a loaded machine: a 503.
            print(f"  {what}: HTTP {e.code}")
            continue
        print(f"  {what}: {size:,} bytes; a request: {wall:.1f} ms (median of {requests}), {cpu:.1f} ms of server CPU")


def click_to_rows(b, path, rows):
    """Milliseconds from a mouse click on the domain's head to the frame with `rows` rows drawn."""
    b.evaluate("window.__clicked = performance.now()")
    b.click(f'#overview .domain[data-domain="{path}"] > .domain-head')
    return b.wait_for(f"document.querySelectorAll('#nodes .node').length === {rows}", 120) - b.evaluate("window.__clicked")


def draw_overview(chromium, ops, nodes, runs, row_counts):
    first, block, spine = [], [], {n: [] for n in row_counts}
    for _ in range(runs):
        for rows in row_counts:  # A spine holds 256 nodes; ?rows=N draws the first N of them.
            with Chromium(chromium) as b:
                b.open(ops + f"/ui?rows={rows}")
                first.append(b.wait_for(f"document.querySelectorAll('#overview .tile').length === {nodes}", 120))
                block.append(click_to_rows(b, "spine-0/block-0", 32))
                spine[rows].append(click_to_rows(b, "spine-1", rows))
    print(f"  overview, navigation start to drawn: {spread(first, 'ms')}")
    print(f"  click on a block to its 32 rows drawn: {spread(block, 'ms')}")
    for rows, times in spine.items():
        print(f"  click on a spine to its first {rows} rows drawn (?rows={rows}): {spread(times, 'ms')}")


def draw_rows(chromium, ops, nodes, runs):
    times = []
    for _ in range(runs):
        with Chromium(chromium) as b:
            b.open(ops + "/ui")
            times.append(b.wait_for(f"document.querySelectorAll('#nodes .node').length === {nodes}", 600))
    print(f"  every node a row, navigation start to drawn: {spread(times, 'ms')}")
    print(f"  per row: {statistics.median(times) / nodes:.2f} ms")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("topofit")
    ap.add_argument("--baseline", help="a topofit from before the overview, for its every-node view")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--unlabelled", type=int, default=40)
    ap.add_argument("--runs", type=int, default=5, help="browser runs; 0: bytes and request times only")
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--rows", type=int, nargs="+", default=[32, 64, 128, 256],
                    help="rows at once (?rows=N) for the click on a spine")
    ap.add_argument("--skip-overview", action="store_true", help="only the baseline")
    args = ap.parse_args()
    chromium = chromium_binary()
    if not chromium:
        sys.exit("chromium is not installed (scripts/install-deps.sh browser)")
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = os.path.join(tmp, "cluster.json")
        labelled_cluster.write(snapshot, args.nodes, unlabelled=args.unlabelled)
        print(f"{args.nodes} nodes (32 a block, 8 blocks a spine, {args.unlabelled} unlabelled), "
              f"snapshot {os.path.getsize(snapshot):,} bytes")
        if not args.skip_overview:
            with serve(args.topofit, "--snapshot", snapshot) as (_, ops, pid):
                print(args.topofit)
                poll_sizes(ops, args.requests, pid)
                if args.runs:
                    draw_overview(chromium, ops, args.nodes, args.runs, args.rows)
        if args.baseline:
            with serve(args.baseline, "--snapshot", snapshot) as (_, ops, _pid):
                print(args.baseline)
                draw_rows(chromium, ops, args.nodes, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The web view (/ui) rendered by a real browser against the built `topofit serve`.

Starts `topofit serve` on the embedded demo cluster (verbs on one 127.0.0.1 port, ops on another),
renders http://127.0.0.1:OPS/ui in headless chromium with --dump-dom and checks the DOM: the five demo
nodes, their GPU cells, ml/train-llm-0 holding GPUs 0-3 of dgx-v100-1, NVLink islands; then binds a new
pod through POST /scheduler/filter and /scheduler/bind and checks it shows up as a holder on the next
render; then loads /ui?explain=<pod YAML> and checks every node's verdict matches POST /api/v1/explain;
and /ui?filter=free>=8 shows only the nodes with 8 free GPUs; the demo's overview is one box of five
tiles. Then, on a cluster in spines and blocks (labelled_cluster.py), driven over the DevTools protocol
(chromium_cdp.py): the overview's boxes and tiles in natural order, unlabelled nodes in a box of their
own, tile colours by free GPUs, no rows until a click; a mouse click on a block's head draws exactly its
nodes' rows, a click on a tile its block's rows with the node selected, ?domain= opens a domain, and a
pod bound recolours its node's tile in place on the next poll. Last, a time-sliced and a MIG node: a box per
physical GPU holding its replicas or MIG devices and their holders. Chromium is only pointed at 127.0.0.1.
Usage: web_view_test.py TOPOFIT_BINARY [--screenshot PNG]  (exit 77 = skipped: no chromium).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labelled_cluster  # noqa: E402
from chromium_cdp import Chromium  # noqa: E402
from ui_rig import chromium_binary, http, serve  # noqa: E402

DEMO_NODES = ["a100-1", "dgx-v100-1", "dgx-v100-2", "pcie-1", "pcie-4x-1"]


def browser_args(chromium, profile):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={profile}", "--virtual-time-budget=5000"]


def dump_dom(chromium, url):
    assert url.startswith("http://127.0.0.1:"), url
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(browser_args(chromium, profile) + ["--dump-dom", url],
                             capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or "<html" not in out.stdout:
        sys.exit(f"chromium failed on {url} (rc {out.returncode}):\n{out.stderr[-3000:]}")
    return out.stdout


def node_rows(dom):
    """{node name: the HTML of its row} from the rendered #nodes list."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r'<div class="node(?: selected)?" data-node="([^"]+)"', dom)]
    rows = {}
    for i, (pos, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else dom.find("</section>", pos)
        rows[name] = dom[pos:end]
    return rows


def holders(row):
    """{gpu index: holder ('' when free)} for one node row."""
    return {int(g): h for g, h in re.findall(r'class="gpu [a-z]+" data-gpu="(\d+)" data-holder="([^"]*)"', row)}


failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("topofit")
    ap.add_argument("--screenshot", help="also save a 1400x900 screenshot of /ui here")
    args = ap.parse_args()
    chromium = chromium_binary()
    if not chromium:
        # A test that cannot run fails under CI (CI=true, as .ci/run runs): it may skip only by hand.
        if os.environ.get("CI") == "true":
            print("FAIL: chromium is not installed (scripts/install-deps.sh browser), and CI must run this test")
            return 1
        print("SKIP: chromium is not installed (scripts/install-deps.sh browser)")
        return 77

    with serve(args.topofit) as (base, ops_base, _):
        check_demo(chromium, base, ops_base, args.screenshot)
    check_overview(chromium, args.topofit)
    check_shared(chromium, args.topofit)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


def check_demo(chromium, base, ops_base, screenshot):
    """The demo cluster (no network labels): every node a row, as before the overview."""
    # 1. The nodes, their GPUs, the demo cluster's holders, NVLink islands.
    rows = node_rows(dump_dom(chromium, ops_base + "/ui"))
    check(sorted(rows) == DEMO_NODES, f"the five demo nodes are rendered: {sorted(rows)}")
    api = {n["name"]: n for n in json.loads(http("GET", ops_base + "/api/v1/ui/nodes")[1])["nodes"]}
    for name in DEMO_NODES:
        cells = holders(rows.get(name, ""))
        check(len(cells) == api[name]["gpus"] and cells == dict(enumerate(api[name]["gpuHolders"])),
              f"{name}: {len(cells)} GPU cells with the API's holders")
    dom = dump_dom(chromium, ops_base + "/ui")
    tiles = re.findall(r'<div class="tile[^"]*" data-node="([^"]+)"', dom)
    check(tiles == DEMO_NODES and dom.count('class="domain"') == 1,
          f"the overview draws the demo (no network labels) as one box of five tiles: {tiles}")
    v100 = holders(rows.get("dgx-v100-1", ""))
    check([v100.get(g) for g in range(4)] == ["ml/train-llm-0"] * 4, "ml/train-llm-0 holds GPUs 0-3 of dgx-v100-1")
    check('data-island="0,1,2,3"' in rows.get("dgx-v100-1", "") and 'data-island="4,5,6,7"' in rows.get("dgx-v100-1", ""),
          "dgx-v100-1 is drawn as two NVLink quads")
    check('data-island="0,1,2,3,4,5,6,7"' in rows.get("a100-1", ""), "a100-1 (NVSwitch) is one NVLink island")
    for name in DEMO_NODES:
        shown = {k: int(v) for k, v in re.findall(r'data-shape="(\d+)" data-count="(\d+)"', rows.get(name, ""))}
        check(shown == api[name]["freeNvlinkSets"], f"{name}: free NVLink sets by shape {shown}")

    # 2. A pod placed through the verbs appears on the next render.
    pod = {"metadata": {"name": "ui-probe", "namespace": "web", "uid": "uid-ui-probe"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}, "status": {}}
    _, body = http("POST", base + "/scheduler/filter", json.dumps({"Pod": pod, "Nodes": None, "NodeNames": DEMO_NODES}))
    passing = json.loads(body)["NodeNames"]
    check(bool(passing), f"filter passes some node for web/ui-probe: {passing}")
    target = "pcie-4x-1" if "pcie-4x-1" in passing else passing[0]
    _, body = http("POST", base + "/scheduler/bind", json.dumps(
        {"PodName": "ui-probe", "PodNamespace": "web", "PodUID": "uid-ui-probe", "Node": target}))
    check(not json.loads(body).get("Error"), f"bind web/ui-probe to {target}: {body}")
    rows = node_rows(dump_dom(chromium, ops_base + "/ui"))
    held = [g for g, h in holders(rows.get(target, "")).items() if h == "web/ui-probe"]
    check(len(held) == 2, f"web/ui-probe is shown holding 2 GPUs of {target}: {held}")
    check(sum(h == "web/ui-probe" for n in rows.values() for h in holders(n).values()) == 2,
          "web/ui-probe is shown nowhere else")

    # 3. Explain from the URL: one verdict row per node, each as the API answers.
    yaml = "metadata: {name: why, namespace: web}\nspec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 4}}\n"
    dom = dump_dom(chromium, ops_base + "/ui?explain=" + urllib.parse.quote(yaml))
    want = json.loads(http("POST", ops_base + "/api/v1/explain", yaml, "application/yaml")[1])
    got = dict(re.findall(r'<tr class="verdict [^"]*" data-node="([^"]+)" data-result="([^"]+)"', dom))
    check(got == {n["node"]: n["result"] for n in want["nodes"]} and len(got) == 5,
          f"explain verdicts for all five nodes match the API: {got}")
    check(want["chosen"] and f"best node {want['chosen']}" in dom, f"explain names the best node {want['chosen']}")
    fails = [n for n in want["nodes"] if n["result"] != "pass"]
    check(all(n["reason"] in dom.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&") for n in fails)
          and fails, f"explain shows the reasons of the {len(fails)} failing node(s)")
    chosen = next(n for n in want["nodes"] if n["node"] == want["chosen"])
    check(f'{chosen["bandwidthGBps"]:.1f}' in dom, "explain shows the chosen node's bandwidth")

    # 4. The filter box, from the URL: free>=8 keeps only nodes with 8 free GPUs.
    rows = node_rows(dump_dom(chromium, ops_base + "/ui?filter=" + urllib.parse.quote("free>=8")))
    expect = sorted(n for n, v in api.items() if v["free"] >= 8)
    check(sorted(rows) == expect and expect, f"filter free>=8 shows {sorted(rows)}, expected {expect}")
    # ... and a label (key=value): dgx-v100-1 carries nvidia.com/gpu.product=Tesla-V100-SXM2-32GB.
    label = "nvidia.com/gpu.product=tesla-v100-sxm2-32gb"
    rows = node_rows(dump_dom(chromium, ops_base + "/ui?filter=" + urllib.parse.quote(label)))
    expect = sorted(n for n, v in api.items()
                    if v.get("labels", {}).get("nvidia.com/gpu.product", "").lower() == "tesla-v100-sxm2-32gb")
    check(sorted(rows) == expect == ["dgx-v100-1"], f"filter {label} shows {sorted(rows)}, expected {expect}")

    if screenshot:
        with tempfile.TemporaryDirectory() as profile:
            url = ops_base + "/ui?node=dgx-v100-1&explain=" + urllib.parse.quote(yaml)
            subprocess.run(browser_args(chromium, profile) + [f"--screenshot={os.path.abspath(screenshot)}",
                           "--window-size=1400,900", "--hide-scrollbars", url], capture_output=True, timeout=120, check=True)
        print("screenshot:", screenshot)


# The overview in the page: [path, level, head text, [[tile node, tile class], ...]] for every domain box.
OVERVIEW_BOXES = """[...document.querySelectorAll('#overview .domain')].map((d) => [d.dataset.domain, d.dataset.level || '',
    d.querySelector('.domain-head').textContent,
    [...d.querySelectorAll(':scope > .tiles > .tile')].map((t) => [t.dataset.node, t.className])])"""
ROW_NAMES = "[...document.querySelectorAll('#nodes .node')].map((r) => r.dataset.node)"


def tile_class(gpus, free):
    """The class overview.js gives a node's tile (five colours by free GPUs)."""
    if not gpus:
        return "tile nogpu"
    return "tile f" + str(4 if free == gpus else 0 if free == 0 else 1 + min(2, 3 * free // gpus))


def check_overview(chromium, topofit):
    """A cluster in spines and blocks: the overview, its clicks, and a poll's update in place."""
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = os.path.join(tmp, "cluster.json")
        # gpu-node-0..71: 12 a block, 3 blocks a spine (2 spines); gpu-node-72..75 unlabelled.
        labelled_cluster.write(snapshot, 76, nodes_per_block=12, blocks_per_spine=3, unlabelled=4)
        with serve(topofit, "--snapshot", snapshot) as (base, ops, _), Chromium(chromium) as b:
            b.open(ops + "/ui")
            b.wait_for("document.querySelectorAll('#overview .tile').length === 76")
            check_boxes(b.evaluate(OVERVIEW_BOXES), json.loads(http("GET", ops + "/api/v1/overview")[1]))
            check(b.evaluate(ROW_NAMES) == [] and "Click a domain" in b.evaluate("document.getElementById('scope').textContent"),
                  "no rows before a click (a cluster with domains)")
            check_clicks(b, ops)
            check_poll_update(b, base, ops)
            b.open(ops + "/ui?domain=-")
            b.wait_for("document.querySelectorAll('#nodes .node').length > 0")
            check(b.evaluate(ROW_NAMES) == [f"gpu-node-{i}" for i in range(72, 76)],
                  "/ui?domain=- opens the unlabelled nodes' rows")


def check_boxes(boxes, api):
    paths = [p for p, _, _, _ in boxes]
    want = ["spine-0", "spine-0/block-0", "spine-0/block-1", "spine-0/block-2", "spine-1", "spine-1/block-3",
            "spine-1/block-4", "spine-1/block-5", "-", "-/-"]
    check(paths == want, f"a box per spine and block, then the unlabelled: {paths}")
    tiles = {p: [n for n, _ in t] for p, _, _, t in boxes}
    check(tiles.get("spine-0/block-0") == [f"gpu-node-{i}" for i in range(12)],
          f"block-0's tiles in natural order (gpu-node-2 before gpu-node-10): {tiles.get('spine-0/block-0')}")
    check(tiles.get("-/-") == [f"gpu-node-{i}" for i in range(72, 76)], "the unlabelled nodes' tiles")
    heads = {p: h for p, _, h, _ in boxes}
    check(heads.get("-", "").startswith("(no spine label) spine · 4 nodes")
          and heads.get("spine-1/block-4", "").startswith("block-4 block · 12 nodes · "),
          f"the heads name level and domain: {heads.get('-')!r}, {heads.get('spine-1/block-4')!r}")
    shown = [t for _, _, _, ts in boxes for t in ts]
    want_classes = [[n, tile_class(g, f)] for n, g, f in zip(api["nodes"], api["gpus"], api["free"])]
    check(shown == want_classes and len(shown) == 76, "every tile once, in the API's order, coloured by its free GPUs")
    check(len({c for _, c in shown}) >= 4, f"the busy cluster shows several colours: {sorted({c for _, c in shown})}")


def check_clicks(b, ops):
    b.click('#overview .domain[data-domain="spine-0/block-1"] > .domain-head')
    b.wait_for("document.querySelectorAll('#nodes .node').length === 12")
    rows = b.evaluate(ROW_NAMES)
    check(rows == [f"gpu-node-{i}" for i in range(12, 24)], f"a click on block-1 draws exactly its 12 rows: {rows}")
    api = json.loads(http("GET", ops + "/api/v1/ui/nodes?domain=spine-0/block-1")[1])["nodes"]
    cells = b.evaluate("[...document.querySelectorAll('#nodes .node')].map((r) => "
                       "[...r.querySelectorAll('.gpu')].map((g) => g.dataset.holder))")
    check(cells == [n["gpuHolders"] for n in api], "the rows' GPU holders are the API's")
    check(b.evaluate("document.querySelector('#overview .domain.open').dataset.domain") == "spine-0/block-1"
          and "block block-1: 12 nodes" in b.evaluate("document.getElementById('scope').textContent"),
          "the open block is marked and named above the rows")
    b.click('#overview .tile[data-node="gpu-node-40"]')
    b.wait_for("document.querySelector('#nodes .node.selected')?.dataset.node === 'gpu-node-40'")
    check(b.evaluate(ROW_NAMES) == [f"gpu-node-{i}" for i in range(36, 48)]
          and b.evaluate("document.querySelector('#detail h2').textContent") == "gpu-node-40",
          "a click on a tile draws its block's rows, the node selected with its detail")


def check_poll_update(b, base, ops):
    # gpu-node-0 has no pod (all 8 free): an 8-GPU pod bound through the verbs empties it.
    b.evaluate("window.__tile = document.querySelector('#overview .tile[data-node=\"gpu-node-0\"]')")
    check(b.evaluate("window.__tile.className") == "tile f4", "gpu-node-0's tile: all free")
    pod = {"metadata": {"name": "fill", "namespace": "web", "uid": "uid-fill"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}, "status": {}}
    http("POST", base + "/scheduler/filter", json.dumps({"Pod": pod, "Nodes": None, "NodeNames": ["gpu-node-0"]}))
    _, body = http("POST", base + "/scheduler/bind", json.dumps(
        {"PodName": "fill", "PodNamespace": "web", "PodUID": "uid-fill", "Node": "gpu-node-0"}))
    check(not json.loads(body).get("Error"), f"bind web/fill to gpu-node-0: {body}")
    b.wait_for("window.__tile.className === 'tile f0'", 15)
    check(b.evaluate("window.__tile === document.querySelector('#overview .tile[data-node=\"gpu-node-0\"]')"),
          "the next poll recolours gpu-node-0's tile in place (the same element: the layout did not change)")



def shared_node(name, allocatable, labels):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": "node-" + name, "labels": labels},
            "status": {"allocatable": {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": str(allocatable)},
                       "capacity": {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": str(allocatable)}}}


def shared_pod(name, node, devices):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "uid": "uid-" + name,
                         "annotations": {"topofit.io/gpu-ids": ",".join(map(str, devices))}},
            "spec": {"nodeName": node, "containers": [
                {"name": "main", "resources": {"limits": {"nvidia.com/gpu": str(len(devices))}}}]},
            "status": {"phase": "Running"}}


def check_shared(chromium, topofit):
    """A time-sliced node (8 A100s x 4 replicas) and a MIG node (8 x 7 1g.10gb), labelled as GFD labels them,
    with a pod on each: a box per physical GPU holding its devices, named as the API names them."""
    items = [shared_node("ts", 32, {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-SHARED", "nvidia.com/gpu.count": "8",
                                    "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}),
             shared_node("mig", 56, {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb",
                                     "nvidia.com/gpu.count": "56", "nvidia.com/mig.strategy": "single"}),
             shared_pod("train", "ts", [0, 4]), shared_pod("nb", "mig", [0, 1])]
    with tempfile.TemporaryDirectory() as tmp:
        snapshot = os.path.join(tmp, "shared.json")
        with open(snapshot, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}, f)
        with serve(topofit, "--snapshot", snapshot) as (_, ops, _pid):
            rows = node_rows(dump_dom(chromium, ops + "/ui"))
    check(sorted(rows) == ["mig", "ts"], f"both shared nodes are rows: {sorted(rows)}")
    for name, per_gpu, held, label in (("ts", 4, {0: "ml/train", 4: "ml/train"}, "replica 1"),
                                       ("mig", 7, {0: "ml/nb", 1: "ml/nb"}, "MIG 1g.10gb #1")):
        row = rows.get(name, "")
        boxes = re.findall(r'<div class="island physical" data-physical-gpu="(\d+)" data-devices="([^"]+)">', row)
        want = [(str(g), ",".join(str(g * per_gpu + r) for r in range(per_gpu))) for g in range(8)]
        check(boxes == want, f"{name}: a box per physical GPU holding its {per_gpu} devices: {boxes[:2]}...")
        who = {g: h for g, h in holders(row).items() if h}
        check(who == held, f"{name}: the pod's devices are drawn held by it: {who}")
        check(f'<span class="idx">{label}</span>' in row, f"{name}: a device is named {label!r}")
    check('data-sharing="mig-single">mig-single 1g.10gb: 8 GPUs x 7, 7 whole free<' in rows.get("mig", ""),
          "mig: the head says the mode, profile, GPUs and whole free GPUs")
    check('data-sharing="time-slicing">time-slicing: 8 GPUs x 4, 6 whole free<' in rows.get("ts", ""),
          "ts: two GPUs partly held, six whole free")


if __name__ == "__main__":
    sys.exit(main())

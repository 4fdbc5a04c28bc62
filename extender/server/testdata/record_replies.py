#!/usr/bin/env python3
"""Records what `topofit serve` answers, on its embedded demo cluster, to a fixed sequence of requests.

golden_replies_test.cc replays the same requests against the current build and requires the same
status and the same bytes. Regenerate only when a reply is meant to change, and say why in the commit:
    build/extender/cli/topofit serve --listen 127.0.0.1:18931 &
    extender/server/testdata/record_replies.py http://127.0.0.1:18931 > extender/server/testdata/demo-replies.jsonl
"""
import json
import sys
import urllib.error
import urllib.request

NAMES = ["dgx-v100-1", "dgx-v100-2", "a100-1", "pcie-1", "pcie-4x-1"]


def pod(name, gpus, annotations=None, cpu=None, requests=None, uid=None):
    limits = {"nvidia.com/gpu": str(gpus)} if gpus is not None else {}
    resources = {"limits": limits}
    if cpu:
        resources["requests"] = {"cpu": cpu}
    if requests is not None:
        resources.setdefault("requests", {}).update(requests)
    return {"metadata": {"name": name, "namespace": "golden", "uid": uid or "uid-" + name,
                         "annotations": annotations or {}},
            "spec": {"containers": [{"name": "c", "resources": resources}]}, "status": {}}


def node(name):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"nvidia.com/gpu": "8"}}}


def requests():
    args = lambda p, names=NAMES: {"Pod": p, "Nodes": None, "NodeNames": names}
    for n, g in [("one", 1), ("two", 2), ("four", 4), ("eight", 8), ("nine", 9)]:
        yield "POST", "/scheduler/filter", json.dumps(args(pod(n, g)))
        yield "POST", "/scheduler/prioritize", json.dumps(args(pod(n, g)))
    req = pod("req", 4, {"topofit.io/topology-policy": "required", "topofit.io/min-link": "NV"})
    yield "POST", "/scheduler/filter", json.dumps(args(req))
    yield "POST", "/scheduler/prioritize", json.dumps(args(req))
    yield "POST", "/scheduler/filter", json.dumps(args(pod("bad", 2, {"topofit.io/topology-policy": "sometimes"})))
    yield "POST", "/scheduler/filter", json.dumps(args(pod("mismatch", 2, requests={"nvidia.com/gpu": "1"})))
    yield "POST", "/scheduler/filter", json.dumps(args(pod("cpu-only", None, cpu="2")))
    yield "POST", "/scheduler/filter", json.dumps(args(pod("four", 4), ["dgx-v100-1", "no-such-node", "a100-1"]))
    # Full-node mode, and both lists at once.
    full = {"Pod": pod("full", 2), "Nodes": {"metadata": {}, "items": [node(n) for n in NAMES]}, "NodeNames": None}
    yield "POST", "/scheduler/filter", json.dumps(full)
    yield "POST", "/scheduler/prioritize", json.dumps(full)
    both = dict(full, NodeNames=["a100-1", "pcie-1"])
    yield "POST", "/scheduler/filter", json.dumps(both)
    # Bind what filter saw, then ask about it; bind an unknown pod.
    yield "POST", "/scheduler/filter", json.dumps(args(pod("bound", 4)))
    yield "POST", "/scheduler/bind", json.dumps({"PodName": "bound", "PodNamespace": "golden", "PodUID": "uid-bound",
                                                 "Node": "dgx-v100-2"})
    yield "GET", "/api/v1/pods/golden/bound", None
    yield "POST", "/scheduler/bind", json.dumps({"PodName": "ghost", "PodNamespace": "golden", "PodUID": "uid-ghost",
                                                 "Node": "a100-1"})
    yield "POST", "/scheduler/filter", json.dumps(args(pod("eight-again", 8)))
    # Preemption: meta victims (UIDs of the demo cluster's pods) and full victims.
    victims = {"Pod": pod("urgent", 8),
               "NodeNameToVictims": None,
               "NodeNameToMetaVictims": {"dgx-v100-1": {"Pods": [{"UID": "7c1d2e3f-0002-4b5c-8d9e-000000000001"}], "NumPDBViolations": 1},
                                         "a100-1": {"Pods": [], "NumPDBViolations": 0}}}
    yield "POST", "/scheduler/preempt", json.dumps(victims)
    # Refused bodies.
    yield "POST", "/scheduler/filter", "{not json"
    yield "POST", "/scheduler/filter", json.dumps({"Nodes": None, "NodeNames": NAMES})
    yield "POST", "/scheduler/prioritize", "[]"
    yield "POST", "/scheduler/bind", json.dumps({"PodName": "x"})
    yield "POST", "/scheduler/preempt", "null"
    # The query API.
    yield "GET", "/api/v1/nodes", None
    yield "GET", "/api/v1/nodes/dgx-v100-1", None
    yield "GET", "/api/v1/nodes/pcie-4x-1", None
    yield "GET", "/api/v1/nodes/nope", None
    yield "GET", "/api/v1/pods/ml/train-llm-0", None
    yield "POST", "/api/v1/explain", json.dumps(pod("why", 4))
    yield "POST", "/api/v1/explain", "metadata: {name: y, namespace: golden}\nspec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 2}}\n"
    yield "POST", "/api/v1/explain", "{]"


def main():
    base = sys.argv[1].rstrip("/")
    for method, path, body in requests():
        data = body.encode() if body is not None else None
        req = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(req) as r:
                status, text = r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read().decode()
        print(json.dumps({"method": method, "path": path, "body": body, "status": status, "response": text}))


if __name__ == "__main__":
    main()
